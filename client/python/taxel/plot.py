"""Plotting helpers (matplotlib, imported only when called; Debian: python3-matplotlib)."""
import numpy as np

__all__ = ["heatmap", "grid_image"]


def grid_image(result, sensor: str, channel: str = "force", env: int = 0, ground_truth: bool = False,
               component=None) -> np.ndarray:
    """The [rows, cols] image of one env of a grid sensor: for vector channels (force, torque,
    normal) the magnitude |v| (or one `component`, 0/1/2 = x/y/z of the link frame); for scalar
    channels (depth, area, contact, partner) the value. ValueError if the sensor is not a grid."""
    r = result[sensor]
    readings = r.ground_truth if ground_truth else r.measured
    if readings is None:
        raise ValueError(f"heatmap: the {'ground truth' if ground_truth else 'measured'} branch of {sensor!r} "
                         "was not read")
    a = readings[channel]
    if a.ndim == 4 and a.shape[-1] == 3:
        v = a[env].astype(np.float64)
        img = np.linalg.norm(v, axis=-1) if component is None else v[..., int(component)]
    elif a.ndim == 3:
        img = a[env].astype(np.float64)
    else:
        raise ValueError(f"heatmap: {sensor!r} is not a grid sensor (channel {channel!r} has shape {list(a.shape)})")
    return img


def readings_is_vector(result, sensor: str, channel: str, ground_truth: bool) -> bool:
    r = result[sensor]
    a = (r.ground_truth if ground_truth else r.measured)[channel]
    return a.ndim == 4 and a.shape[-1] == 3


def heatmap(result, sensor: str, channel: str = "force", env: int = 0, ax=None, ground_truth: bool = False,
            component=None, colorbar: bool = True, **imshow_kwargs):
    """Draws `grid_image(...)` with imshow (row 0 at the bottom, like the probe grid's +y) on `ax`
    (default: a new figure) and returns the AxesImage."""
    img = grid_image(result, sensor, channel, env, ground_truth, component)
    import matplotlib.pyplot as plt  # lazily: only the plot helper needs matplotlib
    if ax is None:
        _, ax = plt.subplots()
    imshow_kwargs.setdefault("origin", "lower")
    imshow_kwargs.setdefault("cmap", "viridis")
    im = ax.imshow(img, **imshow_kwargs)
    vector = readings_is_vector(result, sensor, channel, ground_truth)
    what = f"|{channel}|" if vector and component is None else channel if component is None \
        else f"{channel}[{'xyz'[int(component)]}]"
    ax.set_title(f"{sensor}: {what}, env {env}")
    ax.set_xlabel("col")
    ax.set_ylabel("row")
    if colorbar:
        ax.figure.colorbar(im, ax=ax)
    return im

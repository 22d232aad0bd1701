"""Isaac Lab -> Taxel: step a scene from an Articulation's `data.body_link_pose_w`.

    from taxel_adapters.isaaclab import IsaacLabAdapter

    robot = env.scene["robot"]                                  # an isaaclab Articulation
    adapter = IsaacLabAdapter(scene, robot.body_names)          # once, after create_scene
    ...
    r = adapter.step(robot.data.body_link_pose_w, dt=env.step_dt,            # every step
                     body_link_vel_w=robot.data.body_link_vel_w,
                     extra={"object": env.scene["object"].data.root_link_pose_w})
    r["left_pad"].force                                          # [num_envs, 16, 16, 3]

`body_link_pose_w` is [num_envs, num_bodies, 7]: the position of each body's link (actor) frame in
world, then its orientation quaternion. **Quaternion order**: Isaac Lab 2.x and earlier store
(w, x, y, z) — the default `quat_order="wxyz"` here; Isaac Lab 3.0 switched to (x, y, z, w): pass
`quat_order="xyzw"` there. Positions include each env's origin (env_spacing); Taxel's envs never
interact, so that is harmless, but terrain and static geometry must be given in the same world
frame.

The adapter matches each of the scene's moving links to a body of the articulation by its link
name (the part of "entity/link" after the '/'; `link_map` overrides that), once. Moving links the
articulation does not have (an object slot, a second robot) come from `extra` at each step: a
[num_envs, 7] pose per link (a RigidObject's `data.root_link_pose_w`), keyed by the full moving link
name or, for single-link entities, the entity name. Arrays may be torch tensors (on any device),
warp arrays or numpy arrays; torch is never imported.
"""
from typing import Dict, Mapping, Optional, Sequence

import numpy as np

import taxel
from taxel.tensors import as_numpy

__all__ = ["IsaacLabAdapter"]


def _real(a: np.ndarray) -> np.ndarray:
    return a if a.dtype in (np.float32, np.float64) else a.astype(np.float64)


class IsaacLabAdapter:
    """Gathers an Isaac Lab articulation's body poses (and optionally velocities) into the
    [E, L, 7] poses of a Taxel scene's moving links and steps the scene.

    Args:
      scene: the taxel.Scene (its `moving_links` order is the target order).
      body_names: the articulation's `body_names`, the order of `body_link_pose_w`'s second axis.
      quat_order: "wxyz" (Isaac Lab <= 2.x, the default) or "xyzw" (Isaac Lab >= 3.0).
      link_map: optional {moving link ("entity/link" or bare link name): body name} for links
        whose Isaac Lab body is named differently.

    Attributes: `body_index` [L] (the articulation body of each moving link, −1 for links that
    come from `extra`), `extra_links` (the moving links that need `extra`).
    """

    def __init__(self, scene: "taxel.Scene", body_names: Sequence[str], quat_order: str = "wxyz",
                 link_map: Optional[Mapping[str, str]] = None):
        self.scene = scene
        self.body_names = list(body_names)
        self.quat_order = quat_order
        by_name: Dict[str, int] = {}
        for i, name in enumerate(self.body_names):
            if name in by_name:
                raise ValueError(f"body_names: {name!r} appears twice")
            by_name[name] = i
        link_map = dict(link_map or {})
        self.moving_links = list(scene.moving_links)
        index = []
        for full in self.moving_links:
            bare = full.split("/", 1)[-1]
            wanted = link_map.get(full, link_map.get(bare, bare))
            if wanted not in by_name and (full in link_map or bare in link_map):
                raise ValueError(f"link_map: body {wanted!r} (for {full!r}) is not in body_names")
            index.append(by_name.get(wanted, -1))
        self.body_index = np.array(index, dtype=np.intp)
        self._art_slots = np.nonzero(self.body_index >= 0)[0]
        self._art_bodies = self.body_index[self._art_slots]
        self.extra_links = [self.moving_links[s] for s in np.nonzero(self.body_index < 0)[0]]

    # --------------------------------------------------------------------------------------------

    def _extra_for(self, link: str, extra: Optional[Mapping], what: str):
        entity = link.split("/", 1)[0]
        if extra is not None:
            for key in (link, entity):
                if key in extra:
                    return as_numpy(extra[key])
        raise ValueError(f"{what}: moving link {link!r} is not a body of the articulation ({self.body_names}); "
                         f"pass its [num_envs, {7 if what == 'extra' else 6}] array as {what}[{link!r}] "
                         f"(or {what}[{entity!r}])")

    def _gather(self, body_array, extra, width: int, what: str, extra_what: str, env_ids) -> np.ndarray:
        a = as_numpy(body_array)
        if a.ndim != 3 or a.shape[1] != len(self.body_names) or a.shape[2] != width:
            raise ValueError(f"{what}: expected shape [num_envs, {len(self.body_names)}, {width}], got {list(a.shape)}")
        rows = np.arange(a.shape[0]) if env_ids is None else np.asarray(as_numpy(env_ids), dtype=np.intp).reshape(-1)
        if not self.extra_links:
            return _real(a[np.ix_(rows, self.body_index)])  # one gather, one copy
        out = np.empty((len(rows), len(self.moving_links), width), dtype=_real(a[:0]).dtype)
        out[:, self._art_slots] = a[np.ix_(rows, self._art_bodies)]
        for slot in np.nonzero(self.body_index < 0)[0]:
            link = self.moving_links[slot]
            e = self._extra_for(link, extra, extra_what)
            if e.shape != (a.shape[0], width):
                raise ValueError(f"{extra_what}[{link!r}]: expected shape [{a.shape[0]}, {width}], got {list(e.shape)}")
            out[:, slot] = e[rows]
        return out

    def poses(self, body_link_pose_w, extra: Optional[Mapping] = None, env_ids=None) -> np.ndarray:
        """[E, L, 7] poses of the scene's moving links, in `scene.moving_links` order (float32 or
        float64 as given). `env_ids`: pick those rows of the [num_envs, ...] arrays."""
        return self._gather(body_link_pose_w, extra, 7, "body_link_pose_w", "extra", env_ids)

    def twists(self, body_link_vel_w, extra_vel: Optional[Mapping] = None, env_ids=None) -> np.ndarray:
        """[E, L, 6] twists from `body_link_vel_w` ([num_envs, num_bodies, 6]: linear velocity of the
        link frame's origin, then angular velocity, world axes — Taxel's twist layout)."""
        return self._gather(body_link_vel_w, extra_vel, 6, "body_link_vel_w", "extra_vel", env_ids)

    def step(self, body_link_pose_w, dt: float, body_link_vel_w=None, extra: Optional[Mapping] = None,
             extra_vel: Optional[Mapping] = None, env_ids=None, read=None, contacts=None,
             stream: Optional["taxel.StepStream"] = None) -> "taxel.StepResult":
        """Steps the scene (or `stream`, an open `scene.stream()`) with the gathered poses.

        Without `body_link_vel_w` Taxel differentiates the poses over `dt`. `env_ids`: step only
        those envs (rows of the full [num_envs, ...] arrays). `read`, `contacts`: as in
        taxel.Scene.step."""
        poses = self.poses(body_link_pose_w, extra, env_ids)
        twists = None if body_link_vel_w is None else self.twists(body_link_vel_w, extra_vel, env_ids)
        target = stream if stream is not None else self.scene
        return target.step(poses, twists=twists, dt=dt, env_ids=env_ids, quat_order=self.quat_order, read=read,
                           contacts=contacts)

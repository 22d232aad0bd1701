"""Newton -> Taxel: step a scene from a Newton `State.body_q`.

    from taxel_adapters.newton import NewtonAdapter

    model = builder.finalize()                     # e.g. one robot replicated into num_worlds worlds
    adapter = NewtonAdapter(scene, model.body_key, body_world=model.body_world)   # once
    ...
    r = adapter.step(state.body_q, dt=frame_dt)    # every step
    r["left_pad"].force                            # [num_worlds, 16, 16, 3]

Newton keeps every body of every world in one flat array: `body_q` is [body_count] `wp.transform`s,
i.e. [body_count, 7] floats — position (m, world) first, then the quaternion in (x, y, z, w)
order (Warp's convention). The adapter maps Taxel env e to Newton world e, finds once which
body of each world feeds each of the scene's moving links, and then gathers `body_q` into the
[E, L, 7] array of a step with `quat_order="xyzw"`.

Matching, per world: a body whose key equals the moving link's full name ("entity/link"), its bare
link name, or ends with "/<link name>" (USD paths such as "/World/envs/env_3/Robot/left_pad");
`link_map` overrides it ({moving link: body key}). Exactly one body of the world must match.
Worlds: `body_world` (the model's world index of each body; −1 = global bodies, never used for a
moving link), or, without it, bodies laid out world-major in equal blocks (what replicating one
builder produces). Arrays may be warp arrays (read with `.numpy()`), torch tensors or numpy arrays;
neither warp nor torch is imported.

Velocities are not taken from `body_qd`: Newton's spatial velocities refer to the centre of mass
(and their component order has changed between releases), while Taxel's twists are the velocity of
the link origin. Taxel differentiates the poses over `dt` instead; pass `twists=` yourself if you
have origin velocities.
"""
from typing import Mapping, Optional, Sequence

import numpy as np

import taxel
from taxel.tensors import as_numpy

__all__ = ["NewtonAdapter"]


class NewtonAdapter:
    """Gathers Newton's flat `body_q` into the [E, L, 7] poses of a Taxel scene's moving links.

    Args:
      scene: the taxel.Scene; its num_envs must equal the number of Newton worlds.
      body_key: the per-body names of the model (`model.body_key`), length body_count.
      body_world: optional [body_count] world index of each body (`model.body_world`).
      link_map: optional {moving link ("entity/link" or bare link name): body key}.

    Attribute `body_index` [E, L]: the Newton body of each (env, moving link).
    """

    quat_order = "xyzw"

    def __init__(self, scene: "taxel.Scene", body_key: Sequence[str], body_world=None,
                 link_map: Optional[Mapping[str, str]] = None):
        self.scene = scene
        keys = [str(k) for k in body_key]
        n_bodies, n_envs = len(keys), scene.num_envs
        if body_world is not None:
            world = np.asarray(as_numpy(body_world), dtype=np.int64).reshape(-1)
            if world.shape != (n_bodies,):
                raise ValueError(f"body_world: expected {n_bodies} values (one per body), got {world.size}")
        else:
            if n_bodies % n_envs:
                raise ValueError(f"body_key: {n_bodies} bodies do not split into {n_envs} equal worlds; "
                                 "pass body_world")
            world = np.arange(n_bodies) // (n_bodies // n_envs)
        link_map = dict(link_map or {})
        self.moving_links = list(scene.moving_links)
        self.body_index = np.empty((n_envs, len(self.moving_links)), dtype=np.intp)
        for slot, full in enumerate(self.moving_links):
            bare = full.split("/", 1)[-1]
            wanted = link_map.get(full, link_map.get(bare))
            if wanted is not None:
                match = np.array([k == wanted for k in keys])
            else:
                match = np.array([k in (full, bare) or k.endswith("/" + bare) for k in keys])
            for e in range(n_envs):
                hits = np.nonzero(match & (world == e))[0]
                if len(hits) != 1:
                    what = f"body key {wanted!r}" if wanted is not None else f"a body key like {bare!r}"
                    found = ", ".join(repr(keys[h]) for h in hits) if len(hits) else "none"
                    raise ValueError(f"world {e}: expected exactly one body with {what} for the moving link "
                                     f"{full!r}, found {found}")
                self.body_index[e, slot] = hits[0]

    def poses(self, body_q, env_ids=None) -> np.ndarray:
        """[E, L, 7] poses (xyzw) of the scene's moving links from `body_q` ([body_count, 7] or
        [body_count] transforms); `env_ids`: only those envs (worlds), in that order."""
        q = as_numpy(body_q)
        if q.ndim == 1 and q.dtype.names is None and q.size % 7 == 0:
            q = q.reshape(-1, 7)
        if q.ndim != 2 or q.shape[1] != 7:
            raise ValueError(f"body_q: expected shape [body_count, 7], got {list(q.shape)}")
        index = self.body_index if env_ids is None else self.body_index[np.asarray(as_numpy(env_ids), dtype=np.intp)]
        out = q[index]  # one gather: [E, L, 7]
        return out if out.dtype in (np.float32, np.float64) else out.astype(np.float64)

    def step(self, body_q, dt: float, env_ids=None, twists=None, read=None, contacts=None,
             stream: Optional["taxel.StepStream"] = None) -> "taxel.StepResult":
        """Steps the scene (or `stream`, an open `scene.stream()`) with the gathered poses,
        quat_order "xyzw". `read`, `contacts`, `twists`: as in taxel.Scene.step."""
        target = stream if stream is not None else self.scene
        return target.step(self.poses(body_q, env_ids), twists=twists, dt=dt, env_ids=env_ids,
                           quat_order=self.quat_order, read=read, contacts=contacts)

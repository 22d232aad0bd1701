"""Thin adapters from simulators' own pose buffers to `taxel.Scene.step`.

    from taxel_adapters.isaaclab import IsaacLabAdapter   # Articulation.data.body_link_pose_w
    from taxel_adapters.newton import NewtonAdapter       # State.body_q

Neither imports the simulator (nor torch or warp): arrays are read through duck typing
(`taxel.tensors.as_numpy`: `.detach().cpu()` for torch tensors, `.numpy()` for warp arrays,
`numpy.asarray` otherwise). Each adapter works out once which of the simulator's bodies feed the
scene's moving links and then gathers them every step into the `[E, L, 7]` array Taxel wants.
"""

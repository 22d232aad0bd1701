"""Runs inside the wheel's venv (python -I, cwd a temporary directory): the README's Python quick
start against a real taxel-server, with `taxel` imported from the installed wheel.

    quickstart_in_venv.py TAXEL_SERVER QUICKSTART_PY OUT_NPZ

QUICKSTART_PY is the README block as written; its target "127.0.0.1:50051" is replaced by the
LocalServer's. What the block computed (its `grid`, `poses`, the first step's and the last
stream step's readings) and where `taxel` came from are saved to OUT_NPZ for test_wheel.py,
which holds the expected numbers.
"""
import importlib.metadata
import json
import sys

import numpy as np

import taxel

README_TARGET = '"127.0.0.1:50051"'


def main(server_binary: str, quickstart_path: str, out_path: str) -> None:
    with open(quickstart_path, encoding="utf-8") as f:
        code = f.read()
    if code.count(README_TARGET) != 1:
        raise SystemExit(f"the quick start should name the server {README_TARGET} once")
    with taxel.LocalServer(server_binary, threads=2) as server:
        code = code.replace(README_TARGET, repr(server.target))
        ns = {"__name__": "__quickstart__"}
        # The block overwrites `r` in its stream loop: keep the first step's result too.
        before, stream, after = code.partition("with scene.stream() as s:")
        if not stream:
            raise SystemExit("the quick start should end with a `with scene.stream() as s:` loop")
        exec(compile(before, "README quick start (first part)", "exec"), ns)
        first = ns["r"]
        exec(compile(stream + after, "README quick start (stream)", "exec"), ns)
        last = ns["r"]
        info = ns["scene"].info()
        ns["client"].close()
    meta = importlib.metadata.metadata("taxel")
    facts = {
        "taxel_file": taxel.__file__,
        "version": taxel.__version__,
        "dist_version": importlib.metadata.version("taxel"),
        "license": meta["License"],
        "requires": importlib.metadata.requires("taxel"),
        "moving_links": list(ns["scene"].moving_links),
        "first_step": int(first.step),
        "last_step": int(last.step),
        "num_envs": int(info.num_envs),
        "env_ids_first": [int(first.env_ids[0]), int(first.env_ids[-1]), len(first.env_ids)],
    }
    np.savez(out_path, grid=np.asarray(ns["grid"]), poses=np.asarray(ns["poses"]),
             first_left_force=first["left_pad"].force, first_left_torque=first["left_pad"].torque,
             first_right_force=first["right_pad"].force, last_left_force=last["left_pad"].force,
             last_left_torque=last["left_pad"].torque, facts=np.array(json.dumps(facts)))


if __name__ == "__main__":
    main(*sys.argv[1:4])

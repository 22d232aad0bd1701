"""Steps and reads of any size: one logical call split by env ranges when its request or its
readings would exceed the message limit (the server's `max_message_bytes`, or this client's if
smaller).

The client estimates the bytes of one env's request rows (poses, twists, reported contacts) and
of one env's readings (the sensors, channels and branches asked for, the sparse mask, the contact
matrix) from the scene's info, as the server estimates a response before it steps. When the whole
call does not fit in 90 % of the limit, it is sent as K parts over consecutive ranges of the
call's envs; parts after the first carry `continues_step`, so the scene's step count advances
once. The results are joined along the env axis in the caller's order. A part the server still
refuses as too large (RESOURCE_EXHAUSTED on `read`; a refused step changes nothing) is halved and
sent again.

Cost: K round trips instead of one, each evaluating only its envs (the total work is the same),
and one copy of the parts into the joined arrays.
"""
import math
from typing import Callable, List, Sequence, Tuple

import numpy as np

from taxel._pb import service_pb2
from taxel.errors import ResourceExhaustedError
from taxel.info import SceneInfo
from taxel.results import ContactMatrix, Readings, SensorResult, StepResult, StepTiming
from taxel.tensors import as_numpy

# Share of the limit a part may fill: the estimates below are upper bounds for the tensors, and
# this leaves room for what they do not count exactly (names, varints).
FILL = 0.9
_PER_READING = 192  # sensor name, id, branch, framing
_PER_TENSOR = 64    # map entry, key, dtype, shape, length prefixes
_FIXED = 1024       # scene name, sequence, step, timing, read spec


def _itemsize(x) -> int:
    """Bytes per value of poses/twists on the wire, read from the dtype's name (numpy, torch, warp)
    without converting the array: 4 for float32, else 8 (what encode_real sends)."""
    return 4 if "float32" in str(getattr(x, "dtype", "")) else 8


def reading_bytes(info: SceneInfo, read: "service_pb2.ReadSpec", history: int = 0) -> Tuple[int, int]:
    """(bytes per env, fixed bytes) of the readings `read` selects, as the server counts them."""
    if read.none:
        per_env, fixed = 0, _FIXED
    else:
        names = set(read.sensors) or set(info.sensors)
        channels = set(read.channels)
        branches = max(1, len(read.branches))
        per_env, fixed = 5, _FIXED
        for name, sensor in info.sensors.items():
            if name not in names:
                continue
            fixed += _PER_READING * branches
            for channel, out in sensor.outputs.items():
                if channels and channel not in channels:
                    continue
                elements = math.prod(out.shape[1:]) * max(1, history)
                per_env += branches * (elements * out.dtype.itemsize + (elements + 7) // 8 * read.sparse)
                fixed += _PER_TENSOR * branches
                # ReadSpec.gradients: 2 × 6 float32 per value of the depth (probes) or force (taxels).
                taxel = sensor.kind == "kinematic_taxel"
                if read.gradients and ((channel == "depth" and not taxel) or (channel == "force" and taxel)):
                    per_env += branches * (elements * 12 * 4 + (elements * 12 + 7) // 8 * read.sparse)
                    fixed += _PER_TENSOR * branches
    if read.contact_matrix and info.contact_matrix is not None:
        cm = info.contact_matrix
        per_env += 5 + len(cm.rows) * len(cm.columns) * 3 * 4 * ((2 if cm.friction else 1) + (12 if cm.gradients else 0))
        fixed += 256 + sum(len(n) + 8 for n in cm.rows + cm.columns)
    return per_env, fixed


def envs_per_part(limit: int, per_env: int, fixed: int, num_envs: int) -> int:
    """How many envs one message of at most FILL × `limit` bytes holds (>= 1; num_envs if all)."""
    room = FILL * limit - fixed
    if per_env <= 0 or per_env * num_envs <= room:
        return num_envs
    return max(1, int(room // per_env))


def rows(x, what: str, total: int, link_count: int, width: int) -> np.ndarray:
    """x ([E, L, width] or flat [E·L, width]) as [E, L, width], checked against E = `total`."""
    a = as_numpy(x)
    if a.ndim == 2 and a.shape[0] == total * link_count and a.shape[0] != total:
        a = a.reshape(total, link_count, a.shape[1])
    if a.ndim < 1 or a.shape[0] != total:
        raise ValueError(f"{what}: expected {total} envs on the first axis ([E, {link_count}, {width}] "
                         f"or [E·{link_count}, {width}]), got shape {list(a.shape)}")
    return a


def in_parts(num_envs: int, size: int, send: Callable[[int, int, bool], StepResult]) -> StepResult:
    """Calls `send(start, count, first)` over consecutive env ranges of `size` (halving a range
    the server refuses as too large) and joins the results."""
    results: List[StepResult] = []
    start = 0
    while start < num_envs:
        count = min(size, num_envs - start)
        try:
            results.append(send(start, count, not results))
        except ResourceExhaustedError as e:
            if not too_large(e) or count == 1:
                raise
            size = max(1, count // 2)
            continue
        start += count
    return join(results)


def _cat(parts: Sequence[np.ndarray]) -> np.ndarray:
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def join_sensors(results: Sequence[StepResult], merge: Callable[[list], np.ndarray]) -> dict:
    """The sensors of `results` with every channel's arrays merged by `merge` (a list of the
    parts' arrays -> one array)."""
    sensors = {}
    for name, first in results[0].sensors.items():
        branches = {}
        for branch in ("measured", "ground_truth"):
            if getattr(first, branch) is None:
                continue
            channels = {ch: merge([getattr(r[name], branch)[ch] for r in results]) for ch in getattr(first, branch)}
            branches[branch] = Readings(branch, channels)
        sensors[name] = SensorResult(name, first.sensor_id, branches.get("measured"), branches.get("ground_truth"))
    return sensors


def join(results: List[StepResult]) -> StepResult:
    """One StepResult of parts over consecutive env ranges: arrays concatenated along the env
    axis, the last part's step, the phases' times summed."""
    last = results[-1]
    sensors = join_sensors(results, _cat)
    timing = None
    if last.timing is not None:
        timing = StepTiming(*(sum(getattr(r.timing, f) for r in results)
                              for f in ("decode_us", "evaluate_us", "encode_us", "queue_us")))
    matrix = None
    if last.contact_matrix is not None:
        parts = [r.contact_matrix for r in results]
        friction = None if parts[0].friction is None else _cat([m.friction for m in parts])
        gradient = None if parts[0].gradient is None else _cat([m.gradient for m in parts])
        matrix = ContactMatrix(_cat([m.env_ids for m in parts]), parts[0].rows, parts[0].columns,
                               _cat([m.normal for m in parts]), friction, gradient)
    return StepResult(last.step, _cat([r.env_ids for r in results]), sensors, timing, last.sequence, matrix)


def contacts_of(contacts, envs: np.ndarray):
    """The reported contacts whose env is in `envs` (a dict or a ReportedContacts; names kept)."""
    from taxel.contact import ReportedContacts
    if isinstance(contacts, dict):
        contacts = ReportedContacts(**contacts)
    force = as_numpy(contacts.force)
    k = force.shape[0] if force.ndim == 2 else 0
    env = np.broadcast_to(np.asarray(contacts.env), (k,))
    keep = np.isin(env, envs)

    def pick(x):  # link indices or names, per contact or one for all
        a = np.asarray(x)
        return np.broadcast_to(a, (k,))[keep] if a.ndim == 0 else a[keep]

    return ReportedContacts(env[keep], pick(contacts.body), pick(contacts.partner), force[keep],
                            None if contacts.friction is None else as_numpy(contacts.friction)[keep])


def request_bytes_per_env(links: int, poses, twists, contacts, num_envs: int) -> int:
    """Upper bound of one env's bytes in a Step request: its poses and twists rows, and its share
    of the reported contacts (their largest count per env)."""
    n = links * 7 * _itemsize(poses) + (links * 6 * _itemsize(twists) if twists is not None else 0) + 5
    if contacts is not None:
        env = np.asarray(contacts["env"] if isinstance(contacts, dict) else contacts.env)
        force = as_numpy(contacts["force"] if isinstance(contacts, dict) else contacts.force)
        if env.ndim == 0:  # one env for all: every contact in it
            most = force.shape[0] if force.ndim == 2 else 0
        else:
            valid = env[env >= 0].astype(np.int64)
            most = int(np.bincount(valid).max()) if valid.size else 0
        n += most * (3 * 4 + 6 * 8)  # env, body, partner (int32) + force and friction (float64)
    return n


def limit_of(client, ask_server: bool = False) -> int:
    """The message limit of `client`'s calls: its own max_message_bytes, or the server's when that
    is smaller and known. `ask_server` asks the server once (after it refused a call as too large)."""
    own = int(getattr(client, "max_message_bytes", 0) or 0)
    server = getattr(client, "_server_message_limit", None)
    if server is None and ask_server:
        try:
            server = int(client.server_info().limits.max_message_bytes)
        except Exception:  # a server that cannot say: this client's own limit
            server = 0
        client._server_message_limit = server
    limits = [v for v in (own, server or 0) if v > 0]
    return min(limits) if limits else 64 << 20


def too_large(err: ResourceExhaustedError) -> bool:
    """A refusal of a call's size: the server's estimate of its readings ("read"), or the
    transport's limit on the request ("Received message larger than max")."""
    return err.field == "read" or "larger than max" in err.message

"""StepResult.from_wire (taxel/_wire.py): a StepResponse read from its serialized bytes must give
exactly what the protobuf path gives (`from_proto(StepResponse.FromString(bytes))`), with the
arrays as views into the bytes; also for encodings protobuf itself does not produce (unpacked
repeated fields, unknown fields, negative int32 values), and malformed bytes are errors."""
import struct

import numpy as np
import pytest

import taxel
from conftest import BALL_Z, pad_and_ball_spec, poses_xyzw
from taxel._pb import service_pb2, tensor_pb2
from taxel._wire import WireError, _packed_varints
from taxel.results import StepResult


def assert_same_result(a: StepResult, b: StepResult):
    assert (a.step, a.sequence, a.timing) == (b.step, b.sequence, b.timing)
    assert a.env_ids.dtype == b.env_ids.dtype == np.int32
    np.testing.assert_array_equal(a.env_ids, b.env_ids)
    assert list(a) == list(b)
    for name in a:
        assert a[name].sensor_id == b[name].sensor_id
        for branch in ("measured", "ground_truth"):
            ra, rb = getattr(a[name], branch), getattr(b[name], branch)
            assert (ra is None) == (rb is None)
            if ra is None:
                continue
            assert list(ra) == list(rb)  # the same channels in the same order
            for channel in ra:
                assert ra[channel].dtype == rb[channel].dtype and ra[channel].shape == rb[channel].shape
                np.testing.assert_array_equal(ra[channel], rb[channel])
                assert not ra[channel].flags.writeable
    assert (a.contact_matrix is None) == (b.contact_matrix is None)
    if a.contact_matrix is not None:
        ma, mb = a.contact_matrix, b.contact_matrix
        assert (ma.rows, ma.columns) == (mb.rows, mb.columns)
        np.testing.assert_array_equal(ma.env_ids, mb.env_ids)
        np.testing.assert_array_equal(ma.normal, mb.normal)
        assert (ma.friction is None) == (mb.friction is None)
        if ma.friction is not None:
            np.testing.assert_array_equal(ma.friction, mb.friction)


def both_ways(raw: bytes):
    return StepResult.from_wire(raw), StepResult.from_proto(service_pb2.StepResponse.FromString(raw))


def test_real_responses_read_the_same_both_ways(client, scene_name):
    scene = client.create_scene(pad_and_ball_spec(scene_name, num_envs=3), quat_order="xyzw", dt=0.01)
    for read, env_ids, centres in [
            (None, None, [(0, 0, BALL_Z), (0, 0, 1), (0.01, 0, BALL_Z)]),
            (taxel.Read(ground_truth=True), [2, 0], [(0, 0, BALL_Z), (0, 0, BALL_Z + 0.001)]),
            (taxel.Read(sensors=["depth"], channels=["normal", "depth", "partner"]), [1], [(0, 0, BALL_Z)]),
            (False, None, [(0, 0, BALL_Z)] * 3)]:
        req = scene._step_request(poses_xyzw(centres), None, None, env_ids, None, read)
        raw = client._rpc("Step", req, raw=True)
        assert isinstance(raw, bytes)
        assert_same_result(*both_ways(raw))


def test_contact_matrix_of_a_step_reads_the_same_both_ways(client, scene_name):
    spec = taxel.SceneSpec(scene_name, num_envs=2, contact_bodies="all", contact_source="reported",
                           contact_friction=True)
    spec.robot("r").link("foot", shapes=[taxel.Sphere(0.05)])
    spec.terrain(shapes=[taxel.HalfSpace()])
    scene = client.create_scene(spec, quat_order="xyzw", dt=0.01)
    p = np.zeros((2, 1, 7))
    p[..., 6] = 1
    req = scene._step_request(p, None, None, [1, 0], None, taxel.Read(contact_matrix=True),
                              {"env": [1], "body": ["foot"], "partner": ["terrain"], "force": [[0, 0, 3.5]],
                               "friction": [[0.25, 0, 0]]})
    a, b = both_ways(client._rpc("Step", req, raw=True))
    assert_same_result(a, b)
    np.testing.assert_array_equal(a.contact_matrix.normal[:, 0, 0], [(0, 0, 3.5), (0, 0, 0)])
    np.testing.assert_array_equal(a.contact_matrix.friction[0, 0, 0], (0.25, 0, 0))


def test_reads_and_contact_matrix_slices_read_the_same_both_ways(client, scene_name):
    from taxel.results import ContactMatrix
    spec = pad_and_ball_spec(scene_name, num_envs=2)
    spec.set_contact_matrix("all", partners=["object/ball"], friction=True)
    spec.entities[0].links[0].add_shape(taxel.Box((0.02, 0.02, 0.001), pos=(0, 0, -0.001)))  # the pad's body
    scene = client.create_scene(spec, quat_order="xyzw", dt=0.01)
    scene.step(poses_xyzw([(0, 0, BALL_Z), (0.005, 0, BALL_Z)]))
    req = service_pb2.ReadSensorsRequest(scene=scene_name, env_ids=[1, 0])
    req.read.branches[:] = [service_pb2.MEASURED, service_pb2.GROUND_TRUTH]
    raw = client._rpc("ReadSensors", req, raw=True)
    assert_same_result(StepResult.from_wire(raw, read=True),
                       StepResult.from_proto(service_pb2.ReadSensorsResponse.FromString(raw)))
    req = service_pb2.GetContactMatrixRequest(scene=scene_name, env_ids=[1, 0], friction=True)
    raw = client._rpc("GetContactMatrix", req, raw=True)
    a = ContactMatrix.from_wire(raw)
    b = ContactMatrix.from_proto(service_pb2.GetContactMatrixResponse.FromString(raw))
    assert (a.rows, a.columns, a.env_ids.tolist()) == (b.rows, b.columns, [1, 0]) == (["pad"], ["object/ball"], [1, 0])
    np.testing.assert_array_equal(a.normal, b.normal)
    np.testing.assert_array_equal(a.friction, b.friction)
    assert a.normal[0, 0, 0, 2] < 0  # the ball pushes the pad down


# -------------------------------------------------------------------------------------------------
# Hand-made encodings


def varint(v: int) -> bytes:
    v &= (1 << 64) - 1  # negative int32/int64: 64-bit two's complement, 10 bytes
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(number: int, wire: int) -> bytes:
    return varint(number << 3 | wire)


def ld(number: int, payload: bytes) -> bytes:
    return key(number, 2) + varint(len(payload)) + payload


def test_unpacked_fields_unknown_fields_and_negative_ids():
    # Tensor [2] float32 with its shape unpacked (one key per dimension) and an unknown field 9;
    # a reading with sensor_id −1 (a 10-byte varint); env_ids unpacked, 300 needs two bytes; the
    # response also carries unknown fields of every wire type.
    data = struct.pack("<2f", 1.5, -2.0)
    tensor = key(1, 0) + varint(tensor_pb2.FLOAT32) + key(2, 0) + varint(1) + key(2, 0) + varint(2) + \
        key(9, 0) + varint(7) + ld(3, data)
    entry = ld(1, b"force") + ld(2, tensor)
    reading = ld(1, b"skin") + key(2, 0) + varint(-1) + ld(4, entry)
    timing = key(2, 1) + struct.pack("<d", 12.5)
    unknown = key(20, 0) + varint(5) + key(21, 1) + bytes(8) + ld(22, b"xyz") + key(23, 5) + bytes(4)
    head = key(3, 0) + varint(7) + key(4, 0) + varint(300) + unknown
    # An unknown field of 0–3 bytes in front puts the tensor's data at a multiple of 4 (so the
    # array can be a view; see the alignment test below).
    raw = next(r for r in (ld(24, bytes(pad)) + head + ld(5, reading) + ld(6, timing) for pad in range(4))
               if r.index(data) % 4 == 0)
    a, b = both_ways(raw)
    assert_same_result(a, b)
    assert a.step == 7 and list(a.env_ids) == [300] and a["skin"].sensor_id == -1
    assert a.timing.evaluate_us == 12.5
    assert a["skin"].force.shape == (1, 2) and a["skin"].force.tolist() == [[1.5, -2.0]]
    # The view is into `raw` itself.
    start = np.frombuffer(raw, np.uint8).ctypes.data
    assert start <= a["skin"].force.ctypes.data < start + len(raw)


def test_arrays_are_aligned_even_when_their_bytes_are_not():
    # A float32 Tensor whose data start 1, 2 or 3 bytes past a multiple of 4 in the message (an
    # unknown field of growing length shifts it): the array is still aligned and equal.
    data = struct.pack("<3f", 1.0, 2.0, 3.0)
    for pad in range(4):
        tensor = key(1, 0) + varint(tensor_pb2.FLOAT32) + ld(2, varint(3)) + ld(15, bytes(pad)) + ld(3, data)
        raw = ld(5, ld(1, b"s") + ld(4, ld(1, b"depth") + ld(2, tensor)))
        a = StepResult.from_wire(raw)["s"].depth
        assert a.flags.aligned and a.tolist() == [1.0, 2.0, 3.0] and not a.flags.writeable


def test_packed_varints_decode_like_protobuf():
    values = [0, 1, 127, 128, 300, 16383, 16384, 2 ** 31 - 1, -1, -(2 ** 31), 2 ** 62]
    payload = b"".join(varint(v) for v in values)
    got = _packed_varints(payload, 0, len(payload))
    assert got.dtype == np.int64 and got.tolist() == values
    msg = service_pb2.StepResponse(env_ids=[0, 5, 200, 1023, 70000])
    assert StepResult.from_wire(msg.SerializeToString()).env_ids.tolist() == [0, 5, 200, 1023, 70000]


@pytest.mark.parametrize("raw", [
    key(3, 0) + b"\x80",                      # varint cut short
    key(5, 2) + varint(5) + b"\x0a",         # length past the end
    key(3, 3) + b"\x00",                      # wire type 3 (groups): not in proto3
    key(4, 2) + varint(1) + b"\x80",          # packed run ending inside a varint
])
def test_malformed_bytes_are_errors(raw):
    with pytest.raises(WireError):
        StepResult.from_wire(raw)


def test_a_tensor_whose_bytes_do_not_match_its_shape_is_an_error():
    tensor = key(1, 0) + varint(tensor_pb2.FLOAT32) + ld(2, varint(3)) + ld(3, bytes(8))
    raw = ld(5, ld(1, b"s") + ld(4, ld(1, b"force") + ld(2, tensor)))
    with pytest.raises(ValueError, match="needs 12 bytes, got 8"):
        StepResult.from_wire(raw)


def test_expand_sparse_by_hand():
    from taxel.tensors import expand_sparse
    # Elements 1, 3 (−0.0 is kept: its sign bit is set), 7 and 8 of 9 are stored:
    # mask byte 0 = 2 + 8 + 128 = 0x8A, byte 1 = 0x01.
    values = np.array([1.5, -0.0, 2.0, 3.0], np.float32).tobytes()
    a = expand_sparse(values, bytes([0x8A, 0x01]), np.dtype("<f4"), (3, 3))
    expected = np.array([[0, 1.5, 0], [-0.0, 0, 0], [0, 2.0, 3.0]], np.float32)
    assert a.tobytes() == expected.tobytes()  # bit for bit, the sign of −0.0 included
    with pytest.raises(ValueError, match="2-byte mask"):
        expand_sparse(values, bytes([0x8A]), np.dtype("<f4"), (3, 3))
    with pytest.raises(ValueError, match="past the last element"):
        expand_sparse(values, bytes([0x8A, 0x03]), np.dtype("<f4"), (3, 3))
    with pytest.raises(ValueError, match="mask bits"):
        expand_sparse(values[:8], bytes([0x8A, 0x01]), np.dtype("<f4"), (3, 3))


def test_sparse_readings_expand_to_the_dense_ones(client, scene_name):
    scene = client.create_scene(pad_and_ball_spec(scene_name, num_envs=3), quat_order="xyzw", dt=0.01)
    centres = [(0, 0, BALL_Z), (0, 0, 1), (0.01, 0, BALL_Z)]  # env 1 out of contact
    req = scene._step_request(poses_xyzw(centres), None, None, None, None,
                              taxel.Read(ground_truth=True, sparse=True))
    raw = client._rpc("Step", req, raw=True)
    msg = service_pb2.StepResponse.FromString(raw)
    masks = [t.nonzero_mask for r in msg.readings for t in r.channels.values()]
    assert masks and all(masks)  # every tensor came in the sparse form
    dense = scene.read(ground_truth=True, sparse=False)  # the same state, dense
    assert not service_pb2.ReadSensorsResponse.FromString(client._rpc(
        "ReadSensors", service_pb2.ReadSensorsRequest(scene=scene_name), raw=True)).readings[0].channels["depth"].nonzero_mask
    compared = []
    for sparse in (StepResult.from_wire(raw), StepResult.from_proto(msg), scene.read(ground_truth=True, sparse=True)):
        assert list(sparse) == list(dense)
        for name in dense:
            for branch in ("measured", "ground_truth"):
                rs, rd = getattr(sparse[name], branch), getattr(dense[name], branch)
                assert list(rs) == list(rd)
                for channel in rd:
                    assert rs[channel].dtype == rd[channel].dtype and rs[channel].shape == rd[channel].shape
                    assert rs[channel].tobytes() == rd[channel].tobytes()
                    compared.append(rd[channel].ravel().astype(np.float64))
    values = np.concatenate(compared)
    assert (values != 0).any() and (values == 0).any()  # zeros and nonzeros both compared


def test_the_sparse_form_is_the_clients_default(client, scene_name, monkeypatch):
    scene = client.create_scene(pad_and_ball_spec(scene_name, num_envs=1), quat_order="xyzw", dt=0.01)
    poses = poses_xyzw([(0, 0, BALL_Z)])
    assert client.sparse_readings
    # This scene's readings are small: 3 sensors × 9 probes, (3+3) + (1+3+1+1) + (1+1) values of
    # 4 bytes (contact: 1 byte) per probe = 9 · (24 + 24 + 5) = 477 bytes per env; the default
    # asks for the sparse form from SPARSE_MIN_BYTES (64 KiB) of readings on.
    assert scene._sparse_default(None) is False
    assert scene._sparse_default(list(range(138))) is True   # 138 · 477 = 65,826 ≥ 65,536
    assert scene._sparse_default(list(range(137))) is False  # 137 · 477 = 65,349
    assert not scene._step_request(poses, None, None, None, None, None).read.sparse
    monkeypatch.setattr(taxel.scene, "SPARSE_MIN_BYTES", 0)
    for read, expected in [(None, True), (taxel.Read(), True), ({"ground_truth": True}, True),
                           (taxel.Read(sparse=False), False), (False, False),
                           (service_pb2.ReadSpec(), False)]:  # a proto is taken as it is
        assert scene._step_request(poses, None, None, None, None, read).read.sparse == expected, read
    with taxel.Client(client.target, sparse_readings=False) as dense_client:
        other = dense_client.scene(scene_name)
        other.quat_order, other.dt = "xyzw", 0.01
        assert not other._step_request(poses, None, None, None, None, None).read.sparse
        assert other._step_request(poses, None, None, None, None, taxel.Read(sparse=True)).read.sparse

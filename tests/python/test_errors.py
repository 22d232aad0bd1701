"""Error mapping: gRPC codes to TaxelError subclasses, BadRequest field violations, client-side
argument errors."""
import grpc
import numpy as np
import pytest

import taxel
from conftest import BALL_Z, pad_and_ball_spec, poses_xyzw
from taxel._pb import error_details_pb2, status_pb2
from taxel.errors import from_rpc_error


@pytest.fixture
def scene(client, scene_name):
    return client.create_scene(pad_and_ball_spec(scene_name, num_envs=2))


def good_poses():
    return poses_xyzw([(0, 0, BALL_Z), (0, 0, 1)])


@pytest.mark.parametrize("kwargs, field, expected", [
    # One moving link too few: [2, 1, 7] instead of [2, 2, 7].
    (dict(poses=good_poses()[:, :1]), "poses", "expected shape [2, 2, 7] (or [4, 7]), got [2, 1, 7]"),
    (dict(poses=good_poses(), dt=0.0), "dt", "expected a finite value > 0, got 0"),
    (dict(poses=good_poses(), twists=np.zeros((2, 2, 3))), "twists", "expected shape [2, 2, 6]"),
    (dict(poses=good_poses()[:1], env_ids=[0, 0]), "poses", "expected shape [2, 2, 7]"),
])
def test_bad_steps_name_the_field(scene, kwargs, field, expected):
    kwargs.setdefault("dt", 0.01)
    with pytest.raises(taxel.InvalidArgumentError) as e:
        scene.step(quat_order="xyzw", **kwargs)
    err = e.value
    assert isinstance(err, taxel.TaxelError) and isinstance(err, ValueError)
    assert err.code == grpc.StatusCode.INVALID_ARGUMENT
    assert err.field == field and err.field_violations[0].field == field
    assert expected in err.field_violations[0].description
    assert str(err).startswith(f"INVALID_ARGUMENT: {field}: ") and expected in str(err)


def test_zero_quaternion_names_the_pose_value(scene):
    poses = good_poses()
    poses[1, 0, 3:] = 0  # env 1, link 0: a zero quaternion
    with pytest.raises(taxel.InvalidArgumentError) as e:
        scene.step(poses, dt=0.01, quat_order="xyzw")
    assert e.value.field.startswith("poses")
    assert "norm" in e.value.message or "quaternion" in e.value.message


def test_env_out_of_range(scene):
    with pytest.raises(taxel.OutOfRangeError) as e:
        scene.read(env_ids=[7])
    assert e.value.field == "env_ids[0]" and "env id 7 out of range [0, 2)" in str(e.value)
    assert isinstance(e.value, ValueError)


def test_bad_spec_names_the_spec_field(client, scene_name):
    spec = pad_and_ball_spec(scene_name)
    spec.sensors[1].probe_radius = -0.001
    with pytest.raises(taxel.InvalidArgumentError) as e:
        client.create_scene(spec)
    assert e.value.field == "spec.sensors[1].probe_radius[0]"
    assert "expected a finite value >= 0" in str(e.value)
    bad_link = pad_and_ball_spec(scene_name)
    bad_link.sensors[0].link = "hand/palm"
    with pytest.raises(taxel.NotFoundError, match="spec.sensors\\[0\\].*unknown link 'hand/palm'"):
        client.create_scene(bad_link)


def test_unknown_mesh_id_is_not_found(client, scene_name):
    spec = pad_and_ball_spec(scene_name, ball_shape=taxel.Mesh(mesh_id="0123abcd"))
    with pytest.raises(taxel.NotFoundError, match=r"mesh\.mesh_id: mesh '0123abcd' has not been uploaded"):
        client.create_scene(spec)


# Where the server's field paths point: entity 0 is the robot "hand" (link "pad"), entity 1 the
# object "ball" whose one link "body" has the ball's shape first (conftest.pad_and_ball_spec).


def test_unknown_mesh_id_names_its_field(client, scene_name):
    spec = pad_and_ball_spec(scene_name, ball_shape=taxel.Mesh(mesh_id="0123abcd"))
    with pytest.raises(taxel.NotFoundError) as e:
        client.create_scene(spec)
    assert e.value.message.startswith("spec.entities[1].links[0].shapes[0].mesh.mesh_id: ")
    assert e.value.field == "spec.entities[1].links[0].shapes[0].mesh.mesh_id"


def test_unknown_link_name_names_its_field(client, scene_name):
    spec = pad_and_ball_spec(scene_name)
    spec.sensors[2].link = "hand/palm"
    with pytest.raises(taxel.NotFoundError) as e:
        client.create_scene(spec)
    assert e.value.message == "spec.sensors[2].link: unknown link 'hand/palm'"
    assert e.value.field == "spec.sensors[2].link"


def test_duplicate_scene_says_replace(client, scene_name):
    client.create_scene(pad_and_ball_spec(scene_name, num_envs=2))
    with pytest.raises(taxel.AlreadyExistsError) as e:
        client.create_scene(pad_and_ball_spec(scene_name, num_envs=5))
    assert f"a scene named '{scene_name}' already exists" in str(e.value)
    assert "pass replace=True" in str(e.value) and "pass replace=True" in e.value.message
    assert e.value.field == "spec.name"  # the hint keeps the field the server named
    # What the hint promises: replace=True deletes the old scene (2 envs) and creates the new (5).
    replaced = client.create_scene(pad_and_ball_spec(scene_name, num_envs=5), replace=True)
    assert replaced.info().num_envs == 5 and client.scene(scene_name).info().num_envs == 5


def test_unknown_scene_sensor_and_channel(client, scene):
    with pytest.raises(taxel.NotFoundError, match="scene: no scene named 'nope'"):
        client.scene("nope")
    with pytest.raises(taxel.NotFoundError, match=r"read.sensors\[0\]: no sensor named 'ghost'"):
        scene.read(sensors=["ghost"])
    with pytest.raises(taxel.InvalidArgumentError) as e:
        scene.read(channels=["smell"])
    assert e.value.field == "read.channels[0]" and "unknown channel 'smell'" in e.value.message


def test_client_side_argument_errors(scene):
    with pytest.raises(ValueError, match="quat_order is required"):
        scene.step(good_poses(), dt=0.01)
    with pytest.raises(ValueError, match="quat_order: expected 'xyzw' or 'wxyz'"):
        scene.step(good_poses(), dt=0.01, quat_order="xzyw")
    with pytest.raises(ValueError, match="dt is required"):
        scene.step(good_poses(), quat_order="xyzw")
    with pytest.raises(TypeError, match="boolean mask"):
        scene.step(good_poses(), dt=0.01, quat_order="xyzw", env_ids=np.array([True, False]))
    with pytest.raises(TypeError, match="read: expected a taxel.Read"):
        scene.step(good_poses(), dt=0.01, quat_order="xyzw", read="all")
    with pytest.raises(TypeError, match="expected a taxel.SceneSpec"):
        scene._client.create_scene({"name": "x"})


def test_a_refused_step_changes_nothing(scene):
    first = scene.step(good_poses(), dt=0.01, quat_order="xyzw")
    before = first["depth"].depth.copy()
    with pytest.raises(taxel.InvalidArgumentError):
        scene.step(good_poses()[:, :1], dt=0.01, quat_order="xyzw")
    after = scene.read()
    assert after.step == 1
    np.testing.assert_array_equal(after["depth"].depth, before)


class FakeRpcError(grpc.RpcError):
    """What grpc raises: an RpcError that is also a Call with code, details and trailers."""

    def __init__(self, code, details, trailers=()):
        self._code, self._details, self._trailers = code, details, trailers

    def code(self):
        return self._code

    def details(self):
        return self._details

    def trailing_metadata(self):
        return self._trailers


def test_from_rpc_error_parses_bad_request_details():
    bad = error_details_pb2.BadRequest()
    bad.field_violations.add(field="poses", description="expected shape [4, 2, 7], got [4, 3, 7]")
    bad.field_violations.add(field="dt", description="expected a finite value > 0, got -1")
    status = status_pb2.Status(code=3, message="poses: expected shape [4, 2, 7], got [4, 3, 7]")
    status.details.add().Pack(bad)
    err = from_rpc_error(FakeRpcError(grpc.StatusCode.INVALID_ARGUMENT, status.message,
                                      (("other", "x"), ("grpc-status-details-bin", status.SerializeToString()))))
    assert type(err) is taxel.InvalidArgumentError
    assert err.field_violations == [
        taxel.FieldViolation("poses", "expected shape [4, 2, 7], got [4, 3, 7]"),
        taxel.FieldViolation("dt", "expected a finite value > 0, got -1")]
    # str() names every field once: the message covers the first, the second is appended.
    assert str(err) == ("INVALID_ARGUMENT: poses: expected shape [4, 2, 7], got [4, 3, 7]\n"
                        "  dt: expected a finite value > 0, got -1")


def details_trailer(*details):
    """A grpc-status-details-bin trailer whose google.rpc.Status carries `details` (Any messages
    given as (type_url, value) or as a message to Pack)."""
    status = status_pb2.Status(code=5, message="m")
    for d in details:
        if isinstance(d, tuple):
            status.details.add(type_url=d[0], value=d[1])
        else:
            status.details.add().Pack(d)
    return (("grpc-status-details-bin", status.SerializeToString()),)


def test_field_path_detail_gives_the_field():
    path = "spec.entities[0].links[0].shapes[0].mesh.mesh_id"
    message = f"{path}: mesh 'ab' has not been uploaded"
    err = from_rpc_error(FakeRpcError(grpc.StatusCode.NOT_FOUND, message,
                                      details_trailer(("type.taxel/field-path", path.encode()))))
    assert type(err) is taxel.NotFoundError and err.field == path and err.field_violations == []
    assert str(err) == f"NOT_FOUND: {message}"


def test_bad_request_on_not_found_gives_the_field():
    bad = error_details_pb2.BadRequest()
    bad.field_violations.add(field="spec.sensors[0].link", description="unknown link 'hand/palm'")
    err = from_rpc_error(FakeRpcError(grpc.StatusCode.NOT_FOUND, "spec.sensors[0].link: unknown link 'hand/palm'",
                                      details_trailer(bad)))
    assert type(err) is taxel.NotFoundError and err.field == "spec.sensors[0].link"


def test_bad_request_field_wins_over_the_path_detail():
    bad = error_details_pb2.BadRequest()
    bad.field_violations.add(field="poses", description="d")
    err = from_rpc_error(FakeRpcError(grpc.StatusCode.INVALID_ARGUMENT, "poses: d",
                                      details_trailer(("type.taxel/field-path", b"other"), bad)))
    assert err.field == "poses" and err.field_violations == [taxel.FieldViolation("poses", "d")]


def test_with_hint_keeps_class_and_field():
    err = from_rpc_error(FakeRpcError(grpc.StatusCode.ALREADY_EXISTS, "spec.name: a scene named 'g' already exists",
                                      details_trailer(("type.taxel/field-path", b"spec.name"))))
    hinted = err.with_hint("pass replace=True")
    assert type(hinted) is taxel.AlreadyExistsError and hinted.field == "spec.name"
    assert hinted.message == "spec.name: a scene named 'g' already exists (pass replace=True)"


@pytest.mark.parametrize("code, cls", [
    (grpc.StatusCode.NOT_FOUND, taxel.NotFoundError),
    (grpc.StatusCode.ALREADY_EXISTS, taxel.AlreadyExistsError),
    (grpc.StatusCode.FAILED_PRECONDITION, taxel.FailedPreconditionError),
    (grpc.StatusCode.OUT_OF_RANGE, taxel.OutOfRangeError),
    (grpc.StatusCode.RESOURCE_EXHAUSTED, taxel.ResourceExhaustedError),
    (grpc.StatusCode.UNAVAILABLE, taxel.UnavailableError),
    (grpc.StatusCode.UNAUTHENTICATED, taxel.UnauthenticatedError),
    (grpc.StatusCode.PERMISSION_DENIED, taxel.PermissionDeniedError),
    (grpc.StatusCode.UNIMPLEMENTED, taxel.UnimplementedError),
    (grpc.StatusCode.DEADLINE_EXCEEDED, taxel.DeadlineExceededError),
    (grpc.StatusCode.INTERNAL, taxel.InternalError),
])
def test_each_code_has_its_class(code, cls):
    err = from_rpc_error(FakeRpcError(code, "scene: something"))
    assert type(err) is cls and err.code == code and err.field_violations == [] and err.field is None
    assert str(err) == f"{code.name}: scene: something"


def test_malformed_details_do_not_hide_the_error():
    err = from_rpc_error(FakeRpcError(grpc.StatusCode.INVALID_ARGUMENT, "x: y",
                                      (("grpc-status-details-bin", b"\xff\xff not a status"),)))
    assert type(err) is taxel.InvalidArgumentError and err.field_violations == []


def test_unreachable_server_is_unavailable():
    # Port 1 on loopback: nothing listens there; the call fails fast (no wait_for_ready).
    with taxel.Client("127.0.0.1:1", timeout=5) as c:
        with pytest.raises(taxel.UnavailableError):
            c.server_info()

"""The spec builder: what each Python call puts on the wire (taxel.v1.SceneSpec field names)."""
import struct

import numpy as np
import pytest

import taxel
from taxel._pb import scene_pb2, tensor_pb2


def test_scene_entities_links_and_shapes_map_to_the_proto():
    spec = taxel.SceneSpec("grasp", num_envs=4, seed=9)
    hand = spec.robot("hand")
    pad = hand.link("pad", shapes=[taxel.Box(half_extents=(0.01, 0.02, 0.003), pos=(0, 0, -0.003),
                                             quat=(1, 0, 0, 0), quat_order="wxyz")])
    assert isinstance(pad, taxel.Link)
    hand.link("finger", shapes=[taxel.Capsule(0.01, 0.02), taxel.Cylinder(radius=0.005, half_length=0.01)])
    spec.object("ball", shapes=[taxel.Sphere(0.05)], assets=[taxel.Asset("big", [taxel.Sphere(0.08)])],
                env_assets=[0, 1, -1, 0])
    spec.projectile("dart", shapes=[taxel.Mesh(mesh_id="ab" * 32, scale=(1, 2, 3))])
    spec.terrain(shapes=[taxel.HalfSpace()], pos=(0, 0, -0.5))
    spec.static("table", shapes=[taxel.Heightfield(np.zeros((2, 3), np.float32), dx=0.1, dy=0.2)],
                quat=(0, 0, 0, 1), quat_order=taxel.XYZW)
    p = spec.to_proto()
    assert (p.name, p.num_envs, p.seed) == ("grasp", 4, 9)
    assert [(e.name, e.kind) for e in p.entities] == [
        ("hand", scene_pb2.ROBOT), ("ball", scene_pb2.OBJECT), ("dart", scene_pb2.PROJECTILE),
        ("terrain", scene_pb2.TERRAIN), ("table", scene_pb2.STATIC)]
    box = p.entities[0].links[0].shapes[0]
    assert list(box.box.half_extents) == [0.01, 0.02, 0.003]
    assert list(box.pose.position) == [0, 0, -0.003]
    assert list(box.pose.quaternion) == [1, 0, 0, 0] and box.pose.quat_order == tensor_pb2.WXYZ
    caps, cyl = p.entities[0].links[1].shapes
    assert (caps.capsule.radius, caps.capsule.half_length) == (0.01, 0.02)
    assert (cyl.cylinder.radius, cyl.cylinder.half_length) == (0.005, 0.01)
    ball = p.entities[1]
    assert ball.links[0].name == "body" and ball.links[0].shapes[0].sphere.radius == 0.05
    assert ball.assets[0].name == "big" and ball.assets[0].link_shapes[0].shapes[0].sphere.radius == 0.08
    assert list(ball.env_assets) == [0, 1, -1, 0]
    mesh = p.entities[2].links[0].shapes[0].mesh
    assert mesh.mesh_id == "ab" * 32 and list(mesh.scale) == [1, 2, 3]
    terrain = p.entities[3].links[0]
    assert terrain.shapes[0].WhichOneof("geometry") == "half_space"
    assert list(terrain.pose.position) == [0, 0, -0.5] and not terrain.shapes[0].HasField("pose")
    hf = p.entities[4].links[0].shapes[0].heightfield
    assert (hf.heights.dtype, list(hf.heights.shape), hf.dx, hf.dy) == (tensor_pb2.FLOAT32, [2, 3], 0.1, 0.2)
    assert p.entities[4].links[0].pose.quat_order == tensor_pb2.XYZW


def test_links_as_dict_and_link_objects():
    e = taxel.Entity("arm", "robot", links={"upper": [taxel.Sphere(0.1)], "lower": []})
    e.add_link(taxel.Link("hand"))
    assert [l.name for l in e.links] == ["upper", "lower", "hand"]


def test_sensors_map_options_onto_the_kinds_message():
    grid = np.zeros((2, 3, 3), np.float32)
    s = taxel.KinematicTaxel("skin", link="hand/pad", probe_local_pos=grid, probe_radius=0.002,
                             probe_local_normal=(0, 0, 1), filter_links=["hand/palm"], normal_stiffness=2000,
                             exponent=1.5, twist_damping=0)
    p = s.to_proto()
    assert (p.name, p.kind, p.link) == ("skin", scene_pb2.KINEMATIC_TAXEL, "hand/pad")
    assert (p.probe_local_pos.dtype, list(p.probe_local_pos.shape)) == (tensor_pb2.FLOAT32, [2, 3, 3])
    assert list(p.probe_radius.shape) == [] and p.probe_radius.data == struct.pack("<d", 0.002)
    assert list(p.probe_local_normal.shape) == [3]
    assert list(p.filter_links) == ["hand/palm"]
    k = p.kinematic_taxel
    assert (k.normal_stiffness, k.exponent, k.twist_damping) == (2000, 1.5, 0)
    assert k.HasField("twist_damping") and not k.HasField("normal_damping")  # unset = server default

    c = taxel.ContactProbe("touch", link="pad", probe_local_pos=[[0, 0, 0]], probe_radius=[0.001],
                           contact_threshold=2e-4, release_threshold=-1e-4).to_proto()
    assert (c.kind, c.contact_probe.contact_threshold, c.contact_probe.release_threshold) == \
        (scene_pb2.CONTACT_PROBE, 2e-4, -1e-4)
    assert not c.HasField("kinematic_taxel")
    d = taxel.ContactDepthProbe("d", link="pad", probe_local_pos=[[0, 0, 0]], probe_radius=0.001).to_proto()
    assert d.kind == scene_pb2.CONTACT_DEPTH_PROBE


def test_option_names_follow_the_proto():
    assert taxel.KinematicTaxel.options_field() == "kinematic_taxel"
    assert set(taxel.KinematicTaxel.option_names()) >= {"normal_stiffness", "normal_damping", "exponent",
                                                         "shear_damping", "twist_damping"}
    assert taxel.ContactProbe.options_field() == "contact_probe"
    assert "contact_threshold" not in taxel.KinematicTaxel.option_names()


def test_unknown_option_names_the_accepted_ones():
    with pytest.raises(TypeError, match="unknown option 'stiffness'.*normal_stiffness"):
        taxel.KinematicTaxel("s", link="pad", probe_local_pos=[[0, 0, 0]], probe_radius=0.001, stiffness=1)
    with pytest.raises(TypeError, match="unknown option 'normal_stiffness'"):
        taxel.ContactProbe("s", link="pad", probe_local_pos=[[0, 0, 0]], probe_radius=0.001, normal_stiffness=1)


def test_quaternions_need_their_order():
    with pytest.raises(ValueError, match="quat_order is required"):
        taxel.Sphere(0.1, quat=(0, 0, 0, 1))
    with pytest.raises(ValueError, match="expected 'xyzw' or 'wxyz'"):
        taxel.Box((1, 1, 1), quat=(0, 0, 0, 1), quat_order="zyxw")
    with pytest.raises(ValueError, match="quat_order is required"):
        taxel.SceneSpec("s").terrain(shapes=[taxel.HalfSpace()], quat=(0, 0, 0, 1))


def test_moving_links_have_no_fixed_pose():
    with pytest.raises(ValueError, match="only terrain and static links have a fixed pose"):
        taxel.SceneSpec("s").robot("hand").link("pad", pos=(0, 0, 1))


def test_mesh_needs_an_id_or_data():
    with pytest.raises(ValueError, match="either mesh_id or vertices"):
        taxel.Mesh()
    with pytest.raises(ValueError, match="vertices and triangles go together"):
        taxel.Mesh(vertices=np.zeros((3, 3)))


def test_inline_mesh_without_a_client_gets_its_content_id():
    v = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]], dtype=np.float64)
    t = np.array([[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]])
    spec = taxel.SceneSpec("m")
    spec.object("tet", shapes=[taxel.Mesh(vertices=v, triangles=t)])
    assert spec.to_proto().entities[0].links[0].shapes[0].mesh.mesh_id == taxel.mesh_content_id(v, t)
    assert len(spec.meshes()) == 1


def test_only_objects_have_assets():
    with pytest.raises(ValueError, match="only objects have assets"):
        taxel.Entity("hand", "robot", assets=[taxel.Asset("a", [taxel.Sphere(1)])])
    with pytest.raises(ValueError, match="kind must be one of"):
        taxel.Entity("x", "ghost")


def test_generic_field_assignment_used_for_future_options():
    # The mechanism that maps option keywords onto proto fields handles every field type that new
    # options (imperfections, elastomer, proximity) will use.
    from taxel._protofields import set_field as _set_field
    spec = scene_pb2.SensorSpec()
    _set_field(spec, "kinematic_taxel", {"exponent": 1.5, "normal_damping": np.float32(2)}, "t")  # nested dict
    assert (spec.kinematic_taxel.exponent, spec.kinematic_taxel.normal_damping) == (1.5, 2.0)
    _set_field(spec, "kind", "contact_probe", "t")  # enum by name, any case
    assert spec.kind == scene_pb2.CONTACT_PROBE
    _set_field(spec, "probe_radius", np.array([0.1, 0.2], np.float32), "t")  # Tensor from an array
    assert (spec.probe_radius.dtype, list(spec.probe_radius.shape)) == (tensor_pb2.FLOAT32, [2])
    _set_field(spec, "filter_links", ("a/b", "c"), "t")  # repeated
    assert list(spec.filter_links) == ["a/b", "c"]
    entity = scene_pb2.Entity()
    _set_field(entity, "env_assets", np.array([0, -1, 2]), "t")  # repeated from numpy
    assert list(entity.env_assets) == [0, -1, 2]
    with pytest.raises(ValueError, match="expected one of"):
        _set_field(spec, "kind", "camera", "t")
    with pytest.raises(TypeError, match="unknown field .stiffness."):
        _set_field(spec, "kinematic_taxel", {"stiffness": 1}, "t")


def test_elastomer_and_proximity_options_go_to_their_messages():
    e = taxel.ElastomerTaxel("gel", link="pad", probe_local_pos=[[0, 0, 0]], probe_radius=0.001,
                             probe_local_normal=(0, 0, 1), track_links=["ball"], n_sample_points=200,
                             lambda_d=500, use_fft=False, contact_threshold=2e-5).to_proto()
    assert (e.kind, list(e.track_links), e.n_sample_points) == (scene_pb2.ELASTOMER_TAXEL, ["ball"], 200)
    assert (e.elastomer.lambda_d, e.elastomer.use_fft, e.elastomer.contact_threshold) == (500, False, 2e-5)
    assert not e.HasField("contact_probe")  # the kind's own message wins over ContactProbe's field
    p = taxel.ProximityTaxel("prox", link="pad", probe_local_pos=[[0, 0, 0]], probe_radius=0.01,
                             stiffness=50, density_scalar=10).to_proto()
    assert (p.kind, p.proximity.stiffness, p.proximity.density_scalar) == (scene_pb2.PROXIMITY_TAXEL, 50, 10)
    assert taxel.ElastomerTaxel.options_field() == "elastomer" and taxel.ProximityTaxel.options_field() == "proximity"
    with pytest.raises(TypeError, match="unknown option 'lambda_d'"):
        taxel.ProximityTaxel("x", link="pad", probe_local_pos=[[0, 0, 0]], probe_radius=0.01, lambda_d=1)


def test_imperfections_given_flat_or_whole():
    gains = np.full((2, 3), 1.5, np.float32)
    s = taxel.ContactDepthProbe("d", link="pad", probe_local_pos=np.zeros((2, 3, 3)), probe_radius=0.001,
                                noise=0.01, probe_gain=gains, crosstalk_border="renormalize",
                                dead_taxel_value_range=(0, 1), history_length=4,
                                imperfections={"bias": 0.5}).to_proto()
    m = s.imperfections
    assert (m.noise, m.bias, m.history_length) == (0.01, 0.5, 4)
    assert m.crosstalk_border == scene_pb2.CROSSTALK_BORDER_RENORMALIZE
    assert list(m.dead_taxel_value_range) == [0, 1]
    assert (m.probe_gain.dtype, list(m.probe_gain.shape)) == (tensor_pb2.FLOAT32, [2, 3])
    with pytest.raises(ValueError, match="CROSSTALK_BORDER_ZERO, CROSSTALK_BORDER_RENORMALIZE"):
        taxel.ContactDepthProbe("d", link="pad", probe_local_pos=[[0, 0, 0]], probe_radius=0.001,
                                crosstalk_border="wrap")


def test_scene_level_fields_are_checked_against_the_proto():
    with pytest.raises(TypeError, match="SceneSpec: unknown field 'gravity'"):
        taxel.SceneSpec("s", gravity=(0, 0, -9.81))
    with pytest.raises(TypeError, match="unknown field 'entities'"):
        taxel.SceneSpec("s", entities=[])


def _sample_value(fd):
    """A value of the field's type that is not its default."""
    if fd.message_type is not None and fd.message_type.full_name == "taxel.v1.Tensor":
        return np.full((3, 3), 0.5)
    if fd.enum_type is not None:
        return fd.enum_type.values[-1].name
    if fd.type == fd.TYPE_BOOL:
        return True
    if fd.label == fd.LABEL_REPEATED:
        return [0.25, 0.75]
    if fd.type in (fd.TYPE_INT32, fd.TYPE_INT64):
        return 3
    return 0.125


@pytest.mark.parametrize("kind, message", [
    (taxel.KinematicTaxel, "kinematic_taxel"), (taxel.ElastomerTaxel, "elastomer"),
    (taxel.ProximityTaxel, "proximity"), (taxel.ContactProbe, "contact_probe"),
    (taxel.KinematicTaxel, "imperfections"), (taxel.ElastomerTaxel, "imperfections"),
    (taxel.ProximityTaxel, "imperfections"), (taxel.ContactProbe, "imperfections"),
    (taxel.ContactDepthProbe, "imperfections"),
])
def test_every_option_of_the_proto_is_reachable_by_keyword(kind, message):
    # Each field of the kind's options message and of ImperfectionOptions, given flat by its proto
    # name, lands in that message (so a new proto field needs no client change).
    desc = scene_pb2.SensorSpec.DESCRIPTOR.fields_by_name[message].message_type
    for fd in desc.fields:
        if fd.message_type is not None and fd.message_type.full_name != "taxel.v1.Tensor":
            continue  # nested messages: below
        value = _sample_value(fd)
        p = kind("s", link="pad", probe_local_pos=np.zeros((3, 3, 3)), probe_radius=0.001,
                 **{fd.name: value}).to_proto()
        got = getattr(getattr(p, message), fd.name)
        if fd.message_type is not None:
            assert list(got.shape) == [3, 3], fd.name
        elif fd.label == fd.LABEL_REPEATED:
            assert list(got) == value, fd.name
        elif fd.enum_type is not None:
            assert got == fd.enum_type.values[-1].number, fd.name
        else:
            assert got == value, fd.name


def test_kinematic_taxel_nonlinear_law_by_object_or_dict():
    law_fields = scene_pb2.NonlinearLawOptions.DESCRIPTOR.fields_by_name
    values = {name: 0.5 + i for i, name in enumerate(law_fields)}  # every field of the law
    for law in (taxel.NonlinearLaw(**values), values):
        k = taxel.KinematicTaxel("s", link="pad", probe_local_pos=[[0, 0, 0]], probe_radius=0.001,
                                 force_law="nonlinear", nonlinear_law=law).to_proto().kinematic_taxel
        assert k.force_law == scene_pb2.NONLINEAR
        assert {n: getattr(k.nonlinear_law, n) for n in law_fields} == values
    # The contact matrix's pressure law takes the same object.
    cm = taxel.SceneSpec("s", contact_bodies="all", contact_law=taxel.NonlinearLaw(**values)).to_proto()
    assert {n: getattr(cm.contact_matrix.law, n) for n in law_fields} == values

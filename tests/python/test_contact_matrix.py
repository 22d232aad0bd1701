"""The partner-resolved contact matrix through the Python client: the spec builder, the scene
info's axes and index maps, ESTIMATED forces against closed forms worked out here, REPORTED
aggregation, resets, slices, the in_contact helpers and the errors.

The scene ("legs over the ground"), world frame, z up, terrain = the half-space z <= 0:

          shin (sphere r 3 cm)                       ball (object, sphere 10 cm), far away
             o                                         or beside the left foot (env 1)
     left_foot (sphere R = 5 cm)      right_foot (box, half extents 4 × 3 × 2 cm)
          .-'''-.                          +--------------+
         (   c   )                         |              |
    ======'-...-'==========================+==============+========  z = 0 (terrain)
          ^ sunk δ = 2 mm                    ^ sunk δ_b = 1 mm

Canonical link order: legs/left_foot 0, legs/right_foot 1, legs/shin 2, ball/body 3,
terrain/body 4 (entity by entity, link by link); the moving links are the first four.
"""
import math

import numpy as np
import pytest

import taxel

R_FOOT = 0.05
BOX_H = (0.04, 0.03, 0.02)
R_SHIN = 0.03
R_BALL = 0.1
AWAY = (5.0, 0.0, 1.0)

# The ESTIMATED pressure law of these tests: p = k_p·δ^n (Pa) at rest (the damping term needs a
# closing speed; every step here sends zero twists).
K_P = 2e9
N_EXP = 1.5


def legs_spec(name: str, num_envs: int = 2, **contact) -> taxel.SceneSpec:
    spec = taxel.SceneSpec(name, num_envs=num_envs, seed=0, **contact)
    legs = spec.robot("legs")
    legs.link("left_foot", shapes=[taxel.Sphere(R_FOOT)])
    legs.link("right_foot", shapes=[taxel.Box(BOX_H)])
    legs.link("shin", shapes=[taxel.Sphere(R_SHIN)])
    spec.object("ball", shapes=[taxel.Sphere(R_BALL)])
    spec.terrain(shapes=[taxel.HalfSpace()])
    return spec


def poses(*envs) -> np.ndarray:
    """[E, 4, 7] xyzw poses (identity rotations) from one (left, right, shin, ball) position tuple
    per env."""
    out = np.zeros((len(envs), 4, 7))
    out[..., 6] = 1.0
    for e, positions in enumerate(envs):
        out[e, :, :3] = positions
    return out


def at_rest(scene, p, **kw):
    return scene.step(p, twists=np.zeros(p.shape[:-1] + (6,)), **kw)


def root_base(a):
    while isinstance(a, np.ndarray) and a.base is not None:
        a = a.base
    return a


# -------------------------------------------------------------------------------------------------
# Spec builder (no server)


def test_contact_keywords_map_onto_the_proto():
    spec = legs_spec("s", contact_bodies="*_foot", contact_partners=["object/*", "terrain"],
                     contact_source="REPORTED", contact_friction=True,
                     contact_law=taxel.NonlinearLaw(stiffness=1e6, dynamic_friction=0.8),
                     contact_sample_spacing=0.004)
    cm = spec.to_proto().contact_matrix
    assert list(cm.bodies) == ["*_foot"] and list(cm.partners) == ["object/*", "terrain"]
    assert cm.source == taxel._pb.scene_pb2.REPORTED and cm.friction and cm.sample_spacing == 0.004
    assert (cm.law.stiffness, cm.law.dynamic_friction) == (1e6, 0.8)
    assert not cm.law.HasField("exponent")  # unset = the server's default
    # Defaults: partners ["terrain"], ESTIMATED, no friction, law and spacing left to the server.
    d = legs_spec("s", contact_bodies=["left_foot"]).to_proto().contact_matrix
    assert (list(d.partners), d.source, d.friction, d.HasField("law"), d.sample_spacing) == \
        (["terrain"], taxel._pb.scene_pb2.ESTIMATED, False, False, 0.0)
    assert not legs_spec("s").to_proto().HasField("contact_matrix")


def test_contact_matrix_as_a_dict_an_object_or_set_later():
    a = legs_spec("s", contact_matrix={"bodies": ["all"], "source": "reported", "law": {"exponent": 1.0}})
    assert a.to_proto().contact_matrix.source == taxel._pb.scene_pb2.REPORTED
    assert a.to_proto().contact_matrix.law.exponent == 1.0
    b = legs_spec("s", contact_matrix=taxel.ContactMatrixSpec("all", partners="robot/*", friction=True))
    assert list(b.to_proto().contact_matrix.partners) == ["robot/*"]
    c = legs_spec("s")
    cm = c.set_contact_matrix(["left_foot"], partners=["terrain", "object/ball"])
    assert c.contact_matrix is cm and "left_foot" in repr(c)
    c.set_contact_matrix(None)
    assert not c.to_proto().HasField("contact_matrix")


def test_contact_sdf_backend_by_keyword_dict_object_and_proto():
    pb = taxel._pb.scene_pb2
    assert legs_spec("s", contact_bodies="all").to_proto().contact_matrix.sdf_backend == pb.EXACT  # unset
    for spec in (legs_spec("s", contact_bodies="all", contact_sdf_backend="grid"),
                 legs_spec("s", contact_matrix={"bodies": ["all"], "sdf_backend": "GRID"}),
                 legs_spec("s", contact_matrix=taxel.ContactMatrixSpec("all", sdf_backend=pb.GRID))):
        assert spec.to_proto().contact_matrix.sdf_backend == pb.GRID
        assert "sdf_backend='grid'" in repr(spec.contact_matrix)
    wire = legs_spec("s", contact_bodies="all", contact_sdf_backend="grid").to_proto().contact_matrix
    again = legs_spec("s")
    again.set_contact_matrix(wire)
    assert again.to_proto().contact_matrix.sdf_backend == pb.GRID
    with pytest.raises(ValueError, match="contact_sdf_backend: expected 'exact' or 'grid', got 'bvh'"):
        taxel.SceneSpec("s", contact_bodies="all", contact_sdf_backend="bvh")
    with pytest.raises(ValueError, match="contact_sdf_backend: 'grid' applies to 'estimated' contacts"):
        taxel.SceneSpec("s", contact_bodies="all", contact_source="reported", contact_sdf_backend="grid")


def test_contact_spec_mistakes_are_caught_on_the_client():
    with pytest.raises(ValueError, match="without contact_bodies"):
        taxel.SceneSpec("s", contact_partners=["terrain"])
    with pytest.raises(TypeError, match="either as contact_matrix= or with the contact_\\* keywords"):
        taxel.SceneSpec("s", contact_bodies="all", contact_matrix={"bodies": ["all"]})
    with pytest.raises(ValueError, match="contact_bodies: empty"):
        taxel.SceneSpec("s", contact_bodies=[])
    with pytest.raises(ValueError, match="contact_source: expected 'estimated' or 'reported'"):
        taxel.SceneSpec("s", contact_bodies="all", contact_source="simulated")
    with pytest.raises(ValueError, match="contact_sample_spacing"):
        taxel.SceneSpec("s", contact_bodies="all", contact_sample_spacing=0)
    with pytest.raises(TypeError, match="unknown option 'stifness'"):
        taxel.NonlinearLaw(stifness=1.0)
    with pytest.raises(TypeError, match="unknown field\\(s\\) \\['body'\\]"):
        taxel.SceneSpec("s", contact_matrix={"body": ["all"]})


# -------------------------------------------------------------------------------------------------
# Info, selection and canonical order


def test_info_axes_index_maps_and_bytes(client, scene_name):
    # Selectors in any order; axes come in canonical order: rows in link order, columns terrain,
    # robot links, object slots.
    scene = client.create_scene(legs_spec(scene_name, num_envs=3, contact_bodies=["right_foot", "left_*"],
                                          contact_partners=["object/ball", "robot/shin", "terrain"]))
    cm = scene.info().contact_matrix
    assert cm.rows == ("left_foot", "right_foot")
    assert cm.columns == ("terrain", "robot/shin", "object/ball")
    assert cm.row_index == {"left_foot": 0, "right_foot": 1}
    assert cm.column_index == {"terrain": 0, "robot/shin": 1, "object/ball": 2}
    assert (cm.source, cm.friction, cm.shape) == ("estimated", False, (2, 3))
    assert cm.bytes == 3 * 2 * 3 * 3 * 4  # E × B × P × 3 × float32
    assert scene.last_info.contact_matrix == cm  # also in the info returned by create_scene
    # A step's matrix and a GetContactMatrix read carry the same axes and maps.
    r = at_rest(scene, poses(*[(AWAY,) * 4] * 3), dt=0.01, quat_order="xyzw",
                read=taxel.Read(contact_matrix=True, none=True))
    assert (r.contact_matrix.row_index, r.contact_matrix.column_index) == (cm.row_index, cm.column_index)
    assert r.contact_matrix.normal.shape == (3, 2, 3, 3) and r.contact_matrix.friction is None
    full = scene.contact_matrix()
    assert (full.rows, full.columns) == (list(cm.rows), list(cm.columns))


def test_all_bodies_and_ambiguous_link_names(client, scene_name):
    # Two robots with a link "hand" each: rows and robot columns use "entity/link".
    spec = taxel.SceneSpec(scene_name, contact_bodies="all", contact_partners=["terrain", "robot/*"])
    spec.robot("a").link("hand", shapes=[taxel.Sphere(0.1)])
    spec.robot("b").link("hand", shapes=[taxel.Sphere(0.1)])
    spec.terrain(shapes=[taxel.HalfSpace()])
    scene = client.create_scene(spec)
    cm = scene.info().contact_matrix
    assert cm.rows == ("a/hand", "b/hand")
    assert cm.columns == ("terrain", "robot/a/hand", "robot/b/hand")
    # Reported-contact names resolve the same way on the client; a bare "hand" is ambiguous.
    assert (scene.link_index("b/hand"), scene.link_index("robot/a/hand"), scene.link_index("b")) == (1, 0, 1)
    with pytest.raises(ValueError, match="'hand' is ambiguous \\(a/hand, b/hand\\)"):
        scene.link_index("hand", "contacts.body[0]")


def test_scene_without_a_matrix_has_no_info_and_refuses_reads(client, scene_name):
    scene = client.create_scene(legs_spec(scene_name, num_envs=1))
    assert scene.info().contact_matrix is None
    with pytest.raises(taxel.FailedPreconditionError, match="has no contact matrix"):
        at_rest(scene, poses((AWAY,) * 4), dt=0.01, quat_order="xyzw", read=taxel.Read(contact_matrix=True))
    with pytest.raises(taxel.FailedPreconditionError, match="has no contact matrix"):
        scene.contact_matrix()


# -------------------------------------------------------------------------------------------------
# ESTIMATED: closed forms


def sphere_on_plane_force(k_p, n, radius, depth):
    """Normal force on a sphere sunk `depth` into a half-space under the server's model
    (core/contact/pair_contact.h): the pressure p(u) = k_p·u^n at the local depth u of each point
    of the sphere's surface inside the half-space, acting along the plane's normal:
    F = ∫_{cap} k_p·u^n dA. By Archimedes' hat-box theorem the zone of the sphere between depths u
    and u + du has area 2πR·du whatever its latitude, so
        F = 2πR·k_p·∫_0^δ u^n du = 2πR·k_p·δ^(n+1)/(n+1)        (δ ≤ 2R).
    (For n = 1 this is πR·k_p·δ², not the projected-area k_p·πδ²(R − δ/3) of the displaced volume:
    the model integrates over the curved surface.)"""
    return 2 * math.pi * radius * k_p * depth ** (n + 1) / (n + 1)


def test_sphere_on_plane_formula_against_a_quadrature_over_the_cap():
    # The same integral in spherical coordinates, without the hat-box theorem: the point at polar
    # angle θ from the lowest point lies u = δ − R(1 − cos θ) below the plane, dA = 2πR² sin θ dθ.
    delta = 0.002
    theta_max = math.acos(1 - delta / R_FOOT)
    theta = np.linspace(0.0, theta_max, 200001)
    u = np.clip(delta - R_FOOT * (1 - np.cos(theta)), 0, None)
    integrand = K_P * u ** N_EXP * 2 * math.pi * R_FOOT ** 2 * np.sin(theta)
    quad = float(np.sum((integrand[1:] + integrand[:-1]) * np.diff(theta)) / 2)
    assert quad == pytest.approx(sphere_on_plane_force(K_P, N_EXP, R_FOOT, delta), rel=1e-6)


def test_estimated_forces_match_the_closed_forms(client, scene_name):
    spec = legs_spec(scene_name, contact_bodies="*_foot", contact_partners=["terrain", "object/*"],
                     contact_law=taxel.NonlinearLaw(stiffness=K_P, exponent=N_EXP), contact_friction=True)
    scene = client.create_scene(spec, quat_order="xyzw", dt=0.01)
    delta, delta_b = 0.002, 0.001
    # env 0: left foot sunk δ into the ground at x = 0, right foot sunk δ_b at x = 0.5, shin and
    # ball away. env 1: feet in the air, the ball overlapping the left foot by 1 cm along +x.
    left_air, ball_beside = (0.0, 0.0, 0.5), (R_FOOT + R_BALL - 0.01, 0.0, 0.5)
    r = at_rest(scene, poses(((0, 0, R_FOOT - delta), (0.5, 0, BOX_H[2] - delta_b), AWAY, AWAY),
                             (left_air, (0.5, 0, 0.5), AWAY, ball_beside)),
                read=taxel.Read(contact_matrix=True, none=True))
    cm = r.contact_matrix
    left, right = cm.row_index["left_foot"], cm.row_index["right_foot"]
    ground, ball = cm.column_index["terrain"], cm.column_index["object/ball"]

    f_sphere = sphere_on_plane_force(K_P, N_EXP, R_FOOT, delta)  # 22.48 N
    np.testing.assert_allclose(cm.normal[0, left, ground], (0, 0, f_sphere), rtol=1e-5, atol=1e-4)
    # The box's bottom face (4·hx·hy) sits at depth δ_b: k_p·δ_b^n per unit area; its four walls
    # (perimeter 4(hx + hy)) dip into the ground from depth 0 to δ_b: k_p·δ_b^(n+1)/(n+1) per
    # unit length. 303.6 N + 7.1 N.
    hx, hy, _ = BOX_H
    f_box = K_P * (4 * hx * hy * delta_b ** N_EXP + 4 * (hx + hy) * delta_b ** (N_EXP + 1) / (N_EXP + 1))
    np.testing.assert_allclose(cm.normal[0, right, ground], (0, 0, f_box), rtol=1e-5, atol=1e-3)
    np.testing.assert_array_equal(cm.normal[0, :, ball], 0)
    # At rest nothing slips: the friction matrix is zero.
    np.testing.assert_array_equal(cm.friction, 0)
    # env 1: the ball (at +x) pushes the left foot towards −x; nothing touches the ground.
    push = cm.normal[1, left, ball]
    assert push[0] < 0 and abs(push[1]) <= 1e-6 * abs(push[0]) and abs(push[2]) <= 1e-6 * abs(push[0])
    np.testing.assert_array_equal(cm.normal[1, :, ground], 0)
    np.testing.assert_array_equal(cm.normal[1, right], 0)


def test_grid_backend_reads_the_uploaded_grid(client, scene_name):
    # A 12 cm mesh cube (half extent H = 6 cm, its grid uploaded: 1e-3 m asked over a 3 mm band)
    # rests δ = 1 mm deep on the middle of a 2 × 2 cm box pad (top face at z = 0), the pad's
    # samples 1 mm apart:
    #
    #        +-----------------+  mesh cube
    #        |                 |
    #        +------[pad]------+  z = −δ: the cube's bottom face, δ below the pad's top face
    #
    # Box – mesh is sampled both ways and averaged: the cube's samples are tested against the pad
    # (exact either way), the pad's against the cube — its mesh or its grid. Within δ + band of the
    # bottom face and ≥ 5 cm from the cube's other faces the signed distance is affine (z + δ),
    # which trilinear interpolation reproduces exactly: the grid's only error there is the float
    # rounding of its node values, ε_f ≤ 2^-24·(band + √3·h) (|sd| at a node), so each depth is
    # off by ≤ ε_f (force n·ε_f/δ relative) and each normal by ≤ 2·√3·2ε_f/h (the gradient of the
    # rounding over a cell, normalised): a few 1e-6 relative, next to the float32 rounding of the
    # matrix itself. The force is ≈ k_p·δ^n·(2 cm)² = 25 N plus the pad's
    # side bands (4 %).
    h, delta, pad, spacing = 0.06, 0.001, 0.01, 0.001
    cube_v = h * np.array([[-1, -1, -1], [1, -1, -1], [1, 1, -1], [-1, 1, -1],
                           [-1, -1, 1], [1, -1, 1], [1, 1, 1], [-1, 1, 1]], dtype=np.float64)
    cube_t = np.array([[0, 2, 1], [0, 3, 2], [4, 5, 6], [4, 6, 7], [0, 1, 5], [0, 5, 4],
                       [1, 2, 6], [1, 6, 5], [2, 3, 7], [2, 7, 6], [3, 0, 4], [3, 4, 7]], dtype=np.int32)
    mesh_id = client.upload_mesh(cube_v, cube_t, grid_max_error=1e-3, grid_band=3e-3)
    uploaded = client.mesh_info(mesh_id).grid
    forces = {}
    for backend in ("exact", "grid"):
        name = f"{scene_name}_{backend}"
        spec = taxel.SceneSpec(name, num_envs=1, contact_bodies="pad", contact_partners="object/*",
                               contact_law=taxel.NonlinearLaw(stiffness=K_P, exponent=N_EXP),
                               contact_sample_spacing=spacing, contact_sdf_backend=backend)
        spec.robot("hand").link("pad", shapes=[taxel.Box((pad, pad, 0.005), pos=(0, 0, -0.005))])
        spec.object("cube", shapes=[taxel.Mesh(mesh_id)])
        scene = client.create_scene(spec, quat_order="xyzw", dt=0.01)
        assert scene.info().contact_matrix.sdf_backend == backend
        p = np.zeros((1, 2, 7))
        p[..., 6] = 1.0
        p[0, 1, 2] = h - delta
        cm = at_rest(scene, p, read=taxel.Read(contact_matrix=True, none=True)).contact_matrix
        forces[backend] = cm.normal[0, 0, 0].astype(np.float64)
        client.delete_scene(name)
    assert client.mesh_info(mesh_id).grid == uploaded  # the uploaded grid served; none was built
    f = -forces["exact"][2]
    assert f == pytest.approx(K_P * delta ** N_EXP * (2 * pad) ** 2, rel=0.1)
    eps_f = 2.0 ** -24 * (uploaded.band + math.sqrt(3) * uploaded.cell_size)
    rel = N_EXP * eps_f / delta + 4 * math.sqrt(3) * eps_f / uploaded.cell_size
    np.testing.assert_allclose(forces["grid"], forces["exact"], rtol=0, atol=(rel + 4 * 2.0 ** -24) * f)


def test_matrix_arrays_are_read_only_zero_copy_views(client, scene_name):
    scene = client.create_scene(legs_spec(scene_name, contact_bodies="all"), quat_order="xyzw", dt=0.01)
    at_rest(scene, poses(((0, 0, R_FOOT - 0.001), AWAY, AWAY, AWAY), (AWAY,) * 4))
    m = scene.contact_matrix(friction=False)
    r = at_rest(scene, poses(((0, 0, R_FOOT - 0.001), AWAY, AWAY, AWAY), (AWAY,) * 4),
                read=taxel.Read(none=True, contact_matrix=True))
    for a in (m.normal, r.contact_matrix.normal):
        assert a.dtype == np.float32 and not a.flags.writeable
        # A view into a bytes object: the response gRPC received (or, for a tensor whose bytes sit
        # misaligned in it, that tensor's own aligned copy; see taxel/_wire.py).
        base = root_base(a)
        assert isinstance(base, bytes)
        start = np.frombuffer(base, np.uint8).ctypes.data
        assert start <= a.ctypes.data and a.ctypes.data + a.nbytes <= start + len(base)
        with pytest.raises(ValueError):
            a[0, 0, 0, 2] = 1.0


# -------------------------------------------------------------------------------------------------
# REPORTED: aggregation, reset, slices


@pytest.fixture
def reported(client, scene_name):
    spec = legs_spec(scene_name, num_envs=3, contact_bodies="*_foot", contact_partners=["terrain", "object/ball"],
                     contact_source="reported", contact_friction=True)
    return client.create_scene(spec, quat_order="xyzw", dt=0.01)


STILL = poses(*[(AWAY,) * 4] * 3)


def test_reported_contacts_are_selected_and_summed(reported):
    assert reported.info().contact_matrix.source == "reported"
    contacts = taxel.ReportedContacts(
        env=[0, 0, 0, 1, 2],
        body=["left_foot", "legs/left_foot", "left_foot", "shin", "right_foot"],
        partner=["terrain", "terrain/body", "shin", "terrain", "ball"],
        force=np.array([[0, 0, 10], [0, 0, 15], [0, 0, 7], [0, 0, 99], [0, 2, 3]], np.float32),
        friction=[[1, 0, 0], [0.5, 0, 0], [9, 9, 9], [9, 9, 9], [0, 0, -1]])
    r = reported.step(STILL, contacts=contacts, read=taxel.Read(contact_matrix=True, none=True))
    cm = r.contact_matrix
    expected = np.zeros((3, 2, 2, 3), np.float32)
    expected[0, 0, 0] = (0, 0, 10 + 15)  # two upward contacts of the same pair add up
    expected[2, 1, 1] = (0, 2, 3)
    # Dropped: left_foot–shin (robot/shin is not a column), shin–terrain (shin is not a row).
    np.testing.assert_array_equal(cm.normal, expected)
    expected_friction = np.zeros((3, 2, 2, 3), np.float32)
    expected_friction[0, 0, 0] = (1.5, 0, 0)
    expected_friction[2, 1, 1] = (0, 0, -1)
    np.testing.assert_array_equal(cm.friction, expected_friction)  # kept: the step returns it


def test_contacts_by_index_as_a_dict_and_over_a_stream(reported):
    i = reported.link_index
    assert (i("left_foot"), i("legs/right_foot"), i("ball"), i("object/ball"), i("terrain")) == (0, 1, 3, 3, 4)
    contacts = {"env": np.array([1, 1]), "body": np.array([i("left_foot")] * 2, np.int64),
                "partner": np.array([i("terrain"), i("ball")]), "force": np.array([[0.0, 0, 2], [-1.0, 0, 0]])}
    with reported.stream() as s:
        r = s.step(STILL, contacts=contacts, read={"contact_matrix": True, "none": True})
    np.testing.assert_array_equal(r.contact_matrix.normal[1, 0], [[0, 0, 2], [-1, 0, 0]])
    np.testing.assert_array_equal(r.contact_matrix.normal[[0, 2]], 0)
    # A scalar env applies to every contact.
    r = reported.step(STILL, contacts={"env": 2, "body": "right_foot", "partner": ["terrain"] * 2,
                                       "force": [[0, 0, 1], [0, 0, 2]]}, read=taxel.Read(contact_matrix=True))
    np.testing.assert_array_equal(r.contact_matrix.normal[2, 1, 0], (0, 0, 3))


def test_steps_and_resets_clear_rows_and_slices_keep_the_requested_order(reported):
    reported.step(STILL, contacts={"env": [0, 2, 2], "body": ["left_foot", "right_foot", "left_foot"],
                                   "partner": ["terrain", "ball", "terrain"],
                                   "force": [[0, 0, 5], [0, 1, 0], [0, 0, 8]]})
    # A slice: envs 2 then 0, one row, the columns reversed: exactly that order comes back.
    m = reported.contact_matrix(env_ids=[2, 0], rows=["right_foot"], columns=["object/ball", "terrain"])
    assert list(m.env_ids) == [2, 0] and m.rows == ["right_foot"] and m.columns == ["object/ball", "terrain"]
    assert m.column_index == {"object/ball": 0, "terrain": 1} and m.normal.shape == (2, 1, 2, 3)
    np.testing.assert_array_equal(m.normal[0, 0], [[0, 1, 0], [0, 0, 0]])
    np.testing.assert_array_equal(m.normal[1, 0], 0)
    np.testing.assert_array_equal(reported.contact_matrix(env_ids=[2], rows=["left_foot"]).normal[0, 0, 0],
                                  (0, 0, 8))
    # Stepping env 2 without contacts clears its rows; env 0 keeps its contact.
    reported.step(STILL[2:], env_ids=[2])
    m = reported.contact_matrix()
    np.testing.assert_array_equal(m.normal[2], 0)
    np.testing.assert_array_equal(m.normal[0, 0, 0], (0, 0, 5))
    # Reset zeroes the rows of the reset envs.
    reported.reset([0])
    np.testing.assert_array_equal(reported.contact_matrix().normal, 0)
    with pytest.raises(ValueError, match="env_ids: empty"):
        reported.contact_matrix(env_ids=[])


def test_in_contact_any_contact_and_net_force(reported):
    # env 0, left foot: terrain pushes (0, 0, 3), the ball (4, 0, 0): per-partner norms 3 and 4,
    # the net force (4, 0, 3) has norm 5. env 1: right foot on the terrain, exactly 25 N upwards.
    # env 2: nothing. (All values exact in float32.)
    r = reported.step(STILL, contacts={"env": [0, 0, 1], "body": ["left_foot", "left_foot", "right_foot"],
                                       "partner": ["terrain", "ball", "terrain"],
                                       "force": [[0, 0, 3], [4, 0, 0], [0, 0, 25]]},
                      read=taxel.Read(contact_matrix=True, none=True))
    cm = r.contact_matrix
    np.testing.assert_array_equal(cm.in_contact(3.5), [[True, False], [False, True], [False, False]])
    # Per partner, not on the net force: no single partner exceeds 4.5 N at the left foot.
    np.testing.assert_array_equal(cm.in_contact(4.5), [[False, False], [False, True], [False, False]])
    np.testing.assert_allclose(np.linalg.norm(cm.net_force()[0, 0]), 5.0)
    # Strictly greater: 25 N is not above 25 N.
    assert not cm.in_contact(25.0)[1, 1] and cm.in_contact(24.999)[1, 1]
    np.testing.assert_array_equal(cm.in_contact(0.0, partners="terrain"), [[True, False], [False, True],
                                                                             [False, False]])
    np.testing.assert_array_equal(cm.in_contact(1.0, partners=["object/*"]), [[True, False], [False, False],
                                                                               [False, False]])
    np.testing.assert_array_equal(cm.in_contact(1.0, bodies="right_*"), [[False], [True], [False]])
    np.testing.assert_array_equal(cm.any_contact(1.0), [True, True, False])
    np.testing.assert_array_equal(cm.any_contact(1.0, partners="object/ball"), [True, False, False])
    np.testing.assert_array_equal(cm.net_force(partners="terrain")[:, :, 2], [[3, 0], [0, 25], [0, 0]])
    with pytest.raises(ValueError, match="'object/cup' matches none of"):
        cm.in_contact(1.0, partners="object/cup")
    with pytest.raises(ValueError, match="threshold"):
        cm.in_contact(-1.0)
    # friction=True adds the friction part (none was reported: zero).
    np.testing.assert_array_equal(cm.in_contact(3.5, friction=True), cm.in_contact(3.5))


# -------------------------------------------------------------------------------------------------
# Errors


def test_unknown_bodies_partners_and_bad_laws_fail_at_creation(client, scene_name):
    with pytest.raises(taxel.InvalidArgumentError, match="'nose', 'arm_\\*'") as e:
        client.create_scene(legs_spec(scene_name, contact_bodies=["left_foot", "nose", "arm_*"]))
    assert e.value.field == "spec.contact_matrix.bodies"
    with pytest.raises(taxel.InvalidArgumentError, match="'object/cup'") as e:
        client.create_scene(legs_spec(scene_name, contact_bodies="all", contact_partners=["object/cup"]))
    assert e.value.field == "spec.contact_matrix.partners"
    with pytest.raises(taxel.InvalidArgumentError) as e:
        client.create_scene(legs_spec(scene_name, contact_bodies="all", contact_law={"exponent": 0}))
    assert e.value.field == "spec.contact_matrix.law.exponent"
    with pytest.raises(taxel.NotFoundError):
        client.scene(scene_name)  # nothing was created


def test_contact_errors_name_the_field(client, reported, scene_name):
    with pytest.raises(ValueError, match="contacts.body\\[1\\]: no link named 'nose'"):
        reported.step(STILL, contacts={"env": [0, 0], "body": ["left_foot", "nose"], "partner": "terrain",
                                       "force": np.zeros((2, 3))})
    with pytest.raises(ValueError, match="contacts.force: expected shape \\[K, 3\\]"):
        reported.step(STILL, contacts={"env": 0, "body": 0, "partner": 4, "force": np.zeros((2, 2))})
    with pytest.raises(ValueError, match="contacts.partner: expected 2 values"):
        reported.step(STILL, contacts={"env": 0, "body": 0, "partner": [4, 4, 4], "force": np.zeros((2, 3))})
    with pytest.raises(TypeError, match="missing \\['partner'\\]"):
        reported.step(STILL, contacts={"env": 0, "body": 0, "force": np.zeros((1, 3))})
    with pytest.raises(taxel.InvalidArgumentError) as e:
        reported.step(STILL[:1], env_ids=[1], contacts={"env": [0], "body": [0], "partner": [4],
                                                        "force": [[0, 0, 1]]})
    assert e.value.field == "contacts.env[0]" and "not one of the envs this step updates" in e.value.message
    with pytest.raises(taxel.InvalidArgumentError) as e:
        reported.step(STILL, contacts={"env": [0], "body": [0], "partner": [4], "force": [[0, 0, np.inf]]})
    assert e.value.field.startswith("contacts.force[0]")  # ("[0][2]" on servers that name the component)
    assert reported.info().step == 0  # refused steps change nothing
    with pytest.raises(taxel.InvalidArgumentError) as e:
        reported.contact_matrix(rows=["left_foot", "nose"])
    assert e.value.field == "rows[1]"
    with pytest.raises(taxel.OutOfRangeError):
        reported.contact_matrix(env_ids=[3])
    with pytest.raises(TypeError, match="list of names"):
        reported.contact_matrix(rows="left_foot")
    # Contacts sent to an ESTIMATED scene, friction asked of a matrix without it.
    est = client.create_scene(legs_spec(scene_name + "_est", contact_bodies="all"), quat_order="xyzw", dt=0.01)
    try:
        with pytest.raises(taxel.InvalidArgumentError, match="source REPORTED") as e:
            est.step(poses((AWAY,) * 4, (AWAY,) * 4), contacts={"env": 0, "body": 0, "partner": 4,
                                                              "force": [[0, 0, 1]]})
        assert e.value.field == "contacts"
        with pytest.raises(taxel.FailedPreconditionError, match="does not keep friction"):
            est.contact_matrix(friction=True)
    finally:
        est.delete()

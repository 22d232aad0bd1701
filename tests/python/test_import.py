"""SceneSpec.from_mjcf / from_urdf (through `taxel-cli import`, $TAXEL_CLI) and grid_on_box_face,
checked against the numbers of the files themselves and a reading worked out by hand."""
import math
import os
import pathlib
import subprocess

import numpy as np
import pytest

import taxel

HUMANOID = "/usr/share/mujoco/model/humanoid/humanoid.xml"  # libmujoco-samples

# A foot with a box sole (named geom "sole": half extents .04 × .02 × .005, centre (.01, 0, −.005),
# yawed 90° so that its x axis runs along the link's y) above a floor plane:
#
#     side view (link x right, z up)          the sole's −z face is the plane z = −0.01 of the link
#          ( ankle )  sphere r .02 at z = .05
#      ┌────sole────┐ z ∈ [−.01, 0]
#   ===================== floor (plane z = 0 in world)
FOOT_XML = """<mujoco model="pad">
  <worldbody>
    <geom name="floor" type="plane" size="1 1 .1"/>
    <body name="foot" pos="0 0 1">
      <freejoint/>
      <geom name="ankle" type="sphere" size="0.02" pos="0 0 0.05"/>
      <geom name="sole" type="box" size="0.04 0.02 0.005" pos="0.01 0 -0.005" euler="0 0 90"/>
    </body>
  </worldbody>
</mujoco>
"""

# A URDF: a fixed base box and a link "shell" carrying a cuboid mesh [0, .06] × [0, .04] × [0, .02].
SHELL_OBJ = (pathlib.Path(__file__).resolve().parent.parent / "data" / "shell_cuboid.obj").read_text()
INERTIAL = '<inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial>'
SHELL_URDF = f"""<robot name="shelf">
  <link name="base">{INERTIAL}<collision><geometry><box size="0.2 0.1 0.1"/></geometry></collision></link>
  <link name="shell">{INERTIAL}<collision><geometry><mesh filename="shell.obj"/></geometry></collision></link>
  <joint name="j" type="revolute"><parent link="base"/><child link="shell"/><origin xyz="0 0 0.5"/>
    <axis xyz="0 0 1"/><limit lower="-1" upper="1" effort="1" velocity="1"/></joint>
</robot>
"""


@pytest.fixture(autouse=True)
def _need_cli():
    cli = os.environ.get("TAXEL_CLI")
    if not cli or not os.access(cli, os.X_OK):
        pytest.skip("TAXEL_CLI does not name a built taxel-cli (CTest sets it; build the target taxel-cli)")
    probe = subprocess.run([cli, "import", "/nonexistent.xml"], capture_output=True, text=True)
    if "built without MuJoCo" in probe.stderr:
        pytest.skip("taxel-cli was built without MuJoCo (libmujoco-dev)")


def test_humanoid_links_and_sizes_from_the_file():
    spec = taxel.SceneSpec.from_mjcf(HUMANOID, entity="h")
    robot = spec.entities[0]
    assert (robot.name, robot.kind) == ("h", "robot")
    assert [l.name for l in robot.links] == [
        "torso", "head", "lower_waist", "pelvis", "right_thigh", "right_shin", "right_foot", "left_thigh",
        "left_shin", "left_foot", "right_upper_arm", "right_lower_arm", "right_hand", "left_upper_arm",
        "left_lower_arm", "left_hand"]
    links = {l.name: l for l in robot.links}
    assert isinstance(links["head"].shapes[0], taxel.Sphere) and links["head"].shapes[0].radius == 0.09
    # right_upper_arm: fromto="0 0 0 .16 -.16 -.16" size=".04 .16" -> half length .16·√3/2, centre (.08, −.08, −.08)
    arm = links["right_upper_arm"].shapes[0]
    assert isinstance(arm, taxel.Capsule)
    assert arm.radius == 0.04 and math.isclose(arm.half_length, 0.16 * math.sqrt(3) / 2, rel_tol=1e-14)
    np.testing.assert_allclose(arm.pos, (0.08, -0.08, -0.08), atol=1e-15)
    assert arm.quat_order == "wxyz"
    terrain = spec.entities[1]
    assert (terrain.name, terrain.kind) == ("h_terrain", "terrain")
    assert isinstance(terrain.links[0].shapes[0], taxel.HalfSpace)
    assert spec.geom_names["h/right_foot"] == ["right_right_foot", "left_right_foot"]


def test_from_bundle_reads_the_cli_file(tmp_path):
    """A bundle written by `taxel-cli import` to a file reads back as the same spec."""
    out = tmp_path / "h.json"
    with open(out, "w") as f:
        subprocess.run([os.environ["TAXEL_CLI"], "import", HUMANOID, "--bodies=*_foot"], stdout=f, check=True)
    a = taxel.SceneSpec.from_bundle(str(out))
    b = taxel.SceneSpec.from_mjcf(HUMANOID, bodies=["*_foot"])
    assert a.to_proto() == b.to_proto()
    assert [l.name for l in a.entities[0].links] == ["right_foot", "left_foot"]


def test_bodies_glob_and_errors(tmp_path):
    spec = taxel.SceneSpec.from_mjcf(HUMANOID, bodies=["*_hand"], num_envs=8)
    assert spec.num_envs == 8
    assert [l.name for l in spec.entities[0].links] == ["right_hand", "left_hand"]
    with pytest.raises(ValueError, match=r"--bodies: 'wing\*' matches no body"):
        taxel.SceneSpec.from_mjcf(HUMANOID, bodies=["wing*"])
    bad = tmp_path / "bad.xml"
    bad.write_text("<mujoco><worldbody><frobnicate/></worldbody></mujoco>")
    with pytest.raises(ValueError, match="(?s)cannot load .*frobnicate"):
        taxel.SceneSpec.from_mjcf(str(bad))


def test_grid_on_box_face_by_geom_name(tmp_path):
    path = tmp_path / "foot.xml"
    path.write_text(FOOT_XML)
    spec = taxel.SceneSpec.from_mjcf(str(path))
    grid, normal = spec.grid_on_box_face("pad/foot", "sole", face="-z", rows=2, cols=4)
    # Box frame: columns along x at u = −.04 + (j + .5)·.02, rows along y at v = −.02 + (i + .5)·.02,
    # z = −.005; the yaw maps (u, v, z) to (−v, u, z), then + (.01, 0, −.005):
    # p[i, j] = (.01 − v_i, u_j, −.01).
    u = np.array([-0.03, -0.01, 0.01, 0.03])
    v = np.array([-0.01, 0.01])
    expected = np.zeros((2, 4, 3))
    expected[:, :, 0] = (0.01 - v)[:, None]
    expected[:, :, 1] = u[None, :]
    expected[:, :, 2] = -0.01
    np.testing.assert_allclose(grid, expected, atol=1e-15)
    np.testing.assert_allclose(normal, (0, 0, -1), atol=1e-15)
    # The same box by index; a fixed pitch centres the grid.
    g2, _ = spec.grid_on_box_face("foot", 1, face="-z", rows=1, cols=3, pitch=(0.01, 0.01))
    np.testing.assert_allclose(g2[0, :, 1], (-0.01, 0, 0.01), atol=1e-15)
    with pytest.raises(ValueError, match="not a Box"):
        spec.grid_on_box_face("foot", "ankle")
    with pytest.raises(ValueError, match="does not fit"):
        spec.grid_on_box_face("foot", "sole", rows=2, cols=2, pitch=(0.05, 0.01))


def test_imported_sole_reads_the_floor(tmp_path, client, scene_name):
    """The imported floor and a probe grid on the imported sole, the foot 0.5 mm into the floor."""
    path = tmp_path / "foot.xml"
    path.write_text(FOOT_XML)
    spec = taxel.SceneSpec.from_mjcf(str(path), name=scene_name)
    grid, normal = spec.grid_on_box_face("foot", "sole", face="-z", rows=2, cols=4)
    R = 0.001
    spec.add_sensor(taxel.ContactDepthProbe("sole", link="pad/foot", probe_local_pos=grid,
                                            probe_local_normal=normal, probe_radius=R))
    scene = client.create_scene(spec)
    # Foot origin at z = .0095: the sole face (link z = −.01) is at world z = −.0005, so every probe
    # centre is 0.5 mm inside the floor's half-space: depth = R − sd = 1 mm + 0.5 mm.
    poses = np.array([[[0, 0, 0.0095, 1, 0, 0, 0]]])
    r = scene.step(poses, dt=0.01, quat_order="wxyz")
    np.testing.assert_allclose(r["sole"].depth, np.full((1, 2, 4), R + 0.0005), atol=1e-7)


def test_urdf_mesh_is_inline_and_uploads(tmp_path, client, scene_name):
    (tmp_path / "shell.obj").write_text(SHELL_OBJ)
    path = tmp_path / "shelf.urdf"
    path.write_text(SHELL_URDF)
    spec = taxel.SceneSpec.from_urdf(str(path), name=scene_name)
    shell = spec.entities[0].links[0]
    assert (spec.entities[0].name, shell.name) == ("shelf", "shell")
    mesh = shell.shapes[0]
    assert isinstance(mesh, taxel.Mesh) and mesh.vertices.shape == (8, 3)  # MuJoCo's per-face corners welded
    # The file's cuboid, wherever MuJoCo recentred it: the vertices in the link frame are the file's.
    R = np.eye(3) if mesh.quat is None else _matrix_wxyz(mesh.quat)
    p = mesh.vertices @ R.T + np.asarray(mesh.pos)
    corners = np.array([[x, y, z] for x in (0, 0.06) for y in (0, 0.04) for z in (0, 0.02)])
    for c in corners:
        assert np.min(np.linalg.norm(p - c, axis=1)) < 1e-7
    assert spec.entities[1].kind == "static"  # the base (fused into the world body by MuJoCo)
    scene = client.create_scene(spec)
    assert [l for l in scene.info().moving_links] == ["shelf/shell"]


def _matrix_wxyz(q):
    w, x, y, z = np.asarray(q) / np.linalg.norm(q)
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
                     [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
                     [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)]])

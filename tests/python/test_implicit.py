"""Smooth implicit shapes from the Python client: every builder on the wire, a contact probe
pressing an implicit superellipsoid read against its closed-form depth, and a refused exponent.

Geometry: the 3×3 probe grid of conftest (R = 2 mm) and an ellipsoid SE(1; a = 4 cm, b = 3 cm,
c = 2 cm) whose bottom (0, 0, -c) is `gap` above the centre probe: along the axis the foot point
is the bottom itself (symmetry, and the outside problem is convex), so the centre probe reads
R - gap (SE(1) is the ellipsoid up to eps = 1e-12, a shift of ~1e-14 m).
"""
import math

import numpy as np
import pytest

import taxel
from conftest import PROBE_R, pad_and_ball_spec, poses_xyzw

SEMI = (0.04, 0.03, 0.02)


def test_builders_fill_the_implicit_oneof():
    se = taxel.Superellipsoid(4, SEMI).to_proto()
    assert se.WhichOneof("geometry") == "implicit" and se.implicit.WhichOneof("kind") == "superellipsoid"
    assert (se.implicit.superellipsoid.n, tuple(se.implicit.superellipsoid.semi_axes)) == (4.0, SEMI)
    cube = [(1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1)]
    poly = taxel.SmoothPolytope(cube, [0.02] * 6, beta=20).to_proto().implicit.smooth_polytope
    assert list(poly.normals) == [float(x) for row in cube for x in row] and poly.beta == 20
    sec = taxel.SuperellipticCylinder(2, 0.01, 0.03, pos=(0, 0, 0.1)).to_proto()
    assert sec.implicit.superelliptic_cylinder.half_length == 0.03 and tuple(sec.pose.position) == (0, 0, 0.1)
    cone = taxel.TruncatedCone(8, 0.02, 0.01, 0.03, 0.04).to_proto().implicit.truncated_cone
    assert (cone.beta, cone.bottom_radius, cone.top_radius, cone.a, cone.b) == (8, 0.02, 0.01, 0.03, 0.04)
    assert taxel.ImplicitSphere(0.05).to_proto().implicit.sphere.radius == 0.05
    with pytest.raises(ValueError, match="Superellipsoid.semi_axes: expected 3 values, got 2"):
        taxel.Superellipsoid(2, (1, 1))
    with pytest.raises(ValueError, match=r"SmoothPolytope.normals: expected shape \[planes, 3\]"):
        taxel.SmoothPolytope([1, 0, 0], [1], beta=1)


def test_contact_probe_reads_the_closed_form_depth_of_an_ellipsoid(client, scene_name):
    scene = client.create_scene(pad_and_ball_spec(scene_name, ball_shape=taxel.Superellipsoid(1, SEMI)))
    gaps = [0.0015, 0.0005, -0.001]
    bottom = SEMI[2] * math.sqrt(1 - 2e-12 - 1e-16 - 1e-12)  # (z²/c² + ε) + 2ε + 1e-16 = 1, ε = 1e-12
    r = scene.step(poses_xyzw([(0, 0, gap + bottom) for gap in gaps]), dt=0.01, quat_order="xyzw")
    depth = r["depth"]
    for e, gap in enumerate(gaps):
        assert depth.depth[e, 1, 1] == pytest.approx(PROBE_R - gap, abs=1e-7)
        np.testing.assert_allclose(depth.normal[e, 1, 1], (0, 0, -1), atol=1e-6)  # out of the ellipsoid
        assert depth.partner[e, 1, 1] == 1
    scene.delete()


def test_a_fractional_exponent_is_refused_with_its_field(client, scene_name):
    with pytest.raises(taxel.InvalidArgumentError) as err:
        client.create_scene(pad_and_ball_spec(scene_name, ball_shape=taxel.Superellipsoid(2.5, SEMI)))
    assert "entities[1].links[0].shapes[0].implicit.superellipsoid.n: expected an integer in [1, 32], got 2.5" in str(
        err.value)


def test_contact_matrix_gradient_of_two_implicit_spheres(client, scene_name):
    """Two implicit spheres (tip R1 = 3 cm on the robot, ball R2 = 2 cm), centres d = 4.9 cm apart
    along u (overlap δ = 1 mm), at rest, law p = k·δ^1.5. The force on the tip is F = -f(d)·u with
    f = 2π·R_e·k·δ^2.5/2.5 (R_e = R1·R2/(R1 + R2)); its derivative with respect to the ball's
    centre is -f'(d)·uuᵀ - f/d·(I - uuᵀ) with f' = -2π·R_e·k·δ^1.5, and minus that for the tip.
    Link origins at the centres: rotations change nothing."""
    r1, r2, d, k = 0.03, 0.02, 0.049, 1e8
    spec = taxel.SceneSpec(scene_name, num_envs=1, contact_bodies="all", contact_partners="object/*",
                           contact_law=taxel.NonlinearLaw(stiffness=k, exponent=1.5, damping=0),
                           contact_gradients=True)
    spec.robot("hand").link("tip", shapes=[taxel.ImplicitSphere(r1)])
    spec.object("ball", shapes=[taxel.ImplicitSphere(r2)])
    scene = client.create_scene(spec)
    assert scene.info().contact_matrix.gradients
    u = np.array([1.0, 2.0, 2.0]) / 3
    scene.step(poses_xyzw([tuple(d * u)]), dt=0.01, quat_order="xyzw", twists=np.zeros((1, 2, 6)))
    m = scene.contact_matrix(gradients=True)
    assert m.gradient.shape == (1, 1, 1, 3, 2, 6) and m.gradient.dtype == np.float32
    delta, re = r1 + r2 - d, r1 * r2 / (r1 + r2)
    f = 2 * math.pi * re * k * delta ** 2.5 / 2.5
    fprime = -2 * math.pi * re * k * delta ** 1.5
    P = np.outer(u, u)
    dF_dball = -fprime * P - f / d * (np.eye(3) - P)
    np.testing.assert_allclose(m.normal[0, 0, 0], -f * u, rtol=1e-5)
    g = m.gradient[0, 0, 0]
    tol = 1e-5 * np.linalg.norm(dF_dball)
    np.testing.assert_allclose(g[:, 1, :3], dF_dball, atol=tol)
    np.testing.assert_allclose(g[:, 0, :3], -dF_dball, atol=tol)
    np.testing.assert_allclose(g[:, :, 3:], 0, atol=tol)
    scene.delete()


def test_contact_gradients_refuse_other_shapes_and_unkept_reads(client, scene_name):
    def spec(ball_shape, gradients):
        s = taxel.SceneSpec(scene_name, num_envs=1, contact_bodies="all", contact_partners="object/*",
                            contact_gradients=gradients)
        s.robot("hand").link("tip", shapes=[taxel.ImplicitSphere(0.03)])
        s.object("ball", shapes=[ball_shape])
        return s
    with pytest.raises(taxel.InvalidArgumentError) as err:
        client.create_scene(spec(taxel.Sphere(0.02), True))
    assert "contact_matrix.gradients: gradients need implicit shapes on both sides" in str(err.value)
    scene = client.create_scene(spec(taxel.ImplicitSphere(0.02), False))
    with pytest.raises(taxel.FailedPreconditionError, match="does not keep gradients"):
        scene.contact_matrix(gradients=True)
    scene.delete()

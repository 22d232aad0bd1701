"""taxel.grid_points_on_plane against hand-computed grids (core/sensors/probe_layout.h)."""
import math

import numpy as np
import pytest

import taxel


def test_z_normal_spans_x_then_y():
    # Normal +z: u = x, v = y, c = ½(lo + hi)·z = 0.5. Point [i, j] = (lerp(0, 2, j/2), lerp(0, 1, i/1), 0.5).
    g = taxel.grid_points_on_plane((0, 0, 0), (2, 1, 1), (0, 0, 1), nx=3, ny=2)
    assert g.shape == (2, 3, 3) and g.dtype == np.float64
    expected = np.array([[[0, 0, 0.5], [1, 0, 0.5], [2, 0, 0.5]],
                         [[0, 1, 0.5], [1, 1, 0.5], [2, 1, 0.5]]])
    np.testing.assert_array_equal(g, expected)


def test_sign_of_the_normal_does_not_change_the_basis():
    # Normal −z: still u = x, v = y; c·n̂ = (½(lo + hi)·(−z))·(−z) = the same plane height.
    up = taxel.grid_points_on_plane((-1, -1, 0.2), (1, 1, 0.2), (0, 0, 1), 2, 2)
    down = taxel.grid_points_on_plane((-1, -1, 0.2), (1, 1, 0.2), (0, 0, -5), 2, 2)
    np.testing.assert_array_equal(up, down)
    np.testing.assert_array_equal(up[:, :, 2], np.full((2, 2), 0.2))


def test_y_normal_spans_x_then_z():
    # Normal +y: u = x, v = z; every point at y = ½(0 + 0) = 0.
    g = taxel.grid_points_on_plane((0, 0, 0), (1, 0, 3), (0, 1, 0), nx=2, ny=4)
    assert g.shape == (4, 2, 3)
    np.testing.assert_array_equal(g[:, :, 0], [[0, 1]] * 4)
    np.testing.assert_array_equal(g[:, :, 1], np.zeros((4, 2)))
    np.testing.assert_array_equal(g[:, :, 2], [[0, 0], [1, 1], [2, 2], [3, 3]])


def test_x_normal_spans_y_then_z():
    g = taxel.grid_points_on_plane((0.5, -1, -2), (0.5, 1, 2), (-1, 0, 0), nx=3, ny=3)
    np.testing.assert_array_equal(g[:, :, 0], np.full((3, 3), 0.5))
    np.testing.assert_array_equal(g[0, :, 1], [-1, 0, 1])
    np.testing.assert_array_equal(g[:, 0, 2], [-2, 0, 2])


def test_oblique_normal_gram_schmidt():
    # n̂ = (1, 1, 0)/√2: |n_x| = |n_y| ties, the first (x) is dropped; u from y, v from z:
    #   u = y − (y·n̂)n̂ = (−½, ½, 0), normalised (−1/√2, 1/√2, 0);  v = z (already ⟂ n̂ and u).
    # lo = (0, 0, 0), hi = (1, 1, 1): c = ½(hi·n̂) = 1/√2; u0 = 0, u1 = 0; v0 = 0, v1 = 1.
    # So every point is c·n̂ + t_v·z = (½, ½, i/(ny−1)).
    g = taxel.grid_points_on_plane((0, 0, 0), (1, 1, 1), (1, 1, 0), nx=2, ny=3)
    np.testing.assert_allclose(g[..., 0], 0.5, atol=1e-15)
    np.testing.assert_allclose(g[..., 1], 0.5, atol=1e-15)
    np.testing.assert_allclose(g[..., 2], [[0, 0], [0.5, 0.5], [1, 1]], atol=1e-15)


def test_tilted_normal_points_lie_on_the_plane():
    n = np.array([0.3, -0.2, 0.9])
    g = taxel.grid_points_on_plane((0.1, 0.2, 0.3), (0.4, 0.5, 0.6), n, 5, 4)
    n_hat = n / np.linalg.norm(n)
    c = 0.5 * (np.array([0.1, 0.2, 0.3]) + np.array([0.4, 0.5, 0.6])) @ n_hat
    np.testing.assert_allclose(g.reshape(-1, 3) @ n_hat, c, atol=1e-15)
    # Rows are evenly spaced: constant step along each axis of the grid.
    np.testing.assert_allclose(np.diff(g, axis=1), np.broadcast_to(g[:, 1:2] - g[:, 0:1], (4, 4, 3)), atol=1e-15)


def test_single_row_and_column_sit_at_lo():
    g = taxel.grid_points_on_plane((0.25, -0.5, 0), (1, 1, 0), (0, 0, 1), 1, 1)
    np.testing.assert_array_equal(g, [[[0.25, -0.5, 0.0]]])


def test_matches_genesis_pitch_convention():
    # A 16×16 pad of pitch 2 mm centred on the origin: lo = −7.5·pitch, hi = +7.5·pitch.
    pitch = 0.002
    g = taxel.grid_points_on_plane((-7.5 * pitch, -7.5 * pitch, 0), (7.5 * pitch, 7.5 * pitch, 0), (0, 0, 1), 16, 16)
    assert g.shape == (16, 16, 3)
    np.testing.assert_allclose(g[3, 5], ((5 - 7.5) * pitch, (3 - 7.5) * pitch, 0), atol=1e-15)


@pytest.mark.parametrize("args, message", [
    (((0, 0, 0), (1, 1, 0), (0, 0, 1), 0, 2), "nx and ny must be >= 1"),
    (((0, 0, 0), (1, 1, 0), (0, 0, 0), 2, 2), "normal must be a finite, non-zero vector"),
    (((0, 0, math.nan), (1, 1, 0), (0, 0, 1), 2, 2), "lo and hi must be finite"),
    (((0, 0), (1, 1, 0), (0, 0, 1), 2, 2), "3-vectors"),
])
def test_invalid_arguments(args, message):
    with pytest.raises(ValueError, match=message):
        taxel.grid_points_on_plane(*args)

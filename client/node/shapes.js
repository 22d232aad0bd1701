'use strict';
/**
 * Builders of the smooth implicit shapes (taxel.v1.Implicit) as the plain objects the client sends:
 * `{ implicit: { superellipsoid: { n, semi_axes } }, pose }`. Each is a strictly convex shape
 * φ(y) ≤ 0 around the origin of its frame S; probes measure the exact metric distance to its surface
 * (docs/reference.md, "Implicit shapes"). The server validates every parameter and names the field
 * (e.g. `entities[1].links[0].shapes[0].implicit.superellipsoid.n: expected an integer in [1, 32]`).
 * `pose` (optional): `{ position: [x, y, z], quaternion: [...], quat_order: 'XYZW' | 'WXYZ' }`.
 *
 * @example
 *   const { superellipsoid } = require('./shapes');
 *   const soap = { name: 'soap', kind: 'OBJECT', links: [{ name: 'body', shapes: [superellipsoid(4, [0.04, 0.03, 0.02])] }] };
 */

function withPose(implicit, pose) {
  return pose === undefined ? { implicit } : { implicit, pose };
}

function triple(values, what) {
  const a = Array.from(values);
  if (a.length !== 3) throw new RangeError(`${what}: expected 3 values, got ${a.length}`);
  return a;
}

/** |y|²/R² − 1 (m). */
function implicitSphere(radius, pose) {
  return withPose({ sphere: { radius } }, pose);
}

/** SE(n; a, b, c); `n` an integer in [1, 32] (1: the ellipsoid; large n approaches the box). */
function superellipsoid(n, semiAxes, pose) {
  return withPose({ superellipsoid: { n, semi_axes: triple(semiAxes, 'superellipsoid semiAxes') } }, pose);
}

/** The half-spaces normals[i]·y ≤ offsets[i] (normals: [[x, y, z], ...]) blended with sharpness beta. */
function smoothPolytope(normals, offsets, beta, pose) {
  const flat = normals.flatMap((row, i) => triple(row, `smoothPolytope normals[${i}]`));
  return withPose({ smooth_polytope: { normals: flat, offsets: Array.from(offsets), beta } }, pose);
}

/** Axis +x: (((x/h)² + ε)ⁿ + ((y² + z²)/R² + ε)ⁿ)^(1/2n) − 1. */
function superellipticCylinder(n, radius, halfLength, pose) {
  return withPose({ superelliptic_cylinder: { n, radius, half_length: halfLength } }, pose);
}

/** Axis +x from x = −a (radius bottomRadius) to x = +b (radius topRadius), sharpness beta > ln 3. */
function truncatedCone(beta, bottomRadius, topRadius, a, b, pose) {
  return withPose({ truncated_cone: { beta, bottom_radius: bottomRadius, top_radius: topRadius, a, b } }, pose);
}

module.exports = { implicitSphere, superellipsoid, smoothPolytope, superellipticCylinder, truncatedCone };

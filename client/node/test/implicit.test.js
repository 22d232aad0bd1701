'use strict';
// Implicit shapes from the Node client against a real taxel-server (TAXEL_SERVER_BINARY): the
// builders' objects, and a ContactDepthProbe pressing an ellipsoid SE(1; 4, 3, 2 cm) read against its
// closed form. Along the axis the foot point is the ellipsoid's bottom (0, 0, −c) (symmetry; the
// outside problem is convex), so the centre probe (R = 2 mm) reads R − gap, the gap between the
// probe centre and that bottom. SE(1) is the ellipsoid up to ε = 1e-12: c' = c·√(1 − 3ε − 1e-16).
const { test, describe, before, after } = require('node:test');
const assert = require('node:assert/strict');

const { TaxelClient, TaxelError, tensor, superellipsoid, smoothPolytope, truncatedCone, implicitSphere } = require('..');
const { SERVER, startServer, stopServer } = require('./servers');

const R = 0.002;
const SEMI = [0.04, 0.03, 0.02];

function spec(shape) {
  return {
    name: 'implicit',
    num_envs: 3,
    entities: [
      { name: 'hand', kind: 'ROBOT', links: [{ name: 'pad' }] },
      { name: 'soap', kind: 'OBJECT', links: [{ name: 'body', shapes: [shape] }] },
    ],
    sensors: [{
      name: 'depth',
      kind: 'CONTACT_DEPTH_PROBE',
      link: 'pad',
      probe_local_pos: tensor(new Float64Array([0, 0, 0]), [1, 1, 3]),
      probe_radius: tensor(new Float64Array([R]), []),
    }],
  };
}

describe('implicit shape builders', () => {
  test('plain objects with the wire field names', () => {
    assert.deepEqual(superellipsoid(4, SEMI), { implicit: { superellipsoid: { n: 4, semi_axes: SEMI } } });
    const cube = [[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]];
    assert.equal(smoothPolytope(cube, Array(6).fill(0.02), 20).implicit.smooth_polytope.normals.length, 18);
    assert.equal(truncatedCone(8, 0.02, 0.01, 0.03, 0.04).implicit.truncated_cone.top_radius, 0.01);
    assert.throws(() => superellipsoid(2, [1, 1]), /expected 3 values, got 2/);
  });
});

describe('implicit shapes against taxel-server', { skip: SERVER ? false : 'TAXEL_SERVER_BINARY not set' }, () => {
  let server;
  let client;
  before(async () => {
    server = await startServer();
    client = new TaxelClient(`127.0.0.1:${server.port}`, { timeoutMs: 10000 });
  });
  after(async () => {
    if (client) client.close();
    if (server) assert.equal(await stopServer(server), 0, server.log());
  });

  test('a contact probe reads R − gap under an ellipsoid', async () => {
    await client.createScene(spec(superellipsoid(1, SEMI)));
    const bottom = SEMI[2] * Math.sqrt(1 - 3e-12 - 1e-16);
    const gaps = [0.0015, 0.0005, -0.001];
    const poses = new Float64Array(gaps.flatMap((g) => [0, 0, 0, 0, 0, 0, 1, 0, 0, g + bottom, 0, 0, 0, 1]));
    const r = await client.step({ scene: 'implicit', poses, quatOrder: 'XYZW', dt: 0.01 });
    const depth = r.get('depth', 'depth').data;
    gaps.forEach((g, e) => assert.ok(Math.abs(depth[e] - (R - g)) <= 1e-7, `env ${e}: ${depth[e]} vs ${R - g}`));
    await client.deleteScene('implicit');
  });

  // Two implicit spheres (tip R1 = 3 cm, ball R2 = 2 cm), centres d = 4.9 cm apart along u (overlap
  // δ = 1 mm), at rest, pressure p = k·δ^1.5: the force on the tip is F = −f(d)·u with
  // f = 2π·R_e·k·δ^2.5/2.5, R_e = R1·R2/(R1 + R2); ∂F/∂c_ball = −f'(d)·uuᵀ − f/d·(I − uuᵀ) with
  // f' = −2π·R_e·k·δ^1.5, and ∂F/∂c_tip is minus that.
  test('the contact matrix gradient of two implicit spheres is the closed form', async () => {
    const r1 = 0.03; const r2 = 0.02; const d = 0.049; const k = 1e8;
    await client.createScene({
      name: 'pair', num_envs: 1,
      entities: [
        { name: 'hand', kind: 'ROBOT', links: [{ name: 'tip', shapes: [implicitSphere(r1)] }] },
        { name: 'ball', kind: 'OBJECT', links: [{ name: 'body', shapes: [implicitSphere(r2)] }] },
      ],
      contact_matrix: { bodies: ['all'], partners: ['object/*'], gradients: true,
        law: { stiffness: k, exponent: 1.5, damping: 0 } },
    });
    const u = [1 / 3, 2 / 3, 2 / 3];
    const poses = new Float64Array([0, 0, 0, 0, 0, 0, 1, d * u[0], d * u[1], d * u[2], 0, 0, 0, 1]);
    await client.step({ scene: 'pair', poses, twists: new Float64Array(12), quatOrder: 'XYZW', dt: 0.01 });
    const m = await client.contactMatrix('pair', { gradients: true });
    assert.deepEqual(m.gradient.shape, [1, 1, 1, 3, 2, 6]);
    const delta = r1 + r2 - d; const re = (r1 * r2) / (r1 + r2);
    const f = (2 * Math.PI * re * k * delta ** 2.5) / 2.5;
    const fp = -2 * Math.PI * re * k * delta ** 1.5;
    const g = m.gradient.data;
    const tol = 1e-5 * Math.abs(fp);  // float32 cells
    let scale = 0;
    for (let i = 0; i < 3; i++) {
      for (let j = 0; j < 3; j++) {
        const want = -fp * u[i] * u[j] - (f / d) * ((i === j ? 1 : 0) - u[i] * u[j]);
        scale = Math.max(scale, Math.abs(want));
        assert.ok(Math.abs(g[i * 12 + 6 + j] - want) <= tol, `ball ${i}${j}: ${g[i * 12 + 6 + j]} vs ${want}`);
        assert.ok(Math.abs(g[i * 12 + j] + want) <= tol, `tip ${i}${j}: ${g[i * 12 + j]} vs ${-want}`);
      }
    }
    assert.ok(scale > 50, `f' is about 240 N/m here, got ${scale}`);
    await client.deleteScene('pair');
  });

  test('a fractional exponent is INVALID_ARGUMENT naming the field', async () => {
    await assert.rejects(client.createScene(spec(superellipsoid(2.5, SEMI))), (e) => {
      assert.ok(e instanceof TaxelError);
      assert.equal(e.codeName, 'INVALID_ARGUMENT');
      assert.match(e.message, /shapes\[0\]\.implicit\.superellipsoid\.n: expected an integer in \[1, 32\], got 2\.5/);
      return true;
    });
  });
});

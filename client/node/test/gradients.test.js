'use strict';
// read.gradients through the Node client against a real taxel-server: the [E, n, 2, 6] array and
// its values against a hand calculation.
const { test, describe, before, after } = require('node:test');
const assert = require('node:assert/strict');

const { TaxelClient, tensor } = require('..');
const { startServer, stopServer } = require('./servers');

// A 2×2 ContactDepthProbe pad (pitch 1 cm, z = 0, R = 2 mm) on hand/pad at the origin (identity
// rotation), pressed by the bottom face z = cz − 0.05 of a box (half extent 5 cm) centred at
// (0, 0, cz). Every probe centre o sees that face: normal out of the box n = (0, 0, −1), and
//   ∂d/∂t_pad = −n = (0, 0, 1)         ∂d/∂θ_pad = −(o − 0) × n = o × e_z = (o_y, −o_x, 0)
//   ∂d/∂t_box = n = (0, 0, −1)         ∂d/∂θ_box = (o − c) × n = −(o − c) × e_z = (−o_y, o_x, 0)
// Env 1's box is out of reach: zeros.
const R = 0.002;
const PROBES = [[-0.005, -0.005], [0.005, -0.005], [-0.005, 0.005], [0.005, 0.005]];

describe('gradients', () => {
  let server;
  let client;

  before(async () => {
    server = await startServer();
    client = new TaxelClient(`127.0.0.1:${server.port}`, { timeoutMs: 10000 });
    await client.createScene({
      name: 'grad',
      num_envs: 2,
      entities: [
        { name: 'hand', kind: 'ROBOT', links: [{ name: 'pad' }] },
        { name: 'box', kind: 'OBJECT', links: [{ name: 'body', shapes: [{ box: { half_extents: [0.05, 0.05, 0.05] } }] }] },
      ],
      sensors: [{
        name: 'depth',
        kind: 'CONTACT_DEPTH_PROBE',
        link: 'pad',
        probe_local_pos: tensor(new Float64Array(PROBES.flatMap(([x, y]) => [x, y, 0])), [2, 2, 3]),
        probe_radius: tensor(new Float64Array([R]), []),
      }],
    });
  });

  after(async () => {
    if (client) client.close();
    if (server) await stopServer(server);
  });

  test('step with read.gradients: [E, 2, 2, 2, 6] matching the hand calculation', async () => {
    const poses = new Float64Array([0, 0, 0, 0, 0, 0, 1, 0, 0, 0.0495, 0, 0, 0, 1,
      0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 1]);
    const r = await client.step({ scene: 'grad', poses, quatOrder: 'XYZW', dt: 0.01, read: { gradients: true } });
    const g = r.gradient('depth');
    assert.equal(g.dtype, 'FLOAT32');
    assert.deepEqual(g.shape, [2, 2, 2, 2, 6]);
    assert.deepEqual(r.get('depth', 'depth_gradient').shape, g.shape);
    const want = PROBES.flatMap(([x, y]) => [0, 0, 1, y, -x, 0, 0, 0, -1, -y, x, 0]);
    for (let i = 0; i < want.length; i++) {
      assert.ok(Math.abs(g.data[i] - want[i]) < 1e-7, `env 0 [${i}]: ${g.data[i]} != ${want[i]}`);
    }
    for (let i = want.length; i < 2 * want.length; i++) assert.equal(g.data[i], 0, `env 1 [${i}]`);
    const plain = await client.step({ scene: 'grad', poses, quatOrder: 'XYZW', dt: 0.01 });
    assert.throws(() => plain.gradient('depth'), /no gradient for sensor 'depth'/);
  });
});

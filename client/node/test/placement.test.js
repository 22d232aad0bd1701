'use strict';
// Placement (../placement.js) on its own, and ReplicaSet over three real servers with failover.
const { test, describe, before, after } = require('node:test');
const assert = require('node:assert/strict');

const { ReplicaSet, resolveTargets, placement, tensor, TaxelClient, status } = require('..');
const { startServer, stopServer } = require('./servers');

// SipHash-2-4 reference vectors: key 00..0f, message 00 01 .. n-1 (the reference
// implementation's vectors.h; n = 0 and 15 also in the paper, Appendix A).
const SIPHASH_VECTORS = new Map([
  [0, 0x726fdb47dd0e0e31n], [1, 0x74f839c593dc67fdn], [7, 0xab0200f58b01d137n],
  [8, 0x93f5f5799a932462n], [15, 0xa129ca6149be45e5n], [63, 0x958a324ceb064572n],
]);

test('siphash24: the reference vectors', () => {
  for (const [n, expected] of SIPHASH_VECTORS) {
    const msg = Buffer.from([...Array(n).keys()]);
    assert.equal(placement.siphash24(placement.PLACEMENT_KEY, msg), expected, `n = ${n}`);
  }
});

test('score: equal to OpenSSL 3 SIPHASH over replica NUL tenant "/" name', () => {
  assert.equal(placement.score('taxel-0', '', 'grasp'), 0xe6d25cac3d524a2an);
  assert.equal(placement.score('taxel-1', 'alice', 'scene-7'), 0x1d3ceddf8080a2b4n);
  assert.equal(placement.score('taxel-2', 'bob', 'humanoid-\u00fc'), 0xe444a3eb82dc9ad1n);
});

test('a fourth replica takes about a quarter of 100 scenes, and nothing else moves', () => {
  const three = ['taxel-0', 'taxel-1', 'taxel-2'];
  const four = [...three, 'taxel-3'];
  const tenants = ['', 'alice', 'bob', 'team-7'];
  let moved = 0;
  for (let i = 0; i < 100; i++) {
    const name = `scene-${String(i).padStart(3, '0')}`;
    const before = placement.place(three, tenants[i % 4], name);
    const after = placement.place(four, tenants[i % 4], name);
    if (before !== after) {
      moved++;
      assert.equal(after, 'taxel-3', `${name} moved between old replicas`);
    }
  }
  // Binomial(100, 1/4): mean 25, sigma 4.33; within 3 sigma.
  assert.ok(moved >= 12 && moved <= 38, `moved ${moved}`);
  assert.throws(() => placement.place([], '', 'x'), /place: no replicas/);
});

test('resolveTargets: dns entries become addresses', async () => {
  assert.deepEqual(await resolveTargets(['a:1', 'dns:///127.0.0.1:50051', 'a:1']), ['a:1', '127.0.0.1:50051']);
  assert.ok((await resolveTargets('dns:///localhost:9')).includes('127.0.0.1:9'));
  await assert.rejects(resolveTargets(['a:1', 'dns:///nohost']),
    /targets\[1\]: expected host:port with a port in 1..65535, got 'nohost'/);
});

const R = 0.002;
const BALL_Z = 0.049;

/** The 3×3 pad (pitch 1 cm, probes radius R at z = 0) under a 5 cm ball; 2 envs. */
function padSpec(name) {
  const grid = [];
  for (let i = 0; i < 3; i++) for (let j = 0; j < 3; j++) grid.push((j - 1) * 0.01, (i - 1) * 0.01, 0);
  return {
    name,
    num_envs: 2,
    seed: 3,
    entities: [
      { name: 'hand', kind: 'ROBOT', links: [{ name: 'pad' }] },
      { name: 'ball', kind: 'OBJECT', links: [{ name: 'body', shapes: [{ sphere: { radius: 0.05 } }] }] },
    ],
    sensors: [{
      name: 'depth', kind: 'CONTACT_DEPTH_PROBE', link: 'pad',
      probe_local_pos: tensor(new Float64Array(grid), [3, 3, 3]), probe_radius: tensor(new Float64Array([R]), []),
    }],
  };
}

/** Poses [2, 2, 7] xyzw: env 0 presses the ball to centre height z, env 1 holds it far away. */
function poses(z) {
  return tensor(new Float64Array([0, 0, 0, 0, 0, 0, 1, 0, 0, z, 0, 0, 0, 1,
    0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 1]), [2, 2, 7]);
}

describe('ReplicaSet over three servers', () => {
  let servers = [];
  before(async () => {
    servers = await Promise.all([0, 1, 2].map((i) => startServer([`--replica_id=taxel-${i}`])));
  });
  after(async () => {
    for (const s of servers) await stopServer(s);
  });

  const targets = () => servers.map((s) => `127.0.0.1:${s.port}`);

  async function holders(name) {
    const out = [];
    for (const [i, s] of servers.entries()) {
      if (s.proc.exitCode !== null || s.proc.signalCode !== null) continue;
      const c = new TaxelClient(`127.0.0.1:${s.port}`, { timeoutMs: 10000 });
      if ((await c.listScenes()).some((x) => x.name === name)) out.push(`taxel-${i}`);
      c.close();
    }
    return out;
  }

  test('scenes live on their placed replica', async () => {
    const rs = await ReplicaSet.connect(targets(), { timeoutMs: 10000 });
    try {
      assert.deepEqual(rs.replicaIds, ['taxel-0', 'taxel-1', 'taxel-2']);
      for (let i = 0; i < 6; i++) {
        const name = `placed-${i}`;
        await rs.createScene(padSpec(name));
        assert.deepEqual(await holders(name), [placement.place(rs.replicaIds, '', name)], name);
      }
      assert.equal((await rs.listScenes()).length, 6);
      for (let i = 0; i < 6; i++) await rs.deleteScene(`placed-${i}`);
      assert.equal((await rs.listScenes()).length, 0);
    } finally {
      rs.close();
    }
  });

  test('failover: SIGKILL a replica, its scenes are re-created on their second choice', async () => {
    const rs = await ReplicaSet.connect(targets(), { timeoutMs: 10000, autoRecreate: true });
    try {
      const names = [...Array(12).keys()].map((i) => `fo-${i}`);
      const home = new Map();
      for (const n of names) {
        await rs.createScene(padSpec(n));
        home.set(n, rs.replicaOf(n));
        await rs.step({ scene: n, poses: poses(BALL_Z), quatOrder: 'XYZW', dt: 0.01 });
      }
      const victim = home.get(names[0]);
      const proc = servers[Number(victim.split('-')[1])].proc;
      const exited = new Promise((resolve) => proc.on('exit', resolve));
      proc.kill('SIGKILL');
      await exited;
      for (const n of names) {
        const r = await rs.step({ scene: n, poses: poses(BALL_Z), quatOrder: 'XYZW', dt: 0.01 });
        const moved = home.get(n) === victim;
        assert.equal(r.step, moved ? 1 : 2, n);
        assert.equal(rs.recreations(n), moved ? 1 : 0, n);
        const expectedHome = moved ? placement.rank(['taxel-0', 'taxel-1', 'taxel-2'], '', n)[1] : home.get(n);
        assert.deepEqual(await holders(n), [expectedHome], n);
        // Centre probe: R − (BALL_Z − r) = 2 mm + 1 mm; env 1 out of reach.
        const depth = r.get('depth', 'depth').data;
        assert.ok(Math.abs(depth[4] - 0.003) < 1e-6, `${n}: centre depth ${depth[4]}`);
        assert.equal(Math.max(...depth.slice(9)), 0);
      }
      assert.ok(!rs.replicaIds.includes(victim));
    } finally {
      rs.close();
    }
  });

  test('without autoRecreate a lost replica is an error', async () => {
    const live = servers.filter((s) => s.proc.exitCode === null && s.proc.signalCode === null);
    const rs = await ReplicaSet.connect(live.map((s) => `127.0.0.1:${s.port}`), { timeoutMs: 10000 });
    try {
      await rs.createScene(padSpec('plain'));
      const owner = rs.replicaOf('plain');
      const s = servers[Number(owner.split('-')[1])];
      await stopServer(s);
      await assert.rejects(rs.step({ scene: 'plain', poses: poses(BALL_Z), quatOrder: 'XYZW', dt: 0.01 }),
        (e) => e.code === status.UNAVAILABLE);
    } finally {
      rs.close();
    }
  });
});

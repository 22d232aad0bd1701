'use strict';
// Steps and reads of any size (README, "Steps of any size"): the size estimate and the part
// requests on their own, then against a real taxel-server started with --max_message_bytes=1 MiB,
// where a step of several MiB of readings (or of poses) goes as parts over env ranges and must
// equal, bit for bit, a twin scene (same spec and seed) stepped by hand in small env slices.
const { test, describe, before, after } = require('node:test');
const assert = require('node:assert/strict');

const { TaxelClient, tensor, fromTensor } = require('..');
const split = require('../split');
const { SERVER, startServer, stopServer } = require('./servers');

const MIB = 1024 * 1024;

// A 32×32 grid, pitch 2 mm, centred on the link origin in its z = 0 plane.
function grid32() {
  const p = new Float64Array(32 * 32 * 3);
  for (let i = 0; i < 32; i++) {
    for (let j = 0; j < 32; j++) {
      p[3 * (32 * i + j)] = 0.002 * (j - 15.5);
      p[3 * (32 * i + j) + 1] = 0.002 * (i - 15.5);
    }
  }
  return p;
}

// Two KinematicTaxel pads (hand/left, hand/right; 32×32, radius 1 mm, white noise on MEASURED),
// each on a 1 mm thick plate whose top face is the probes' plane (each sensor ignores the other
// pad), and a ball of radius 1 cm; the contact matrix of both pads against the ball, with friction.
function padsSpec(name, numEnvs) {
  const plate = { pose: { position: [0, 0, -0.0005] }, box: { half_extents: [0.032, 0.032, 0.0005] } };
  const sensor = (link) => ({
    name: link, kind: 'KINEMATIC_TAXEL', link: `hand/${link}`, filter_links: [`hand/${link === 'left' ? 'right' : 'left'}`],
    probe_local_pos: tensor(grid32(), [32, 32, 3]), probe_radius: tensor(new Float64Array([0.001]), []),
    imperfections: { noise: 0.01, history_length: 3 },
  });
  return {
    name, num_envs: numEnvs, seed: 7,
    entities: [{ name: 'hand', kind: 'ROBOT', links: [{ name: 'left', shapes: [plate] }, { name: 'right', shapes: [plate] }] },
      { name: 'ball', kind: 'OBJECT', links: [{ name: 'b', shapes: [{ sphere: { radius: 0.01 } }] }] }],
    sensors: [sensor('left'), sensor('right')],
    contact_matrix: { bodies: ['hand/left', 'hand/right'], partners: ['object/ball'], friction: true },
  };
}

// Poses [n, 3, 7] (XYZW) of step s for the envs `envs`: left pad at the origin, right pad 3 mm
// along x, the ball over the pads, its bottom 0.3 mm to 0.9 mm below the probe centres, so that
// the probe spheres (1 mm) under it press and the others read 0.
function padsPoses(envs, s) {
  const out = new Float64Array(envs.length * 21);
  envs.forEach((e, i) => {
    const o = 21 * i;
    out.set([0, 0, 0, 0, 0, 0, 1, 0.003, 0, 0, 0, 0, 0, 1], o);
    out.set([0.002 * ((e % 7) - 3), 0.001 * (e % 5), 0.0097 - 0.0002 * s - 0.00001 * e, 0, 0, 0, 1], o + 14);
  });
  return out;
}

// The twin, by hand: `envs` in slices of `size`, each an explicit env_ids request, the 2nd, 3rd,
// ... with continues_step; the slices' readings (dense) concatenated along the env axis here.
async function stepInSlices(client, scene, envs, s, read, size) {
  const slices = [];
  for (let at = 0; at < envs.length; at += size) {
    const ids = envs.slice(at, at + size);
    slices.push(await client.call('Step', {
      scene, env_ids: ids, poses: tensor(padsPoses(ids, s), [ids.length, 3, 7]), quat_order: 'XYZW', dt: 0.01,
      read, continues_step: at > 0,
    }));
  }
  return slices;
}

// Readings of raw responses (dense), concatenated per (sensor, branch, channel): name -> bytes.
function sliceBytes(responses, field = 'readings') {
  const out = new Map();
  for (const r of responses) {
    for (const reading of r[field]) {
      for (const [channel, t] of Object.entries(reading.channels)) {
        const key = `${reading.sensor}/${reading.branch}/${channel}`;
        out.set(key, Buffer.concat([out.get(key) || Buffer.alloc(0), t.data]));
      }
    }
  }
  return out;
}

// The joined result's readings as the same map (TypedArray bytes).
function resultBytes(result) {
  const out = new Map();
  for (const reading of result.readings) {
    for (const [channel, c] of Object.entries(reading.channels)) {
      out.set(`${reading.sensor}/${reading.branch}/${channel}`, Buffer.from(c.data.buffer, c.data.byteOffset, c.data.byteLength));
    }
  }
  return out;
}

function assertClose(actual, expected, what) {
  assert.equal(actual.length, expected.length, what);
  actual.forEach((v, i) => assert.ok(Math.abs(v - expected[i]) < 1e-6, `${what}[${i}]: ${v} != ${expected[i]}`));
}

function assertSameBytes(actual, expected, what) {
  assert.deepEqual([...actual.keys()].sort(), [...expected.keys()].sort(), `${what}: readings`);
  for (const [key, bytes] of expected) assert.ok(actual.get(key).equals(bytes), `${what}: ${key} differs`);
}

// Records the unary calls a client makes (method, number of env ids, continues_step, outcome).
function spy(client) {
  const log = [];
  const call = client.call.bind(client);
  client.call = async (method, request) => {
    const entry = { method, envs: (request.env_ids || []).length, continues: !!request.continues_step };
    log.push(entry);
    try {
      return await call(method, request);
    } catch (e) {
      entry.error = e.codeName;
      throw e;
    }
  };
  return log;
}

describe('split helpers', () => {
  // The SceneInfo of padsSpec(·, 4) as the server returns it (abridged).
  const outputs = [{ channel: 'force', dtype: 'FLOAT32', shape: [4, 32, 32, 3] }, { channel: 'torque', dtype: 'FLOAT32', shape: [4, 32, 32, 3] }];
  const scene = {
    name: 'p', num_envs: 4, moving_links: ['hand/left', 'hand/right', 'ball/b'], links: [{}, {}, {}],
    sensors: [{ name: 'left', outputs }, { name: 'right', outputs }],
    contact_matrix: { rows: ['left', 'right'], columns: ['object/ball'], friction: true },
  };

  test('responseBytes: per env and fixed, by hand', () => {
    // MEASURED only: 5 + 2 sensors × 2 channels × 1024·3 values × 4 B = 5 + 49152;
    // fixed 1024 + 192 × 2 readings + 64 × 4 tensors = 1664.
    assert.deepEqual(split.responseBytes(scene, {}), { perEnv: 49157, fixed: 1664 });
    // Both branches, sparse: 5 + 2 × 2 × 2 × (12288 + 3072/8) = 5 + 8 × 12672; fixed 1024 + 192·4 + 64·8.
    assert.deepEqual(split.responseBytes(scene, { branches: ['MEASURED', 'GROUND_TRUTH'], sparse: true }),
      { perEnv: 101381, fixed: 2304 });
    // One sensor, one channel, history 3: 5 + 3 × 12288; fixed 1024 + 192 + 64.
    assert.deepEqual(split.responseBytes(scene, { sensors: ['right'], channels: ['force'] }, 3), { perEnv: 36869, fixed: 1280 });
    // read.none with the contact matrix: 5 + (2 rows × 1 column × 3 × 4 × 2 tensors + 5) per env;
    // fixed 1024 + 256 + names (4+8 + 5+8 + 11+8) = 1324.
    assert.deepEqual(split.responseBytes(scene, { none: true, contact_matrix: true }), { perEnv: 58, fixed: 1324 });
  });

  test('requestBytes and envsPerPart: the formula by hand', () => {
    const req = { poses: { dtype: 'FLOAT64' }, twists: { dtype: 'FLOAT32' } };
    // The env id (5) + 3 links × (7 × 8 + 6 × 4) = 245 per env.
    assert.deepEqual(split.requestBytes(req, scene), { perEnv: 245, fixed: 0 });
    // floor((0.9 × 1 MiB − 1664) / max(49157, 245)) = floor(942054.4 / 49157) = 19.
    assert.equal(split.envsPerPart(MIB, { perEnv: 49157, fixed: 1664 }, { perEnv: 245, fixed: 0 }), 19);
    // Requests larger per env than responses: floor((943718.4 − 100) / 50000) = 18; never below 1.
    assert.equal(split.envsPerPart(MIB, { perEnv: 10, fixed: 100 }, { perEnv: 50000, fixed: 0 }), 18);
    // Reported contacts: the env with the most (env 4: 2) × (3 × 4 + 3 × 8 force + 3 × 4 friction).
    const contacts = { force: { dtype: 'FLOAT64' }, friction: { dtype: 'FLOAT32' } };
    assert.equal(split.requestBytes({ ...req, contacts }, scene, new Int32Array([4, 1, 4])).perEnv, 245 + 2 * 48);
    assert.equal(split.envsPerPart(1000, { perEnv: 1e6, fixed: 0 }), 1);
    assert.deepEqual(split.envRanges(10, 4), [[0, 4], [4, 8], [8, 10]]);
  });

  test('resolveEnvs: the server rules, field and code', () => {
    assert.deepEqual(split.resolveEnvs([], 3).envs, [0, 1, 2]);
    assert.deepEqual(split.resolveEnvs([2, 0], 3).envs, [2, 0]);
    assert.deepEqual(split.resolveEnvs([0, 3], 3).error, { code: 'OUT_OF_RANGE', field: 'env_ids[1]', description: 'env id 3 out of range [0, 3)' });
    assert.deepEqual(split.resolveEnvs([1, 1], 3).error, { code: 'INVALID_ARGUMENT', field: 'env_ids[1]', description: 'env id 1 appears more than once' });
  });

  test('partStepRequest: poses rows, contacts of the part\'s envs, continues_step', () => {
    // 3 envs [2, 0, 1] × 1 link, poses value = 10·position + column; 4 contacts in envs 0, 1, 0, 2.
    const poses = new Float64Array(21).map((_, i) => 10 * Math.floor(i / 7) + (i % 7));
    const req = {
      scene: 'x', env_ids: [2, 0, 1], poses: tensor(poses, [3, 1, 7]), dt: 0.01, quat_order: 'XYZW',
      contacts: {
        env: tensor(new Int32Array([0, 1, 0, 2])), body: tensor(new Int32Array([5, 6, 7, 8])),
        partner: tensor(new Int32Array([1, 1, 1, 1])), force: tensor(new Float64Array([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]), [4, 3]),
      },
    };
    const plan = { envs: [2, 0, 1], contactEnv: new Int32Array([0, 1, 0, 2]) };
    const p = split.partStepRequest(req, plan, 1, 3, 1);   // envs 0 and 1: pose rows 1 and 2
    assert.deepEqual(p.env_ids, [0, 1]);
    assert.equal(p.continues_step, true);
    assert.deepEqual(p.poses.shape, [2, 1, 7]);
    assert.deepEqual(Array.from(new Float64Array(p.poses.data.buffer.slice(p.poses.data.byteOffset, p.poses.data.byteOffset + 112))),
      [10, 11, 12, 13, 14, 15, 16, 20, 21, 22, 23, 24, 25, 26]);
    // Contacts 0, 1, 2 (envs 0, 1, 0), in their order; contact 3 (env 2) goes with the other part.
    assert.deepEqual(Array.from(fromTensor(p.contacts.env).data), [0, 1, 0]);
    assert.deepEqual(Array.from(fromTensor(p.contacts.body).data), [5, 6, 7]);
    assert.deepEqual(Array.from(fromTensor(p.contacts.force).data), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
    assert.equal(p.contacts.friction, undefined);
    const first = split.partStepRequest(req, plan, 0, 1, 0);
    assert.equal(first.continues_step, false);
    assert.deepEqual(Array.from(fromTensor(first.contacts.body).data), [8]);
    // A flat [E·L, 7] poses tensor slices the same rows.
    const flat = split.partStepRequest({ ...req, poses: tensor(poses, [3, 7]) }, plan, 1, 3, 1);
    assert.deepEqual(flat.poses.shape, [2, 7]);
    assert.ok(flat.poses.data.equals(p.poses.data));
  });

  test('planStep: client-side checks before any part is sent', () => {
    const req = { scene: 'p', poses: tensor(new Float64Array(40 * 21), [40, 3, 7]), read: {} };
    const big = { ...scene, num_envs: 40 };
    const plan = split.planStep(req, big, MIB);
    assert.equal(plan.whole, false);
    assert.equal(plan.perPart, 19);
    assert.deepEqual(split.planStep(req, { ...scene, num_envs: 30 }, MIB).error,  // 40 rows for 30 envs
      { code: 'INVALID_ARGUMENT', field: 'poses', description: 'expected shape [30, 3, 7] or [90, 7], got [40, 3, 7]' });
    const bad = split.planStep({ ...req, env_ids: Array.from({ length: 40 }, (_, e) => (e === 5 ? 100 : e)) }, { ...big, num_envs: 100 }, MIB);
    assert.deepEqual(bad.error, { code: 'OUT_OF_RANGE', field: 'env_ids[5]', description: 'env id 100 out of range [0, 100)' });
    assert.equal(split.planStep(req, big, 100 * MIB).whole, true);
  });
});

describe('steps and reads over the message limit', { skip: SERVER ? false : 'TAXEL_SERVER_BINARY not set' }, () => {
  const E = 40;   // 40 envs × ~98 KB of readings (both branches) = ~3.9 MB, the limit 1 MiB
  const all = Array.from({ length: E }, (_, e) => e);
  let server;
  let client;
  let twin;       // the hand-sliced twin's client (never splits)
  let log;

  before(async () => {
    server = await startServer([`--max_message_bytes=${MIB}`]);
    const target = `127.0.0.1:${server.port}`;
    client = new TaxelClient(target, { timeoutMs: 30000 });
    twin = new TaxelClient(target, { timeoutMs: 30000, splitByEnvs: false });
    await client.createScene(padsSpec('whole', E));
    await twin.createScene(padsSpec('twin', E));
    log = spy(client);
  });

  after(async () => {
    if (client) client.close();
    if (twin) twin.close();
    if (server) assert.equal(await stopServer(server), 0, server.log());
  });

  test('without splitting, the step is refused naming read and --max_message_bytes', async () => {
    const err = await twin.step({ scene: 'twin', poses: padsPoses(all, 0), quatOrder: 'XYZW', dt: 0.01 }).catch((e) => e);
    assert.equal(err.codeName, 'RESOURCE_EXHAUSTED');
    assert.equal(err.fieldViolations[0].field, 'read');
    assert.match(err.details, /--max_message_bytes/);
    assert.equal((await twin.getScene('twin')).step, 0, 'nothing changed');
  });

  test('dense, sparse, with the contact matrix: the split step equals the twin stepped in slices', async () => {
    const both = ['MEASURED', 'GROUND_TRUTH'];
    const reads = [{ branches: both }, { branches: both, sparse: true }, { branches: both, sparse: true, contact_matrix: true }];
    for (let s = 0; s < reads.length; s++) {
      log.length = 0;
      const r = await client.step({ scene: 'whole', poses: padsPoses(all, s), quatOrder: 'XYZW', dt: 0.01, read: reads[s] });
      // Parts: floor((0.9 MiB − fixed) / per env) = 9 envs (split helpers test: 98309 or 101381
      // bytes per env), so 40 envs go as 9 + 9 + 9 + 9 + 4, the 2nd to 5th with continues_step.
      assert.deepEqual(log.filter((c) => c.method === 'Step').map((c) => [c.envs, c.continues]),
        [[9, false], [9, true], [9, true], [9, true], [4, true]], `step ${s}`);
      assert.equal(r.step, s + 1, 'one logical step');
      assert.deepEqual(r.env_ids, all);
      const dense = { branches: both, contact_matrix: reads[s].contact_matrix };
      const slices = await stepInSlices(twin, 'twin', all, s, dense, 4);
      assert.equal(slices[slices.length - 1].step, s + 1);
      assertSameBytes(resultBytes(r), sliceBytes(slices), `step ${s}`);
      // Not only zeros, not only contact: some taxels press, others read 0, and noise makes MEASURED differ.
      const force = r.get('left', 'force').data;
      const gt = r.get('left', 'force', 'GROUND_TRUTH').data;
      assert.ok(gt.some((v) => v !== 0) && gt.some((v) => v === 0), 'ground truth: pressed and free taxels');
      assert.ok(force.some((v, i) => v !== gt[i]), 'noise on MEASURED');
      if (reads[s].contact_matrix) {
        const cm = r.contact_matrix;
        assert.deepEqual(cm.env_ids, all);
        assert.deepEqual(cm.normal.shape, [E, 2, 1, 3]);
        assert.ok(cm.normal.data.equals(Buffer.concat(slices.map((x) => x.contact_matrix.normal.data))), 'contact matrix normal');
        assert.ok(cm.friction.data.equals(Buffer.concat(slices.map((x) => x.contact_matrix.friction.data))), 'contact matrix friction');
        assert.ok(fromTensor(cm.normal).data.some((v) => v !== 0), 'the ball presses');
      }
    }
    assert.equal((await client.getScene('whole')).step, 3);
    assert.equal((await twin.getScene('twin')).step, 3);
  });

  test('explicit env_ids in any order: the parts follow the list', async () => {
    const envs = all.slice(3, 33).reverse();  // 30 envs: 32, 31, ..., 3
    const r = await client.step({ scene: 'whole', envIds: envs, poses: padsPoses(envs, 3), quatOrder: 'XYZW', dt: 0.01,
      read: { branches: ['MEASURED', 'GROUND_TRUTH'] } });
    assert.deepEqual(r.env_ids, envs);
    assert.equal(r.step, 4);
    const slices = await stepInSlices(twin, 'twin', envs, 3, { branches: ['MEASURED', 'GROUND_TRUTH'] }, 7);
    assertSameBytes(resultBytes(r), sliceBytes(slices), 'env_ids');
  });

  test('reads of all envs (latest and history) equal reads of slices', async () => {
    for (const history of [0, 3]) {
      log.length = 0;
      const read = { branches: ['MEASURED', 'GROUND_TRUTH'], sparse: history === 0 };
      const r = await client.readSensors('whole', { read, history });
      assert.ok(log.filter((c) => c.method === 'ReadSensors').length > 1, `history ${history}: split`);
      assert.deepEqual(r.env_ids, all);
      assert.equal(r.step, 4);
      const slices = [];
      for (let at = 0; at < E; at += 5) {
        slices.push(await twin.call('ReadSensors', { scene: 'twin', env_ids: all.slice(at, at + 5), read: { branches: read.branches }, history }));
      }
      assertSameBytes(resultBytes(r), sliceBytes(slices), `read history ${history}`);
      if (history) assert.deepEqual(r.get('left', 'force').shape, [E, 3, 32, 32, 3]);
    }
  });

  test('on a StepStream the parts are pipelined and joined the same way', async () => {
    const stream = client.openStepStream();
    const read = { branches: ['MEASURED', 'GROUND_TRUTH'], sparse: true };
    const [a, b] = await Promise.all([
      stream.step({ scene: 'whole', poses: padsPoses(all, 4), quatOrder: 'XYZW', dt: 0.01, read }),
      stream.step({ scene: 'whole', poses: padsPoses(all, 5), quatOrder: 'XYZW', dt: 0.01, read }),
    ]);
    await stream.end();
    // 5 parts each: sequences 1..5 and 6..10, each logical step carrying its last part's.
    assert.deepEqual([a.sequence, a.step, b.sequence, b.step], [5, 5, 10, 6]);
    for (const [s, r] of [[4, a], [5, b]]) {
      const slices = await stepInSlices(twin, 'twin', all, s, { branches: read.branches }, 8);
      assertSameBytes(resultBytes(r), sliceBytes(slices), `stream step ${s}`);
    }
  });

  test('reported contacts go with their envs\' parts: the matrix holds each env\'s forces', async () => {
    const reported = (name) => ({ ...padsSpec(name, E), contact_matrix: { ...padsSpec(name, E).contact_matrix, source: 'REPORTED' } });
    await client.createScene(reported('rwhole'));
    await twin.createScene(reported('rtwin'));
    // Env e: a contact of hand/left (link 0) with the ball (link 2) pushing with (e, 0.5, −1) N and
    // friction (0.1·e, 0, 0) N unless e % 3 = 2; envs e % 5 = 0 also one of hand/right (link 1), (1, 1, 1) N.
    const env = []; const body = []; const force = []; const friction = [];
    for (let e = E - 1; e >= 0; e--) {   // listed from the last env: parts must pick them by env
      if (e % 3 !== 2) { env.push(e); body.push(0); force.push(e, 0.5, -1); friction.push(0.1 * e, 0, 0); }
      if (e % 5 === 0) { env.push(e); body.push(1); force.push(1, 1, 1); friction.push(0, 0, 0); }
    }
    const contacts = { env: new Int32Array(env), body: new Int32Array(body), partner: new Int32Array(env.length).fill(2),
      force: new Float64Array(force), friction: new Float64Array(friction) };
    log.length = 0;
    const read = { none: true, contact_matrix: true };
    const r = await client.step({ scene: 'rwhole', poses: padsPoses(all, 0), quatOrder: 'XYZW', dt: 0.01, read: { ...read, none: false }, contacts });
    assert.ok(log.filter((c) => c.method === 'Step').length > 1, 'split');
    assert.equal(r.step, 1);
    const normal = fromTensor(r.contact_matrix.normal).data;   // [E, 2 rows, 1 column, 3]
    const fric = fromTensor(r.contact_matrix.friction).data;
    for (let e = 0; e < E; e++) {
      const left = e % 3 !== 2 ? [e, 0.5, -1] : [0, 0, 0];
      const right = e % 5 === 0 ? [1, 1, 1] : [0, 0, 0];
      assertClose(Array.from(normal.subarray(6 * e, 6 * e + 6)), [...left, ...right], `normal env ${e}`);
      assertClose(Array.from(fric.subarray(6 * e, 6 * e + 3)), e % 3 !== 2 ? [0.1 * e, 0, 0] : [0, 0, 0], `friction env ${e}`);
    }
    // The twin in slices of 6 envs, each with its own envs' contacts, reads the same bytes.
    const slices = [];
    for (let at = 0; at < E; at += 6) {
      const ids = all.slice(at, at + 6);
      const mine = env.map((e, i) => [e, i]).filter(([e]) => ids.includes(e)).map(([, i]) => i);
      const pick = (a, w) => a.constructor.from(mine.flatMap((i) => Array.from(a.subarray(w * i, w * i + w))));
      slices.push(await twin.call('Step', { scene: 'rtwin', env_ids: ids, poses: tensor(padsPoses(ids, 0), [ids.length, 3, 7]),
        quat_order: 'XYZW', dt: 0.01, read: { ...read, none: false }, continues_step: at > 0,
        contacts: { env: tensor(pick(contacts.env, 1)), body: tensor(pick(contacts.body, 1)), partner: tensor(pick(contacts.partner, 1)),
          force: tensor(pick(contacts.force, 3), [mine.length, 3]), friction: tensor(pick(contacts.friction, 3), [mine.length, 3]) } }));
    }
    assert.ok(r.contact_matrix.normal.data.equals(Buffer.concat(slices.map((x) => x.contact_matrix.normal.data))));
    assertSameBytes(resultBytes(r), sliceBytes(slices), 'reported');
    // A contact in an env the step does not update is refused by the client before any part.
    log.length = 0;
    const stray = await client.step({ scene: 'rwhole', envIds: all.slice(1), poses: padsPoses(all.slice(1), 1), quatOrder: 'XYZW',
      dt: 0.01, read: { branches: ['MEASURED', 'GROUND_TRUTH'] }, contacts }).catch((e) => e);
    assert.equal(stray.codeName, 'INVALID_ARGUMENT');
    const firstEnv0 = env.indexOf(0);
    assert.equal(stray.fieldViolations[0].field, `contacts.env[${firstEnv0}]`);
    assert.equal(log.filter((c) => c.method === 'Step').length, 0);
    await client.deleteScene('rwhole');
    await twin.deleteScene('rtwin');
  });

  test('a stale SceneInfo: refused parts are halved and retried, unary and on a stream, the result unchanged', async () => {
    // Another client adds a sensor: this client's cached SceneInfo lacks it, so its parts (9 envs)
    // carry more readings than it expects and the server refuses them (3 sensors × 2 branches ×
    // 24576 B × 9 envs ≈ 1.33 MB > 1 MiB); 4 envs (0.59 MB) fit.
    const other = new TaxelClient(`127.0.0.1:${server.port}`, { splitByEnvs: false });
    const addSensor = async (name) => {
      const extra = { ...padsSpec('', 1).sensors[0], name, link: 'hand/right' };
      await other.addSensor('whole', extra);
      await other.addSensor('twin', extra);
    };
    const read = { branches: ['MEASURED', 'GROUND_TRUTH'] };
    try {
      await addSensor('third');
      log.length = 0;
      const r = await client.step({ scene: 'whole', poses: padsPoses(all, 6), quatOrder: 'XYZW', dt: 0.01, read });
      const steps = log.filter((c) => c.method === 'Step');
      assert.deepEqual(steps.filter((c) => c.error).map((c) => [c.envs, c.error]), [[9, 'RESOURCE_EXHAUSTED']], 'one part refused');
      // Then floor(9 / 2) = 4 envs per part for the rest: 10 parts of 4.
      assert.deepEqual(steps.filter((c) => !c.error).map((c) => [c.envs, c.continues]),
        Array.from({ length: 10 }, (_, k) => [4, k > 0]));
      assert.equal(r.step, 7);
      assert.equal(r.readings.length, 6, '3 sensors × 2 branches');
      assertSameBytes(resultBytes(r), sliceBytes(await stepInSlices(twin, 'twin', all, 6, read, 3)), 'unary, after the retry');

      // The refusal dropped the cached SceneInfo; getScene caches it again (3 sensors), and a fourth
      // sensor makes it stale again, now on a stream. Both steps are planned with the stale info
      // (at step()), so each has a part refused, which ends the call: the stream opens 2 more.
      assert.equal((await client.getScene('whole')).sensors.length, 3);
      await addSensor('fourth');
      const stream = client.openStepStream();
      let opens = 1;
      const open = stream._open;
      stream._open = () => { opens++; return open(); };
      const [a, b] = await Promise.all([
        stream.step({ scene: 'whole', poses: padsPoses(all, 7), quatOrder: 'XYZW', dt: 0.01, read }),
        stream.step({ scene: 'whole', poses: padsPoses(all, 8), quatOrder: 'XYZW', dt: 0.01, read }),
      ]);
      await stream.end();
      assert.equal(opens, 3);
      assert.deepEqual([a.step, b.step], [8, 9]);
      assert.equal(a.readings.length, 8, '4 sensors × 2 branches');
      assertSameBytes(resultBytes(a), sliceBytes(await stepInSlices(twin, 'twin', all, 7, read, 5)), 'stream, after reopening');
      assertSameBytes(resultBytes(b), sliceBytes(await stepInSlices(twin, 'twin', all, 8, read, 5)), 'stream, the next step');
      assert.equal((await client.getScene('whole')).step, 9);
    } finally {
      other.close();
    }
  });
});

describe('requests over the message limit', { skip: SERVER ? false : 'TAXEL_SERVER_BINARY not set' }, () => {
  // 100 envs × 300 moving links: poses 100 × 300 × 7 × 8 B = 1.68 MB, twists (float32) 0.72 MB,
  // over 1 MiB; one depth probe on arm/l0 under the ball: the readings are small.
  const E = 100;
  const L = 300;
  let server;
  let client;
  let twin;

  const spec = (name) => ({
    name, num_envs: E, seed: 3,
    entities: [{ name: 'arm', kind: 'ROBOT', links: Array.from({ length: L - 1 }, (_, i) => ({ name: `l${i}` })) },
      { name: 'ball', kind: 'OBJECT', links: [{ name: 'b', shapes: [{ sphere: { radius: 0.01 } }] }] }],
    sensors: [{ name: 'tip', kind: 'CONTACT_DEPTH_PROBE', link: 'arm/l0', probe_local_pos: tensor(new Float64Array(3), [1, 3]),
      probe_radius: tensor(new Float64Array([0.002]), []) }],
  });
  // Env e, step s: every arm link at the origin, the ball's bottom (e % 4) × 0.5 mm above the probe
  // centre, minus s × 0.1 mm; twists: link i moves at (i, e, s) mm/s.
  const poses = (envs, s) => {
    const p = new Float64Array(envs.length * L * 7);
    envs.forEach((e, k) => {
      for (let i = 0; i < L; i++) p[7 * (k * L + i) + 6] = 1;
      p[7 * (k * L + L - 1) + 2] = 0.01 + 0.0005 * (e % 4) - 0.0001 * s;
    });
    return p;
  };
  const twists = (envs, s) => {
    const t = new Float32Array(envs.length * L * 6);
    envs.forEach((e, k) => { for (let i = 0; i < L; i++) t.set([i * 1e-3, e * 1e-3, s * 1e-3], 6 * (k * L + i)); });
    return t;
  };

  before(async () => {
    server = await startServer([`--max_message_bytes=${MIB}`]);
    client = new TaxelClient(`127.0.0.1:${server.port}`, { timeoutMs: 30000 });
    twin = new TaxelClient(`127.0.0.1:${server.port}`, { timeoutMs: 30000, splitByEnvs: false });
    await client.createScene(spec('whole'));
    await twin.createScene(spec('twin'));
  });

  after(async () => {
    if (client) client.close();
    if (twin) twin.close();
    if (server) assert.equal(await stopServer(server), 0, server.log());
  });

  test('poses and twists of many envs × links go in parts; the result equals the twin in slices', async () => {
    const all = Array.from({ length: E }, (_, e) => e);
    const refused = await twin.step({ scene: 'twin', poses: { data: poses(all, 0), shape: [E, L, 7] }, quatOrder: 'XYZW', dt: 0.01 }).catch((e) => e);
    assert.equal(refused.codeName, 'RESOURCE_EXHAUSTED', 'the whole request is over the limit');
    const log = spy(client);
    for (let s = 0; s < 2; s++) {
      log.length = 0;
      const r = await client.step({ scene: 'whole', poses: { data: poses(all, s), shape: [E, L, 7] },
        twists: { data: twists(all, s), shape: [E, L, 6] }, quatOrder: 'XYZW', dt: 0.01 });
      // Per env 5 + 300 × (7 × 8 + 6 × 4) = 24005 B of request (the readings: 5 + 4 + 12 + 4 + 4 =
      // 29 B); fixed 1024 + 192 + 64 × 4 (one reading, 4 tensors) = 1472:
      // floor((943718.4 − 1472) / 24005) = 39 envs per part → 39 + 39 + 22.
      assert.deepEqual(log.filter((c) => c.method === 'Step').map((c) => [c.envs, c.continues]), [[39, false], [39, true], [22, true]]);
      assert.equal(r.step, s + 1);
      const slices = [];
      for (let at = 0; at < E; at += 10) {
        const ids = all.slice(at, at + 10);
        slices.push(await twin.call('Step', { scene: 'twin', env_ids: ids, poses: tensor(poses(ids, s), [10, L, 7]),
          twists: tensor(twists(ids, s), [10, L, 6]), quat_order: 'XYZW', dt: 0.01, continues_step: at > 0 }));
      }
      assertSameBytes(resultBytes(r), sliceBytes(slices), `step ${s}`);
      // The probe (radius 2 mm) reaches the ball where its bottom is < 2 mm above: depth 2 mm − gap.
      const depth = r.get('tip', 'depth').data;
      for (const e of [0, 1, 2, 3]) {
        const gap = 0.0005 * e - 0.0001 * s;
        assert.ok(Math.abs(depth[e] - (0.002 - gap)) < 1e-6, `env ${e}: depth ${depth[e]}, expected ${0.002 - gap}`);
      }
    }
  });

  test('a wrong poses shape over the limit is refused by the client, naming poses, before any part', async () => {
    const log = spy(client);
    const err = await client.step({ scene: 'whole', poses: { data: poses(Array(E - 1).fill(0), 0), shape: [E - 1, L, 7] },
      quatOrder: 'XYZW', dt: 0.01 }).catch((e) => e);
    assert.equal(err.codeName, 'INVALID_ARGUMENT');
    assert.equal(err.fieldViolations[0].field, 'poses');
    assert.match(err.details, /^poses: expected shape \[100, 300, 7\]/);
    assert.equal(log.filter((c) => c.method === 'Step').length, 0, 'nothing sent');
  });
});

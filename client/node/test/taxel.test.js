'use strict';
// The Node client against a real taxel-server (TAXEL_SERVER_BINARY) on 127.0.0.1:0, plus the
// tensor helpers on their own. Run: TAXEL_SERVER_BINARY=build/server/taxel-server node --test
const { test, describe, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const { TaxelClient, TaxelError, toTaxelError, tensor, toTypedArray, fromTensor, decodeStatusDetails, status } = require('..');

const { SERVER, startServer, stopServer } = require('./servers');

// A cube of half extent 5 cm centred on its origin: 8 vertices, 12 outward (counter-clockwise
// seen from outside) triangles — the same cube as tests/cli/cli_test.sh.
const H = 0.05;
const CUBE_VERTICES = new Float64Array([
  -H, -H, -H, H, -H, -H, H, H, -H, -H, H, -H,
  -H, -H, H, H, -H, H, H, H, H, -H, H, H,
]);
const CUBE_TRIANGLES = new Int32Array([
  0, 2, 1, 0, 3, 2, 4, 5, 6, 4, 6, 7, 0, 1, 5, 0, 5, 4,
  1, 2, 6, 1, 6, 5, 2, 3, 7, 2, 7, 6, 3, 0, 4, 3, 4, 7,
]);

// A 3×3 pad of ContactDepthProbes, pitch 1 cm, in the plane z = 0 of the link hand/pad; radius 2 mm.
const R = 0.002;
function padPositions() {
  const p = new Float64Array(27);
  for (let i = 0; i < 3; i++) {
    for (let j = 0; j < 3; j++) {
      const k = 3 * (3 * i + j);
      p[k] = 0.01 * (j - 1);
      p[k + 1] = 0.01 * (i - 1);
      p[k + 2] = 0;
    }
  }
  return p;
}

// Poses [2 envs, 2 moving links (hand/pad, cube/body), 7] with identity quaternions (XYZW). The pad
// stays at the origin; the cube's centre is at height cz[e].
//  env 0: cz = 0.049 → bottom face at z = -0.001: every probe centre is 1 mm inside the cube,
//         sd = -0.001, depth = R − sd = 0.002 + 0.001 = 0.003 (R + penetration).
//  env 1: cz = 0.0505 → bottom face 0.5 mm above the probe centres: sd = +0.0005,
//         depth = R − sd = 0.0015 (the probe sphere of radius 2 mm reaches the face).
// The probes (|x|, |y| ≤ 1 cm) lie well inside the 10 cm face, so the bottom face is the nearest
// feature: the normal out of the partner, in the pad frame, is (0, 0, −1), and the spherical-cap
// area is π(2Rd − d²): env 0 π(1.2e-5 − 9e-6) = 3e-6·π, env 1 π(6e-6 − 2.25e-6) = 3.75e-6·π.
function poses(cz0, cz1) {
  return new Float64Array([
    0, 0, 0, 0, 0, 0, 1, 0, 0, cz0, 0, 0, 0, 1,
    0, 0, 0, 0, 0, 0, 1, 0, 0, cz1, 0, 0, 0, 1,
  ]);
}

function assertAllClose(actual, expected, tol, what) {
  assert.equal(actual.length, expected.length, `${what}: length`);
  for (let i = 0; i < actual.length; i++) {
    assert.ok(Math.abs(actual[i] - expected[i]) <= tol, `${what}[${i}]: ${actual[i]} != ${expected[i]}`);
  }
}

describe('errors', () => {
  test("gRPC's own size refusal names the flags that set the limits", () => {
    const e = toTaxelError({ code: status.RESOURCE_EXHAUSTED, details: 'Received message larger than max (5 vs. 4)' });
    assert.equal(e.codeName, 'RESOURCE_EXHAUSTED');
    assert.match(e.message, /larger than max \(5 vs\. 4\); the limits are the server's --max_message_bytes/);
    const other = toTaxelError({ code: status.RESOURCE_EXHAUSTED, details: 'read: too big' });
    assert.doesNotMatch(other.message, /--max_message_bytes/);
  });
});

describe('tensor helpers', () => {
  test('tensor() wraps a TypedArray without copying, little-endian', () => {
    const a = new Float64Array([1.5, -2, 3]);
    const t = tensor(a, [1, 3]);
    assert.equal(t.dtype, 'FLOAT64');
    assert.deepEqual(t.shape, [1, 3]);
    assert.equal(t.data.buffer, a.buffer, 'shares memory');
    assert.equal(t.data.readDoubleLE(8), -2);
    assert.deepEqual(tensor(new Int32Array([7]), []).shape, []);
    assert.equal(tensor(new Uint8Array(2)).dtype, 'BOOL');
    assert.throws(() => tensor(new Float32Array(5), [2, 3]), RangeError);
    assert.throws(() => tensor([1, 2, 3]), TypeError);
  });

  test('the sparse form (nonzero_mask) expands to the dense array', () => {
    // Elements 1, 3, 7 and 8 of 9 are stored: mask byte 0 = 2 + 8 + 128 = 0x8a, byte 1 = 0x01.
    const data = Buffer.from(new Float32Array([1.5, -2, 3, 4]).buffer);
    const a = toTypedArray({ dtype: 'FLOAT32', shape: [3, 3], data, nonzero_mask: Buffer.from([0x8a, 0x01]) });
    assert.ok(a instanceof Float32Array);
    assert.deepEqual(Array.from(a), [0, 1.5, 0, -2, 0, 0, 0, 3, 4]);
    assert.throws(() => toTypedArray({ dtype: 'FLOAT32', shape: [3, 3], data, nonzero_mask: Buffer.from([0x8a]) }), RangeError);
    assert.throws(() => toTypedArray({ dtype: 'FLOAT32', shape: [3, 3], data, nonzero_mask: Buffer.from([0x8a, 0x03]) }), RangeError);
    assert.throws(() => toTypedArray({ dtype: 'FLOAT32', shape: [3, 3], data: data.subarray(0, 8), nonzero_mask: Buffer.from([0x8a, 0x01]) }), RangeError);
    // An empty mask is the dense form.
    assert.deepEqual(Array.from(toTypedArray({ dtype: 'FLOAT32', shape: [4], data, nonzero_mask: Buffer.alloc(0) })), [1.5, -2, 3, 4]);
  });

  test('the sparse form of FLOAT64, BOOL and unaligned data, bit for bit', () => {
    // 10 elements, stored 0, 4 and 9: mask byte 0 = 1 + 16 = 0x11, byte 1 = 0x02.
    const mask = Buffer.from([0x11, 0x02]);
    const f64 = Buffer.from(new Float64Array([-0.5, 1e300, Math.PI]).buffer);
    assert.deepEqual(Array.from(toTypedArray({ dtype: 'FLOAT64', shape: [10], data: f64, nonzero_mask: mask })),
      [-0.5, 0, 0, 0, 1e300, 0, 0, 0, 0, Math.PI]);
    assert.deepEqual(Array.from(toTypedArray({ dtype: 'BOOL', shape: [2, 5], data: Buffer.from([1, 1, 1]), nonzero_mask: mask })),
      [1, 0, 0, 0, 1, 0, 0, 0, 0, 1]);
    // FLOAT32 values at byte offset 1 (unaligned), one a NaN with a payload (0x7fc00001): kept as is.
    const raw = Buffer.alloc(13);
    raw.writeFloatLE(2.5, 1); raw.writeUInt32LE(0x7fc00001, 5); raw.writeFloatLE(-7, 9);
    const out = toTypedArray({ dtype: 'FLOAT32', shape: [10], data: raw.subarray(1), nonzero_mask: mask });
    const bits = new Uint32Array(out.buffer, out.byteOffset, 10);
    assert.equal(out[0], 2.5);
    assert.equal(bits[4], 0x7fc00001);
    assert.equal(out[9], -7);
    assert.deepEqual([1, 2, 3, 5, 6, 7, 8].map((i) => bits[i]), [0, 0, 0, 0, 0, 0, 0]);
  });

  test('aligned bytes: a zero-copy view of the received Buffer', () => {
    const backing = Buffer.alloc(64);
    for (const [dtype, Type, offset] of [['FLOAT32', Float32Array, 8], ['INT32', Int32Array, 4],
      ['FLOAT64', Float64Array, 16], ['BOOL', Uint8Array, 3]]) {
      const data = backing.subarray(offset, offset + 2 * Type.BYTES_PER_ELEMENT);
      const view = toTypedArray({ dtype, shape: [2], data });
      assert.ok(view instanceof Type, dtype);
      assert.equal(view.buffer, backing.buffer, `${dtype}: same memory`);
      assert.equal(view.byteOffset, data.byteOffset, `${dtype}: same offset`);
      // A write through the Buffer shows in the view: it is not a copy.
      data[0] = 0x2a; data[1] = 0; data[2] = 0; data[3] = 0;
      if (dtype === 'INT32') assert.equal(view[0], 42);
      if (dtype === 'BOOL') assert.equal(view[0], 42);
    }
  });

  test('unaligned bytes: copied once into an aligned array, same values', () => {
    const values = new Float32Array([1.25, -3.5, 1e-3]);
    const bytes = Buffer.from(values.buffer);
    const backing = Buffer.alloc(bytes.length + 5);
    bytes.copy(backing, 1);                          // starts at byteOffset 1 (+ the pool's offset)
    const data = backing.subarray(1, 1 + bytes.length);
    assert.notEqual(data.byteOffset % 4, 0, 'test setup: unaligned');
    const out = toTypedArray({ dtype: 'FLOAT32', shape: [3], data });
    assert.ok(out instanceof Float32Array);
    assert.notEqual(out.buffer, backing.buffer, 'a copy');
    assert.equal(out.byteOffset, 0);
    assert.deepEqual(Array.from(out), Array.from(values));
    data.writeFloatLE(9, 0);                          // the copy does not follow the Buffer
    assert.equal(out[0], 1.25);

    const ints = Buffer.alloc(4 * 2 + 2);
    ints.writeInt32LE(-1, 2);
    ints.writeInt32LE(5, 6);
    const iv = toTypedArray({ dtype: 'INT32', shape: [2], data: ints.subarray(2) });
    assert.notEqual(iv.buffer, ints.buffer);
    assert.deepEqual(Array.from(iv), [-1, 5]);

    const d = Buffer.alloc(8 + 4);
    d.writeDoubleLE(Math.PI, 4);                      // 4-aligned, not 8-aligned
    const dv = toTypedArray({ dtype: 'FLOAT64', shape: [], data: d.subarray(4) });
    assert.notEqual(dv.buffer, d.buffer);
    assert.equal(dv[0], Math.PI);
  });

  test('size mismatches and unknown dtypes are refused', () => {
    assert.throws(() => toTypedArray({ dtype: 'FLOAT32', shape: [2, 2], data: Buffer.alloc(12) }), RangeError);
    assert.throws(() => toTypedArray({ dtype: 'DTYPE_UNSPECIFIED', shape: [1], data: Buffer.alloc(4) }), TypeError);
    assert.deepEqual(fromTensor({ dtype: 'FLOAT32', shape: [0, 3], data: Buffer.alloc(0) }).shape, [0, 3]);
  });
});

describe('TaxelClient against taxel-server', { skip: SERVER ? false : 'TAXEL_SERVER_BINARY not set' }, () => {
  let server;
  let client;
  let meshId;
  let sceneInfo;

  before(async () => {
    server = await startServer();
    client = new TaxelClient(`127.0.0.1:${server.port}`, { timeoutMs: 10000 });
  });

  after(async () => {
    if (client) client.close();
    if (server) {
      const code = await stopServer(server);
      assert.equal(code, 0, `server exit after SIGTERM:\n${server.log()}`);
    }
  });

  test('serverInfo: version, limits, capabilities', async () => {
    const info = await client.serverInfo();
    assert.match(info.version, /^\d+\.\d+\.\d+/);
    assert.equal(info.limits.max_message_bytes, 64 * 1024 * 1024);
    assert.equal(typeof info.limits.max_triangles_per_mesh, 'number');
    assert.ok(info.capabilities.includes('sensor:contact_depth_probe'), info.capabilities.join(','));
    assert.equal(info.threads, 2);
  });

  test('uploadMesh: a closed cube, content-addressed', async () => {
    const r = await client.uploadMesh(CUBE_VERTICES, CUBE_TRIANGLES);
    assert.match(r.mesh_id, /^[0-9a-f]{64}$/);
    assert.equal(r.num_vertices, 8);
    assert.equal(r.num_triangles, 12);
    assert.equal(r.watertight, true);
    assert.equal(r.was_inside_out, false);
    assert.equal(r.newly_added, true);
    // The same mesh as float32 has other bytes, but float64 again is the same content.
    const again = await client.uploadMesh(CUBE_VERTICES, CUBE_TRIANGLES);
    assert.equal(again.mesh_id, r.mesh_id);
    assert.equal(again.newly_added, false);
    meshId = r.mesh_id;
  });

  test('uploadMesh with a grid, and a GRID sensor within the error it reports', async () => {
    // The cube scaled by 1.2 (its own content id): a grid of 1e-3 m over a 3 mm band.
    const big = CUBE_VERTICES.map((x) => 1.2 * x);
    const r = await client.uploadMesh(big, CUBE_TRIANGLES, { grid: { max_error: 1e-3, band: 3e-3 } });
    assert.ok(r.grid, 'grid info');
    assert.equal(r.grid.requested_max_error, 1e-3);
    assert.equal(r.grid.band, 3e-3);
    assert.ok(r.grid.max_error > 0 && r.grid.max_error <= 1e-3, `max_error ${r.grid.max_error}`);
    assert.ok(Number(r.grid.bytes) > 0);
    await client.createScene({
      name: 'node_grid',
      num_envs: 1,
      entities: [
        { name: 'hand', kind: 'ROBOT', links: [{ name: 'pad' }] },
        { name: 'cube', kind: 'OBJECT', links: [{ name: 'body', shapes: [{ mesh: { mesh_id: r.mesh_id } }] }] },
      ],
      sensors: [{
        name: 'depth',
        kind: 'CONTACT_DEPTH_PROBE',
        link: 'pad',
        sdf_backend: 'GRID',
        probe_local_pos: tensor(padPositions(), [3, 3, 3]),
        probe_radius: tensor(new Float64Array([R]), []),
      }],
    });
    // Cube bottom at z = 0.06 − 0.001 − 0.06: the pad's probes 1 mm inside, depth R + 1 mm.
    const pose = new Float64Array([0, 0, 0, 0, 0, 0, 1, 0, 0, 0.059, 0, 0, 0, 1]);
    const s = await client.step({ scene: 'node_grid', poses: pose, quatOrder: 'XYZW', dt: 0.01 });
    assertAllClose(s.get('depth', 'depth').data, Array(9).fill(0.003), r.grid.max_error * 1.05 + 1e-7, 'grid depth');
    await client.deleteScene('node_grid');
    await client.deleteMesh(r.mesh_id);
  });

  test('createScene / getScene: a 3×3 ContactDepthProbe pad under the cube', async () => {
    sceneInfo = await client.createScene({
      name: 'node',
      num_envs: 2,
      entities: [
        { name: 'hand', kind: 'ROBOT', links: [{ name: 'pad' }] },
        { name: 'cube', kind: 'OBJECT', links: [{ name: 'body', shapes: [{ mesh: { mesh_id: meshId } }] }] },
      ],
      sensors: [{
        name: 'depth',
        kind: 'CONTACT_DEPTH_PROBE',
        link: 'pad',
        probe_local_pos: tensor(padPositions(), [3, 3, 3]),
        probe_radius: tensor(new Float64Array([R]), []),
      }],
    });
    assert.deepEqual(sceneInfo.moving_links, ['hand/pad', 'cube/body']);
    assert.equal(sceneInfo.sensors.length, 1);
    const s = sceneInfo.sensors[0];
    assert.equal(s.kind, 'CONTACT_DEPTH_PROBE');
    assert.equal(s.num_probes, 9);
    assert.deepEqual(s.layout, [3, 3]);
    const shapes = Object.fromEntries(s.outputs.map((o) => [o.channel, [o.dtype, o.shape]]));
    assert.deepEqual(shapes.depth, ['FLOAT32', [2, 3, 3]]);
    assert.deepEqual(shapes.normal, ['FLOAT32', [2, 3, 3, 3]]);
    assert.deepEqual(shapes.partner, ['INT32', [2, 3, 3]]);
    const got = await client.getScene('node');
    assert.equal(got.name, 'node');
    assert.equal(got.num_envs, 2);
    assert.equal(got.step, 0);
    assert.deepEqual((await client.listScenes()).map((x) => x.name), ['node']);
  });

  test('step: depths, normals, areas and partners match the hand calculation', async () => {
    const r = await client.step({ scene: 'node', poses: poses(0.049, 0.0505), quatOrder: 'XYZW', dt: 0.01 });
    assert.equal(r.step, 1);
    assert.deepEqual(r.env_ids, [0, 1]);
    assert.ok(r.timing.evaluate_us >= 0);
    const depth = r.get('depth', 'depth');
    assert.equal(depth.dtype, 'FLOAT32');
    assert.deepEqual(depth.shape, [2, 3, 3]);
    assert.ok(depth.data instanceof Float32Array);
    assertAllClose(depth.data, [...Array(9).fill(0.003), ...Array(9).fill(0.0015)], 1e-7, 'depth');
    const normal = r.get('depth', 'normal');
    assert.deepEqual(normal.shape, [2, 3, 3, 3]);
    assertAllClose(normal.data, Array(18).fill([0, 0, -1]).flat(), 1e-6, 'normal');
    const area = r.get('depth', 'area');
    assertAllClose(area.data, [...Array(9).fill(3e-6 * Math.PI), ...Array(9).fill(3.75e-6 * Math.PI)], 1e-10, 'area');
    const partner = r.get('depth', 'partner');
    assert.ok(partner.data instanceof Int32Array);
    const cubeIndex = sceneInfo.links.find((l) => l.name === 'cube/body').index;
    assert.deepEqual(Array.from(partner.data), Array(18).fill(cubeIndex));
  });

  test('readSensors: latest readings of a subset of envs, in the order asked', async () => {
    const r = await client.readSensors('node', { envIds: [1], read: { channels: ['depth'] } });
    assert.equal(r.step, 1);
    assert.deepEqual(r.env_ids, [1]);
    const depth = r.get('depth', 'depth');
    assert.deepEqual(depth.shape, [1, 3, 3]);
    assertAllClose(depth.data, Array(9).fill(0.0015), 1e-7, 'depth env 1');
    assert.deepEqual(Object.keys(r.readings[0].channels), ['depth']);
  });

  test('readSensors with read.sparse: the same arrays as the dense read', async () => {
    const dense = await client.readSensors('node', { read: { branches: ['GROUND_TRUTH'] } });
    const sparse = await client.readSensors('node', { read: { branches: ['GROUND_TRUTH'], sparse: true } });
    const raw = await client.call('ReadSensors', { scene: 'node', read: { branches: ['GROUND_TRUTH'], sparse: true } });
    let nonzero = 0;
    for (const channel of ['depth', 'normal', 'area', 'partner']) {
      assert.ok(raw.readings[0].channels[channel].nonzero_mask.byteLength > 0, `${channel}: sent in the sparse form`);
      const d = dense.get('depth', channel, 'GROUND_TRUTH');
      const s = sparse.get('depth', channel, 'GROUND_TRUTH');
      assert.deepEqual(s.shape, d.shape);
      assert.deepEqual(Array.from(s.data), Array.from(d.data), channel);
      nonzero += Array.from(d.data).filter((v) => v !== 0).length;
    }
    assert.ok(nonzero > 0, 'not only zeros compared');
  });

  test('received tensors: a view when the Buffer slice is aligned, a copy otherwise', async () => {
    // Raw response: channel data are Buffer slices of the received message at arbitrary offsets.
    const raw = await client.call('ReadSensors', { scene: 'node' });
    const seen = new Set();
    for (const [name, t] of Object.entries(raw.readings[0].channels)) {
      assert.ok(Buffer.isBuffer(t.data), name);
      const a = toTypedArray(t);
      const aligned = t.data.byteOffset % a.BYTES_PER_ELEMENT === 0;
      seen.add(aligned);
      assert.equal(a.buffer === t.data.buffer, aligned, `${name}: offset ${t.data.byteOffset}`);
      assert.deepEqual(Buffer.from(a.buffer, a.byteOffset, a.byteLength), t.data, `${name}: same bytes`);
    }
    assert.ok(seen.size >= 1);
  });

  test('a wrong poses shape is INVALID_ARGUMENT naming "poses", and changes nothing', async () => {
    // One link's pose per env instead of two: [2, 1, 7].
    const bad = { data: new Float64Array([0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 1]), shape: [2, 1, 7] };
    const err = await client.step({ scene: 'node', poses: bad, quatOrder: 'XYZW', dt: 0.01 }).then(
      () => assert.fail('accepted'), (e) => e);
    assert.ok(err instanceof TaxelError, String(err));
    assert.equal(err.code, status.INVALID_ARGUMENT);
    assert.equal(err.codeName, 'INVALID_ARGUMENT');
    assert.match(err.details, /^poses: expected shape \[2, 2, 7\]/);
    assert.match(err.message, /^INVALID_ARGUMENT: poses: /);
    assert.equal(err.fieldViolations.length, 1);
    assert.equal(err.fieldViolations[0].field, 'poses');
    assert.match(err.fieldViolations[0].description, /got \[2, 1, 7\]/);
    // The raw trailer decodes to the same google.rpc.Status.
    const details = decodeStatusDetails(err.metadata.get('grpc-status-details-bin')[0]);
    assert.equal(details.code, status.INVALID_ARGUMENT);
    assert.equal(details.details[0].typeUrl, 'type.googleapis.com/google.rpc.BadRequest');
    assert.equal((await client.getScene('node')).step, 1, 'a failed step leaves the scene as it was');

    const noOrder = await client.step({ scene: 'node', poses: poses(0, 0), dt: 0.01 }).catch((e) => e);
    assert.equal(noOrder.codeName, 'INVALID_ARGUMENT');
    assert.equal(noOrder.fieldViolations[0].field, 'quat_order');
  });

  test('other codes: NOT_FOUND names its field too, OUT_OF_RANGE env id', async () => {
    const nf = await client.getScene('nope').catch((e) => e);
    assert.equal(nf.code, status.NOT_FOUND);
    assert.equal(nf.fieldViolations.length, 1);
    assert.equal(nf.fieldViolations[0].field, 'scene');
    const oor = await client.readSensors('node', { envIds: [7] }).catch((e) => e);
    assert.equal(oor.codeName, 'OUT_OF_RANGE');
    assert.equal(oor.fieldViolations[0].field, 'env_ids[0]');
    const tri = await client.uploadMesh(CUBE_VERTICES, new Int32Array([0, 1, 99])).catch((e) => e);
    assert.equal(tri.codeName, 'INVALID_ARGUMENT');
    assert.throws(() => client.uploadMesh(CUBE_VERTICES, new Float64Array(3)), TypeError);
  });

  test('openStepStream: in-order responses, float32 WXYZ poses, then an error ends the stream', async () => {
    const stream = client.openStepStream();
    // WXYZ identity is (1, 0, 0, 0); float32 poses. Env 0 1 mm deep again, env 1 far away (0).
    const wxyz = (cz0, cz1) => new Float32Array([
      0, 0, 0, 1, 0, 0, 0, 0, 0, cz0, 1, 0, 0, 0,
      0, 0, 0, 1, 0, 0, 0, 0, 0, cz1, 1, 0, 0, 0]);
    const [a, b] = await Promise.all([
      stream.step({ scene: 'node', poses: wxyz(0.049, 1), quatOrder: 'WXYZ', dt: 0.01 }),
      stream.step({ scene: 'node', poses: wxyz(0.0495, 1), quatOrder: 'WXYZ', dt: 0.01, read: { channels: ['depth'] } }),
    ]);
    assert.deepEqual([a.sequence, a.step, b.sequence, b.step], [1, 2, 2, 3]);
    assertAllClose(a.get('depth', 'depth').data, [...Array(9).fill(0.003), ...Array(9).fill(0)], 1e-6, 'stream depth a');
    // float32 poses: 0.0495 is not exact in binary32, hence the looser tolerance.
    assertAllClose(b.get('depth', 'depth').data, [...Array(9).fill(0.0025), ...Array(9).fill(0)], 1e-6, 'stream depth b');
    const failed = await stream.step({ scene: 'node', poses: new Float32Array(7), quatOrder: 'WXYZ', dt: 0.01 }).catch((e) => e);
    assert.equal(failed.codeName, 'INVALID_ARGUMENT');
    assert.equal(failed.fieldViolations[0].field, 'poses');
    const after = await stream.step({ scene: 'node', poses: wxyz(0, 0), quatOrder: 'WXYZ', dt: 0.01 }).catch((e) => e);
    assert.equal(after, failed, 'later steps reject with the same error');
    await stream.end();
    assert.equal((await client.getScene('node')).step, 3);
  });

  test('reset: the envs read 0 until their next step', async () => {
    await client.reset('node', [0]);
    const r = await client.readSensors('node', { read: { channels: ['depth'] } });
    assertAllClose(r.get('depth', 'depth').data, Array(18).fill(0), 0, 'after reset');
  });

  test('deleteScene: then NOT_FOUND', async () => {
    const inUse = await client.deleteMesh(meshId).catch((e) => e);
    assert.equal(inUse.codeName, 'FAILED_PRECONDITION');
    assert.equal(inUse.fieldViolations[0].field, 'mesh_id');
    await client.deleteScene('node');
    const err = await client.getScene('node').catch((e) => e);
    assert.equal(err.codeName, 'NOT_FOUND');
    assert.deepEqual(await client.listScenes(), []);
  });

  test('deleteMesh: once its scene is gone, and the server holds nothing', async () => {
    await client.deleteMesh(meshId);
    const info = await client.serverInfo();
    assert.equal(info.num_meshes, 0);
    assert.equal(Number(info.memory_bytes), 0);
    const again = await client.deleteMesh(meshId).catch((e) => e);
    assert.equal(again.codeName, 'NOT_FOUND');
  });
});

describe('bearer tokens', { skip: SERVER ? false : 'TAXEL_SERVER_BINARY not set' }, () => {
  let server;
  let dir;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'taxel-node-'));
    fs.writeFileSync(path.join(dir, 'tokens'), 'secret-a alice\nsecret-b bob\n');
    server = await startServer([`--auth_tokens_file=${path.join(dir, 'tokens')}`]);
  });
  after(async () => {
    if (server) await stopServer(server);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('calls need the token; a tenant sees only its own scenes', async () => {
    const target = `127.0.0.1:${server.port}`;
    const anonymous = new TaxelClient(target, { timeoutMs: 5000 });
    const alice = new TaxelClient(target, { timeoutMs: 5000, token: 'secret-a' });
    const bob = new TaxelClient(target, { timeoutMs: 5000, token: 'secret-b' });
    try {
      const err = await anonymous.serverInfo().catch((e) => e);
      assert.equal(err.codeName, 'UNAUTHENTICATED');
      const stranger = new TaxelClient(target, { timeoutMs: 5000, token: 'nope' });
      const wrong = await stranger.serverInfo().catch((e) => e);
      stranger.close();
      assert.equal(wrong.codeName, 'UNAUTHENTICATED');
      await alice.createScene({ name: 'mine', num_envs: 1, entities: [{ name: 'ball', kind: 'OBJECT', links: [{ name: 'b', shapes: [{ sphere: { radius: 0.01 } }] }] }] });
      assert.equal((await alice.getScene('mine')).name, 'mine');
      assert.equal((await bob.getScene('mine').catch((e) => e)).codeName, 'NOT_FOUND');
    } finally {
      anonymous.close(); alice.close(); bob.close();
    }
  });
});

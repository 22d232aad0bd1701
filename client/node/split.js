'use strict';
/**
 * Steps and reads of any size (README, "Steps of any size"): a step or read whose request or
 * readings would exceed the server's `max_message_bytes` is sent as parts over consecutive env
 * ranges, and the parts' responses are joined into one logical result.
 *
 * This module holds the pure parts: the size estimate, the env ranges, the part requests and the
 * join. taxel.js calls them (TaxelClient.step / readSensors, StepStream.step); nothing here talks
 * to the network.
 */

/** Bytes per element of each DType. */
const ITEM_SIZES = Object.freeze({ BOOL: 1, INT32: 4, FLOAT32: 4, FLOAT64: 8 });

/** Share of max_message_bytes a part may fill (room for framing the estimate does not count). */
const FILL = 0.9;

function product(dims) {
  return dims.reduce((a, b) => a * Number(b), 1);
}

function itemSize(dtype) {
  return ITEM_SIZES[dtype] ?? 8;  // unknown dtypes: the largest (the server names them)
}

/** Bytes of a list of names on the wire, each with its tag and length prefix. */
function namesBytes(names) {
  return (names || []).reduce((sum, n) => sum + Buffer.byteLength(n) + 8, 0);
}

/**
 * Bytes of the readings `read` selects, per env and fixed.
 * @param {object} scene SceneInfo (sensors[].outputs[]: channel, dtype, shape with the env axis first)
 * @param {object} [read] ReadSpec (sensors, channels, branches, none, contact_matrix, sparse)
 * @param {number} [history] ReadSensors.history: samples per env (0: the latest only)
 * @returns {{perEnv: number, fixed: number}}
 */
function responseBytes(scene, read = {}, history = 0) {
  read = read || {};
  let perEnv = 5;  // the env id (varint)
  let fixed = 1024;
  if (!read.none) {
    const pick = (list, name) => !list || list.length === 0 || list.includes(name);
    const branches = read.branches && read.branches.length > 0 ? read.branches.length : 1;
    const samples = Math.max(1, Number(history) || 0);
    for (const s of scene.sensors || []) {
      if (!pick(read.sensors, s.name)) continue;
      fixed += 192 * branches;
      for (const o of s.outputs || []) {
        if (!pick(read.channels, o.channel)) continue;
        const n = product((o.shape || []).slice(1)) * samples;
        perEnv += branches * (n * itemSize(o.dtype) + (read.sparse ? Math.ceil(n / 8) : 0));
        fixed += 64 * branches;
        // read.gradients: 2 × 6 float32 per value of the depth (probes) or force (taxels).
        const taxel = s.kind === 'KINEMATIC_TAXEL';
        if (read.gradients && ((o.channel === 'depth' && !taxel) || (o.channel === 'force' && taxel))) {
          perEnv += branches * (n * 12 * 4 + (read.sparse ? Math.ceil((n * 12) / 8) : 0));
          fixed += 64 * branches;
        }
      }
    }
  }
  const cm = scene.contact_matrix;
  if (read.contact_matrix && cm) {
    const tensors = (cm.friction ? 2 : 1) + (cm.gradients ? 12 : 0);
    perEnv += (cm.rows || []).length * (cm.columns || []).length * 3 * 4 * tensors + 5;
    fixed += 256 + namesBytes(cm.rows) + namesBytes(cm.columns);
  }
  return { perEnv, fixed };
}

/** The env of each reported contact (contacts.env, INT32 [K]), or a rule it breaks. */
function contactEnvs(contacts) {
  const t = contacts.env;
  if (!t || t.dtype !== 'INT32' || (t.shape || []).length !== 1 || !t.data || t.data.byteLength !== 4 * Number(t.shape[0])) {
    return { error: { field: 'contacts.env', description: 'expected INT32 of shape [K] (one env per contact)' } };
  }
  const b = Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
  const envs = new Int32Array(Number(t.shape[0]));
  for (let i = 0; i < envs.length; i++) envs[i] = b.readInt32LE(4 * i);
  return { envs };
}

/**
 * Bytes of a StepRequest per env: the env id, the poses and twists rows, the reported contacts of
 * the env with the most (their framing is left to the 10 % margin, as the readings' is not).
 * @param {object} req the wire StepRequest (tensors as {dtype, shape, data})
 * @param {object} scene SceneInfo
 * @param {Int32Array} [contactEnv] the env of each reported contact
 */
function requestBytes(req, scene, contactEnv) {
  const L = (scene.moving_links || []).length;
  let perEnv = 5;  // the env id (varint)
  if (req.poses) perEnv += L * 7 * itemSize(req.poses.dtype);
  if (req.twists) perEnv += L * 6 * itemSize(req.twists.dtype);
  const k = req.contacts;
  if (k && contactEnv && contactEnv.length > 0) {
    const perContact = 3 * 4 + 3 * itemSize(k.force && k.force.dtype) + (k.friction ? 3 * itemSize(k.friction.dtype) : 0);
    const count = new Map();
    let most = 0;
    for (const e of contactEnv) {
      const c = (count.get(e) || 0) + 1;
      count.set(e, c);
      if (c > most) most = c;
    }
    perEnv += most * perContact;
  }
  return { perEnv, fixed: 0 };
}

/**
 * Envs per part: floor((0.9 × limit − fixed) / max(response per env, request per env)), at least 1.
 * @param {number} limit the smaller of the server's and the client's max_message_bytes
 * @param {{perEnv: number, fixed: number}} response
 * @param {{perEnv: number, fixed: number}} [request]
 */
function envsPerPart(limit, response, request = { perEnv: 0, fixed: 0 }) {
  const perEnv = Math.max(response.perEnv, request.perEnv, 1);
  return Math.max(1, Math.floor((FILL * limit - response.fixed - request.fixed) / perEnv));
}

/** Consecutive [start, end) ranges of `n` envs, `perPart` each (the last may be shorter). */
function envRanges(n, perPart) {
  const ranges = [];
  for (let s = 0; s < n; s += perPart) ranges.push([s, Math.min(n, s + perPart)]);
  return ranges;
}

/**
 * The env list of a step or read: `envIds` checked as the server checks them (range, repeats;
 * the same codes, fields and messages), or 0 .. numEnvs − 1 when empty.
 * @returns {{envs: number[]} | {error: {code: string, field: string, description: string}}}
 */
function resolveEnvs(envIds, numEnvs, field = 'env_ids') {
  if (!envIds || envIds.length === 0) return { envs: Array.from({ length: numEnvs }, (_, e) => e) };
  const seen = new Uint8Array(numEnvs);
  for (let i = 0; i < envIds.length; i++) {
    const e = Number(envIds[i]);
    if (!Number.isInteger(e) || e < 0 || e >= numEnvs) {
      return { error: { code: 'OUT_OF_RANGE', field: `${field}[${i}]`, description: `env id ${envIds[i]} out of range [0, ${numEnvs})` } };
    }
    if (seen[e]) return { error: { code: 'INVALID_ARGUMENT', field: `${field}[${i}]`, description: `env id ${e} appears more than once` } };
    seen[e] = 1;
  }
  return { envs: Array.from(envIds, Number) };
}

/** A per-link array (poses, twists) holds n envs × L links × width values, flat or not. */
function checkLinkArray(t, field, n, L, width) {
  if (!t) return null;
  const shape = (t.shape || []).map(Number);
  const rows = shape[0];
  const ok = (shape.length === 3 && rows === n && shape[1] === L && shape[2] === width) ||
      (shape.length === 2 && rows === n * L && shape[1] === width);
  if (ok && t.data && t.data.byteLength === product(shape) * itemSize(t.dtype)) return null;
  return { code: 'INVALID_ARGUMENT', field, description: `expected shape [${n}, ${L}, ${width}] or [${n * L}, ${width}], got [${shape.join(', ')}]` };
}

/** Reported contacts must be in the step's envs and name links that exist: a part must not fail later. */
function checkContacts(k, contactEnv, envs, numLinks) {
  const inStep = new Set(envs);
  const K = contactEnv.length;
  for (const [field, t, width] of [['contacts.body', k.body, 1], ['contacts.partner', k.partner, 1],
    ['contacts.force', k.force, 3], ['contacts.friction', k.friction, 3]]) {
    if (!t && field === 'contacts.friction') continue;
    const shape = t ? (t.shape || []).map(Number) : [];
    const want = width === 1 ? [K] : [K, 3];
    const ok = t && shape.length === want.length && shape.every((d, i) => d === want[i]) &&
        t.data && t.data.byteLength === K * width * itemSize(t.dtype);
    if (!ok) return { code: 'INVALID_ARGUMENT', field, description: `expected shape [${want.join(', ')}] (K = len(contacts.env)), got [${shape.join(', ')}]` };
  }
  const links = (t) => Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
  const body = links(k.body);
  const partner = links(k.partner);
  for (let i = 0; i < K; i++) {
    if (!inStep.has(contactEnv[i])) {
      return { code: 'INVALID_ARGUMENT', field: `contacts.env[${i}]`, description: `env ${contactEnv[i]} is not one of the envs this step updates` };
    }
    for (const [field, b] of [['contacts.body', body], ['contacts.partner', partner]]) {
      const link = b.readInt32LE(4 * i);
      if (link < 0 || link >= numLinks) return { code: 'INVALID_ARGUMENT', field: `${field}[${i}]`, description: `link index ${link} out of range [0, ${numLinks})` };
    }
  }
  return null;
}

/**
 * How to send a StepRequest: whole, or in parts over env ranges.
 * @param {object} req the wire StepRequest
 * @param {object} scene SceneInfo of req.scene
 * @param {number} limit bytes a message may take
 * @param {number} [maxPerPart] at most this many envs per part
 * @returns {{whole: true, perPart: number, n: number, envs: null} |
 *   {whole: false, perPart: number, envs: number[], contactEnv?: Int32Array} |
 *   {error: {code: string, field: string, description: string}}}
 */
function planStep(req, scene, limit, maxPerPart = Infinity) {
  const ids = req.env_ids || [];
  const n = ids.length > 0 ? ids.length : Number(scene.num_envs);
  let contactEnv;
  if (req.contacts) {
    const c = contactEnvs(req.contacts);
    if (c.error) return { whole: true, perPart: Infinity, n, envs: null };  // the server names the field
    contactEnv = c.envs;
  }
  const perPart = Math.min(maxPerPart,
    envsPerPart(limit, responseBytes(scene, req.read), requestBytes(req, scene, contactEnv)));
  if (n <= perPart) return { whole: true, perPart, n, envs: null };
  const r = resolveEnvs(ids, Number(scene.num_envs));
  if (r.error) return { error: r.error };
  const L = (scene.moving_links || []).length;
  const bad = checkLinkArray(req.poses, 'poses', n, L, 7) || checkLinkArray(req.twists, 'twists', n, L, 6) ||
      (req.contacts ? checkContacts(req.contacts, contactEnv, r.envs, (scene.links || []).length) : null);
  if (bad) return { error: bad };
  return { whole: false, perPart, envs: r.envs, contactEnv };
}

/**
 * How to send a ReadSensorsRequest (with or without history): whole, or in parts over env ranges.
 * @returns {{whole: true, perPart: number, n: number} | {whole: false, perPart: number, envs: number[]} |
 *   {error: {code: string, field: string, description: string}}}
 */
function planRead(request, scene, limit, maxPerPart = Infinity) {
  const perPart = Math.min(maxPerPart, envsPerPart(limit, responseBytes(scene, request.read, request.history)));
  const ids = request.env_ids || [];
  const n = ids.length > 0 ? ids.length : Number(scene.num_envs);
  if (n <= perPart) return { whole: true, perPart, n, envs: null };
  const r = resolveEnvs(ids, Number(scene.num_envs));
  return r.error ? { error: r.error } : { whole: false, perPart, envs: r.envs };
}

/** Rows [start, end) of the envs of a per-env tensor whose first axis holds n envs (flat or not). */
function sliceEnvs(t, n, start, end) {
  if (!t) return t;
  const shape = t.shape.map(Number);
  const rowsPerEnv = shape[0] / n;
  const bytesPerEnv = t.data.byteLength / n;
  return {
    dtype: t.dtype,
    shape: [(end - start) * rowsPerEnv, ...shape.slice(1)],
    data: t.data.subarray(start * bytesPerEnv, end * bytesPerEnv),
  };
}

/** Rows `rows` (indices into the first axis, K in all) of a per-contact tensor. */
function gatherRows(t, K, rows) {
  if (!t) return t;
  const width = K === 0 ? 0 : t.data.byteLength / K;
  const src = Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength);
  const out = Buffer.alloc(rows.length * width);
  rows.forEach((r, i) => src.copy(out, i * width, r * width, (r + 1) * width));
  return { dtype: t.dtype, shape: [rows.length, ...t.shape.slice(1).map(Number)], data: out };
}

/**
 * Part k of a split step: the envs [start, end) of `envs` (the step's env list), their poses and
 * twists rows, the contacts of those envs, continues_step = k > 0; the rest as in `req`.
 */
function partStepRequest(req, plan, start, end, k) {
  const n = plan.envs.length;
  const part = {
    ...req,
    env_ids: plan.envs.slice(start, end),
    poses: sliceEnvs(req.poses, n, start, end),
    twists: sliceEnvs(req.twists, n, start, end),
    continues_step: k > 0,
  };
  if (req.contacts) {
    const mine = new Set(part.env_ids);
    const rows = [];
    plan.contactEnv.forEach((e, i) => { if (mine.has(e)) rows.push(i); });
    const K = plan.contactEnv.length;
    const c = req.contacts;
    part.contacts = {
      env: gatherRows(c.env, K, rows), body: gatherRows(c.body, K, rows), partner: gatherRows(c.partner, K, rows),
      force: gatherRows(c.force, K, rows), friction: gatherRows(c.friction, K, rows),
    };
    if (!c.friction) delete part.contacts.friction;
  }
  return part;
}

/**
 * A RESOURCE_EXHAUSTED refusal of a call's size: the server's estimate of its readings (field
 * violation `read`) or the transport's limit on the request ("... larger than max ...").
 */
function isTooLarge(err) {
  return err != null && err.codeName === 'RESOURCE_EXHAUSTED' &&
      ((err.fieldViolations || []).some((v) => v.field === 'read') || /larger than max/.test(err.details || ''));
}

/**
 * Sends the parts one after another; a part refused as too large (the server's estimate is above
 * the client's) is sent again with half its envs, and so are the parts after it (a refused part
 * changes nothing on the server).
 * @param {number} n envs in all
 * @param {number} perPart
 * @param {(start: number, end: number, k: number) => Promise<object>} send part k (k: parts accepted so far)
 * @returns {Promise<{responses: object[], ranges: number[][]}>}
 */
async function sendParts(n, perPart, send) {
  const responses = [];
  const ranges = [];
  let size = perPart;
  for (let s = 0; s < n;) {
    const e = Math.min(n, s + size);
    try {
      responses.push(await send(s, e, responses.length));
    } catch (err) {
      if (e - s > 1 && isTooLarge(err)) {
        size = Math.max(1, Math.floor((e - s) / 2));
        continue;
      }
      if (err && typeof err === 'object') err.partsDone = ranges.slice();
      throw err;
    }
    ranges.push([s, e]);
    s = e;
  }
  return { responses, ranges };
}

/**
 * A split step on a StepStream: the parts pipelined; when one is refused as too large the server
 * has ended the stream there (the later parts were not applied), so the stream is reopened and
 * the rest sent again with half that part's envs per part.
 * @param {{_write: function(object): Promise<object>, _reopen: function(): void}} stream
 * @returns {Promise<object[]>} the decoded parts' responses, in order
 */
async function streamInParts(stream, request, plan) {
  const n = plan.envs.length;
  const results = [];
  let size = plan.perPart;
  for (let s = 0; s < n;) {
    const ranges = envRanges(n - s, size).map(([a, b]) => [s + a, s + b]);
    const settled = await Promise.allSettled(
      ranges.map(([a, b], i) => stream._write(partStepRequest(request, plan, a, b, results.length + i))));
    const failed = settled.findIndex((x) => x.status === 'rejected');
    for (const x of failed < 0 ? settled : settled.slice(0, failed)) results.push(x.value);
    if (failed < 0) break;
    const err = settled[failed].reason;
    const [a, b] = ranges[failed];
    if (b - a <= 1 || !isTooLarge(err)) {
      if (err && typeof err === 'object' && a > 0) err.steppedEnvIds = plan.envs.slice(0, a);
      throw err;
    }
    if (stream._splitter) stream._splitter.forget(request.scene);  // fetch a fresh SceneInfo next time
    stream._reopen();
    s = a;
    size = Math.max(1, Math.floor((b - a) / 2));
  }
  return results;
}

/** Decoded tensors ({dtype, shape, data: TypedArray}) one after the other along axis 0. */
function concatDecoded(list) {
  const total = list.reduce((sum, c) => sum + c.data.length, 0);
  const out = new list[0].data.constructor(total);
  let at = 0;
  for (const c of list) { out.set(c.data, at); at += c.data.length; }
  const rows = list.reduce((sum, c) => sum + Number(c.shape[0]), 0);
  return { dtype: list[0].dtype, shape: [rows, ...list[0].shape.slice(1)], data: out };
}

/** Wire tensors (dense, {dtype, shape, data: Buffer}) one after the other along axis 0. */
function concatWire(list) {
  const rows = list.reduce((sum, t) => sum + Number(t.shape[0]), 0);
  return { dtype: list[0].dtype, shape: [rows, ...list[0].shape.slice(1).map(Number)], data: Buffer.concat(list.map((t) => t.data)) };
}

/** Every reading's channels of decoded parts, joined along the env axis (same readings, same order). */
function joinReadings(parts) {
  return parts[0].readings.map((first, i) => {
    const same = parts.map((p) => p.readings[i]);
    if (same.some((r) => !r || r.sensor !== first.sensor || r.branch !== first.branch)) {
      throw new Error(`split response: parts disagree on reading ${i} (${first.sensor})`);
    }
    const channels = {};
    for (const name of Object.keys(first.channels)) channels[name] = concatDecoded(same.map((r) => r.channels[name]));
    return { ...first, channels };
  });
}

/**
 * One logical response from decoded parts (readings already converted): step and sequence = the
 * last part's, env_ids concatenated, readings and the contact matrix joined along axis 0, timing summed.
 */
function joinResponses(parts) {
  const last = parts[parts.length - 1];
  const out = { ...last, env_ids: parts.flatMap((p) => p.env_ids), readings: joinReadings(parts) };
  if (last.timing) {
    out.timing = {};
    for (const key of Object.keys(last.timing)) out.timing[key] = parts.reduce((s, p) => s + (p.timing ? p.timing[key] : 0), 0);
  }
  if (last.contact_matrix && last.contact_matrix.normal) {
    const cms = parts.map((p) => p.contact_matrix);
    out.contact_matrix = { ...last.contact_matrix, env_ids: cms.flatMap((c) => c.env_ids), normal: concatWire(cms.map((c) => c.normal)) };
    for (const t of ['friction', 'gradient']) {
      if (last.contact_matrix[t] && last.contact_matrix[t].data) out.contact_matrix[t] = concatWire(cms.map((c) => c[t]));
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Calls: what a client needs to plan (the message limit, SceneInfo per scene) and the split calls.

/**
 * A client's planning state and its split Step / ReadSensors calls.
 * `hooks.decode(raw)` converts a response's readings; `hooks.attach(out)` adds `get()` to a
 * joined result; `hooks.error(code, field, description)` makes the client's error type.
 */
class Splitter {
  /**
   * @param {{call: function(string, object): Promise<object>}} client
   * @param {number} clientMaxBytes the client's own send/receive limit
   * @param {{decode: function, attach: function, error: function}} hooks
   */
  constructor(client, clientMaxBytes, hooks) {
    this.client = client;
    this.clientMaxBytes = clientMaxBytes;
    this.hooks = hooks;
    this._limit = null;       // Promise<number>: min(server max_message_bytes, client limit)
    this._scenes = new Map(); // scene name -> Promise<SceneInfo>
  }

  /** Bytes a message may take: the server's limit (GetServerInfo, once per client) or the client's. */
  limit() {
    if (!this._limit) {
      this._limit = this.client.call('GetServerInfo', {}).then(
        (info) => Math.min(Number(info.limits && info.limits.max_message_bytes) || Infinity, this.clientMaxBytes),
        (err) => { this._limit = null; throw err; });
    }
    return this._limit;
  }

  /** SceneInfo of `name`, cached until the scene or its sensors change through this client. */
  scene(name, refresh = false) {
    let p = refresh ? undefined : this._scenes.get(name);
    if (!p) {
      p = this.client.call('GetScene', { scene: name });
      p.catch(() => { if (this._scenes.get(name) === p) this._scenes.delete(name); });
      this._scenes.set(name, p);
    }
    return p;
  }

  /** Caches a SceneInfo the client received (CreateScene, GetScene). */
  remember(info) {
    if (info && info.name) this._scenes.set(info.name, Promise.resolve(info));
    return info;
  }

  /** Forgets a scene (deleted, or its sensors changed). */
  forget(name) {
    this._scenes.delete(name);
  }

  /**
   * Plans a call with `planFn(request, scene, limit, maxPerPart)`; a planning error found with a
   * cached SceneInfo is checked again against a fresh one. Resolves to null (send it whole) when
   * the limit or the SceneInfo cannot be fetched: the call itself then fails with the reason.
   */
  async plan(planFn, request, maxPerPart = Infinity, refresh = false) {
    let limit;
    let scene;
    try {
      limit = await this.limit();
      scene = await this.scene(request.scene, refresh);
    } catch (_) {
      return null;
    }
    let plan = planFn(request, scene, limit, maxPerPart);
    if (plan.error && !refresh) {
      try {
        scene = await this.scene(request.scene, true);
      } catch (_) {
        return null;
      }
      plan = planFn(request, scene, limit, maxPerPart);
    }
    if (plan.error) throw this.hooks.error(plan.error.code, plan.error.field, plan.error.description);
    return plan;
  }

  /** Step or ReadSensors (`method`), split when needed. @returns {Promise<object>} the decoded result */
  async run(method, request) {
    const planFn = method === 'Step' ? planStep : planRead;
    let plan = await this.plan(planFn, request);
    if (!plan || plan.whole) {
      try {
        return this.hooks.decode(await this.client.call(method, request));
      } catch (err) {
        if (!plan || !isTooLarge(err)) throw err;
        // The server's estimate is above ours (a SceneInfo changed elsewhere?): plan again with at
        // most half the envs per part.
        if (!(plan.n > 1)) throw err;
        plan = await this.plan(planFn, request, Math.ceil(plan.n / 2), true);
        if (!plan || plan.whole) throw err;
      }
    }
    const part = method === 'Step' ?
      (s, e, k) => partStepRequest(request, plan, s, e, k) :
      (s, e) => ({ ...request, env_ids: plan.envs.slice(s, e) });
    try {
      const send = (s, e, k) => this.client.call(method, part(s, e, k)).catch((err) => {
        if (isTooLarge(err)) this.forget(request.scene);  // fetch a fresh SceneInfo next time
        throw err;
      });
      const { responses } = await sendParts(plan.envs.length, plan.perPart, send);
      return this.hooks.attach(joinResponses(responses.map((r) => this.hooks.decode(r))));
    } catch (err) {
      if (method === 'Step' && err && err.partsDone && err.partsDone.length > 0) {
        // The accepted parts have stepped their envs: say which.
        err.steppedEnvIds = err.partsDone.flatMap(([s, e]) => plan.envs.slice(s, e));
      }
      throw err;
    }
  }

  /** How to send a step on a StepStream: null (whole) or its plan for {@link streamInParts}. */
  async streamPlan(request) {
    const plan = await this.plan(planStep, request);
    return !plan || plan.whole ? null : plan;
  }
}

module.exports = {
  Splitter,
  ITEM_SIZES, FILL, responseBytes, requestBytes, envsPerPart, envRanges, resolveEnvs, planStep, planRead,
  partStepRequest, sliceEnvs, sendParts, streamInParts, isTooLarge, joinResponses, concatDecoded,
};

'use strict';
/**
 * Node client for the Taxel service (package `taxel.v1`).
 *
 * The .proto files of the repository (../../proto) are loaded at run time with
 * `@grpc/proto-loader`; nothing is generated. Requests and responses are plain objects with the
 * wire's field names (snake_case, `keepCase`), enums as strings ("FLOAT32", "XYZW"), 64-bit
 * integers as JavaScript numbers (exact up to 2^53; a `seed` beyond that may be given as a decimal
 * string but reads back rounded), and `bytes` as Buffers.
 *
 * Arrays travel as `Tensor {dtype, shape, data}` (little-endian, C order). {@link tensor} builds one
 * from a TypedArray without copying; {@link toTypedArray} turns a received one into a
 * Float32Array / Float64Array / Int32Array / Uint8Array that is a view of the received bytes when
 * their offset is aligned to the element size, and a copy otherwise (gRPC hands out Buffer slices
 * of the whole message, at arbitrary offsets).
 *
 * @example
 *   const { TaxelClient, tensor } = require('./taxel');
 *   const client = new TaxelClient('127.0.0.1:50051', { timeoutMs: 10000 });
 *   const info = await client.createScene(spec);
 *   const r = await client.step({ scene: 'grasp', poses, quatOrder: 'XYZW', dt: 1 / 60 });
 *   const depth = r.get('pad', 'depth');      // {dtype: 'FLOAT32', shape: [E, 16, 16], data}
 *   client.close();
 */

const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');
const { Splitter, joinResponses, streamInParts } = require('./split');

/** Default directory of the wire contract: the repository's proto/ folder. */
const DEFAULT_PROTO_DIR = path.resolve(__dirname, '..', '..', 'proto');

/** proto-loader options shared by every load. */
const LOADER_OPTIONS = Object.freeze({
  keepCase: true,   // field names as on the wire: probe_local_pos, env_ids, ...
  longs: Number,    // int64 shapes, steps, byte counts as numbers
  enums: String,    // "FLOAT32", "CONTACT_DEPTH_PROBE", ...
  bytes: Buffer,    // tensor data as Buffer (a slice of the received message)
  defaults: true,   // absent scalars and repeated fields read as 0 / "" / []
  oneofs: true,     // Shape.geometry = "sphere" | "box" | ...
});

const packageCache = new Map();

/**
 * Loads taxel/v1/service.proto (and what it imports) once per proto directory.
 * @param {string} [protoDir] directory holding taxel/v1/*.proto (default: the repository's proto/)
 * @returns {object} the `taxel.v1` namespace of grpc.loadPackageDefinition (service constructor `Taxel`)
 */
function loadTaxelPackage(protoDir = DEFAULT_PROTO_DIR) {
  const dir = path.resolve(protoDir);
  let pkg = packageCache.get(dir);
  if (!pkg) {
    const definition = protoLoader.loadSync('taxel/v1/service.proto', { ...LOADER_OPTIONS, includeDirs: [dir] });
    pkg = grpc.loadPackageDefinition(definition).taxel.v1;
    packageCache.set(dir, pkg);
  }
  return pkg;
}

const { tensor, toTypedArray, fromTensor, asTensor } = require('./tensors');

const { TaxelError, toTaxelError, decodeStatusDetails } = require('./errors');

// ---------------------------------------------------------------------------------------------
// Responses.

/**
 * Readings of a Step / ReadSensors response with every tensor converted by {@link fromTensor}.
 * @typedef {{sensor: string, sensor_id: number, branch: string,
 *   channels: Object<string, {dtype: string, shape: number[], data: ArrayLike<number>}>}} Reading
 */

function decodeReadings(response) {
  const readings = (response.readings || []).map((r) => ({
    sensor: r.sensor,
    sensor_id: r.sensor_id,
    branch: r.branch,
    channels: Object.fromEntries(Object.entries(r.channels || {}).map(([k, t]) => [k, fromTensor(t)])),
  }));
  return attachGet({ ...response, readings });
}

/** Adds `get(sensor, channel, branch?)` (not enumerable) to a result with decoded readings. */
function attachGet(out) {
  const { readings } = out;
  // The reading of `sensor` on `branch` (MEASURED also matches an unspecified branch).
  const findReading = (sensor, branch) => readings.find((x) => x.sensor === sensor && (x.branch === branch ||
      (branch === 'MEASURED' && x.branch === 'BRANCH_UNSPECIFIED')));
  /**
   * One channel of one sensor.
   * @param {string} sensor
   * @param {string} channel
   * @param {string} [branch] "MEASURED" (default) or "GROUND_TRUTH"
   */
  out.get = (sensor, channel, branch = 'MEASURED') => {
    const r = findReading(sensor, branch);
    if (!r) throw new Error(`no reading for sensor '${sensor}' (${branch})`);
    const c = r.channels[channel];
    if (!c) throw new Error(`sensor '${sensor}' has no channel '${channel}'`);
    return c;
  };
  Object.defineProperty(out, 'get', { enumerable: false });
  /**
   * The gradient a step with `read: { gradients: true }` returned for a sensor: channel
   * "depth_gradient" `[E, n, 2, 6]` or "force_gradient" `[E, n, 3, 2, 6]` (docs/reference.md#gradients).
   * @param {string} sensor
   * @param {string} [branch] "MEASURED" (default; sensors without imperfections) or "GROUND_TRUTH"
   */
  out.gradient = (sensor, branch = 'MEASURED') => {
    const r = findReading(sensor, branch);
    const c = r && (r.channels.depth_gradient || r.channels.force_gradient);
    if (!c) throw new Error(`no gradient for sensor '${sensor}' (${branch}); step with read: { gradients: true }`);
    return c;
  };
  Object.defineProperty(out, 'gradient', { enumerable: false });
  return out;
}

/**
 * The wire StepRequest from the client's step arguments.
 * @param {StepArgs} a
 */
function stepRequest(a) {
  const req = {
    scene: a.scene,
    poses: asTensor(a.poses, 7),
    quat_order: a.quatOrder ?? a.quat_order,
    dt: a.dt ?? 0,
    env_ids: a.envIds ?? a.env_ids ?? [],
    twists: asTensor(a.twists, 6),
    read: a.read,
  };
  const k = a.contacts;
  if (k) {
    req.contacts = { env: asTensor(k.env), body: asTensor(k.body), partner: asTensor(k.partner), force: asTensor(k.force, 3) };
    if (k.friction) req.contacts.friction = asTensor(k.friction, 3);
  }
  if (a.sequence !== undefined) req.sequence = a.sequence;
  return req;
}

// ---------------------------------------------------------------------------------------------
// The client.

/**
 * @typedef {object} StepArgs
 * @property {string} scene
 * @property {Float64Array|Float32Array|object} poses `[E or len(envIds), L, 7]` (position, then
 *   the quaternion in quatOrder). A bare TypedArray is sent as the flat `[E·L, 7]`; give
 *   `{data, shape}` or a wire Tensor for another shape.
 * @property {'XYZW'|'WXYZ'} quatOrder required
 * @property {number} dt seconds, > 0
 * @property {number[]} [envIds] envs on the poses' first axis; default all, in order
 * @property {Float64Array|Float32Array|object} [twists] `[.., L, 6]` linear then angular velocity
 * @property {{sensors?: string[], channels?: string[], branches?: string[], none?: boolean,
 *   gradients?: boolean}} [read] gradients: also return each probe reading's pose gradient
 *   (`result.gradient(sensor)`, docs/reference.md#gradients)
 * @property {{env: Int32Array, body: Int32Array, partner: Int32Array, force: Float64Array|Float32Array,
 *   friction?: Float64Array|Float32Array}} [contacts] REPORTED contact matrix only: [K] env, body
 *   and partner link indices, [K·3] forces (wire Tensors accepted too)
 * @property {number} [sequence] echoed in the response (the stream assigns one when absent)
 */

/**
 * @typedef {object} ClientOptions
 * @property {number} [timeoutMs=30000] deadline of every unary call; 0 = none
 * @property {string} [token] bearer token (`authorization: Bearer <token>`) for every call
 * @property {grpc.ChannelCredentials} [credentials] default: insecure (plaintext)
 * @property {number} [maxMessageBytes=67108864] largest message sent or received (the server's default limit)
 * @property {string} [protoDir] directory holding taxel/v1/*.proto
 * @property {boolean} [splitByEnvs=true] send a step or read whose request or readings would exceed
 *   the server's max_message_bytes as parts over env ranges, joined into one result (README,
 *   "Steps of any size"); false: send every call whole
 * @property {object} [channelOptions] extra grpc-js channel options
 */

class TaxelClient {
  /**
   * @param {string} target "host:port" or "unix:/path/taxel.sock"
   * @param {ClientOptions} [options]
   */
  constructor(target, options = {}) {
    const pkg = loadTaxelPackage(options.protoDir);
    const maxBytes = options.maxMessageBytes ?? 64 * 1024 * 1024;
    this.timeoutMs = options.timeoutMs ?? 30000;
    this.token = options.token;
    const hooks = {
      decode: decodeReadings,
      attach: attachGet,
      error: (code, field, description) => new TaxelError(grpc.status[code], `${field}: ${description}`, [{ field, description }]),
    };
    /** Plans and runs split steps and reads; null when splitByEnvs is false. */
    this._split = options.splitByEnvs === false ? null : new Splitter(this, maxBytes, hooks);
    /** The underlying grpc-js client (taxel.v1.Taxel), for anything not wrapped here. */
    this.stub = new pkg.Taxel(target, options.credentials || grpc.credentials.createInsecure(), {
      'grpc.max_receive_message_length': maxBytes,
      'grpc.max_send_message_length': maxBytes,
      ...(options.channelOptions || {}),
    });
  }

  /** Closes the channel. */
  close() {
    this.stub.close();
  }

  _metadata() {
    const md = new grpc.Metadata();
    if (this.token) md.set('authorization', `Bearer ${this.token}`);
    return md;
  }

  _callOptions() {
    return this.timeoutMs > 0 ? { deadline: Date.now() + this.timeoutMs } : {};
  }

  /**
   * Calls a unary RPC by name with a wire request; resolves to the wire response.
   * @param {string} method e.g. "GetServerInfo"
   * @param {object} request
   * @returns {Promise<object>}
   */
  call(method, request = {}) {
    return new Promise((resolve, reject) => {
      this.stub[method](request, this._metadata(), this._callOptions(), (err, response) => {
        if (err) reject(toTaxelError(err));
        else resolve(response);
      });
    });
  }

  /** Versions, limits, capabilities. @returns {Promise<object>} ServerInfo */
  serverInfo() {
    return this.call('GetServerInfo', {});
  }

  /**
   * Uploads a triangle mesh (content-addressed: the same mesh always gets the same id).
   * @param {Float64Array|Float32Array} vertices `[V·3]` metres, mesh frame
   * @param {Int32Array} triangles `[T·3]` vertex indices, counter-clockwise seen from outside
   * @param {{grid?: {max_error?: number, band?: number}}} [options] `grid`: also build the mesh's
   *   narrow-band signed-distance grid now (m; 0 or absent = 1e-4 and 5e-3), for sensors with
   *   `sdf_backend: 'GRID'` (they otherwise build it on first use); RESOURCE_EXHAUSTED naming
   *   grid.max_error when it does not fit the memory limit
   * @returns {Promise<{mesh_id: string, newly_added: boolean, num_vertices: number,
   *   num_triangles: number, watertight: boolean, was_inside_out: boolean, grid: ?{max_error: number,
   *   p99_error: number, cell_size: number, band: number, bytes: string}}>} `grid`: what the
   *   server measured against the exact signed distance, when the mesh has a grid
   */
  uploadMesh(vertices, triangles, options = {}) {
    if (!(triangles instanceof Int32Array)) throw new TypeError('uploadMesh: triangles must be an Int32Array');
    const request = { vertices: asTensor(vertices, 3), triangles: asTensor(triangles, 3) };
    if (options.grid) request.grid = { max_error: options.grid.max_error || 0, band: options.grid.band || 0 };
    return this.call('UploadMesh', request);
  }

  /**
   * Forgets a mesh this tenant uploaded; the server frees it once no tenant holds it.
   * FAILED_PRECONDITION while one of the tenant's scenes uses it, NOT_FOUND when not uploaded.
   * @param {string} meshId @returns {Promise<object>} {}
   */
  deleteMesh(meshId) {
    return this.call('DeleteMesh', { mesh_id: meshId });
  }

  /**
   * The latest partner-resolved contact forces (GetContactMatrix), each tensor converted by
   * {@link fromTensor}: `normal` [E, B, P, 3] (N, world, on the body), `friction` when asked,
   * `gradient` [E, B, P, 3, 2, 6] when asked (a scene created with contact_matrix.gradients:
   * ∂normal/∂ξ, ξ the world twist of the body's link about its origin, index 0, or of the partner
   * about its first link's origin, index 1; δt in N/m then δθ in N/rad). FAILED_PRECONDITION when
   * the scene keeps no matrix, friction or gradient asked for.
   * @param {string} scene
   * @param {{envIds?: number[], rows?: string[], columns?: string[], friction?: boolean,
   *   gradients?: boolean}} [options] envs, rows and columns in the order wanted (default all)
   * @returns {Promise<{env_ids: number[], rows: string[], columns: string[], normal: object,
   *   friction: ?object, gradient: ?object}>}
   */
  async contactMatrix(scene, options = {}) {
    const r = await this.call('GetContactMatrix', {
      scene, env_ids: options.envIds || [], rows: options.rows || [], columns: options.columns || [],
      friction: !!options.friction, gradients: !!options.gradients,
    });
    const convert = (t) => (t && t.data && t.data.length ? fromTensor(t) : null);
    return { env_ids: r.env_ids, rows: r.rows, columns: r.columns, normal: fromTensor(r.normal),
      friction: convert(r.friction), gradient: convert(r.gradient) };
  }

  /**
   * Registers a scene. Tensors inside the spec (probe_local_pos, probe_radius, heights) are wire
   * Tensors: build them with {@link tensor}.
   * @param {object} spec a taxel.v1.SceneSpec (snake_case fields)
   * @returns {Promise<object>} SceneInfo: links, moving_links (the poses' second axis), sensors
   */
  async createScene(spec) {
    return this._remember(await this.call('CreateScene', { spec }));
  }

  /** @param {string} name @returns {Promise<object>} SceneInfo */
  async getScene(name) {
    return this._remember(await this.call('GetScene', { scene: name }));
  }

  _remember(info) {
    return this._split ? this._split.remember(info) : info;
  }

  _forget(scene) {
    if (this._split) this._split.forget(scene);
  }

  /** @returns {Promise<object[]>} SceneInfo of every scene this caller sees */
  async listScenes() {
    return (await this.call('ListScenes', {})).scenes;
  }

  /** @param {string} name @returns {Promise<void>} */
  async deleteScene(name) {
    try {
      await this.call('DeleteScene', { scene: name });
    } finally {
      this._forget(name);
    }
  }

  /**
   * @param {string} scene
   * @param {object} sensor a taxel.v1.SensorSpec
   * @returns {Promise<object>} SensorInfo
   */
  async addSensor(scene, sensor) {
    try {
      return await this.call('AddSensor', { scene, sensor });
    } finally {
      this._forget(scene);
    }
  }

  /**
   * @param {string} scene
   * @param {string|number} sensor name or sensor id
   */
  async removeSensor(scene, sensor) {
    try {
      await this.call('RemoveSensor', typeof sensor === 'number' ? { scene, sensor_id: sensor } : { scene, name: sensor });
    } finally {
      this._forget(scene);
    }
  }

  /**
   * One simulation step. When its request or readings would exceed the server's message limit,
   * it is sent as parts over env ranges (one logical step: the step count advances once) and the
   * result joined; a part refused after others were accepted rejects with `steppedEnvIds`.
   * @param {StepArgs} args
   * @returns {Promise<object>} the StepResponse (scene, sequence, step, env_ids, timing) with
   *   readings converted to TypedArrays and `get(sensor, channel, branch?)`
   */
  async step(args) {
    const req = stepRequest(args);
    if (this._split) return this._split.run('Step', req);
    return decodeReadings(await this.call('Step', req));
  }

  /**
   * Clears per-env state (triggers, velocity history) of the given envs (default all).
   * @param {string} scene
   * @param {number[]} [envIds]
   */
  async reset(scene, envIds = []) {
    await this.call('ResetEnvs', { scene, env_ids: envIds });
  }

  /**
   * The latest readings without stepping (split by env ranges like {@link TaxelClient#step}).
   * @param {string} scene
   * @param {{envIds?: number[], read?: object, history?: number}} [options] history > 0: the last
   *   `history` measured samples, shaped [E, history, <layout>, <channel>], index 0 the newest
   * @returns {Promise<object>} ReadSensorsResponse (step, env_ids) with converted readings and `get`
   */
  async readSensors(scene, options = {}) {
    const request = { scene, env_ids: options.envIds ?? [], read: options.read, history: options.history ?? 0 };
    if (this._split) return this._split.run('ReadSensors', request);
    return decodeReadings(await this.call('ReadSensors', request));
  }

  /**
   * Opens a StepStream: one bidirectional call for a whole episode. No deadline.
   * @returns {StepStream}
   */
  openStepStream() {
    return new StepStream(() => this.stub.StepStream(this._metadata()), this._split);
  }
}

/**
 * A bidirectional StepStream. `step()` sends one request and resolves to its response (the server
 * answers in order, one response per request). The first failed step ends the stream: that
 * promise and every later one reject with the TaxelError.
 *
 * A step over the message limit goes as parts, pipelined, with consecutive sequence numbers (the
 * result carries the last part's); later steps are written once it is done. When the server
 * refuses one of its parts as too large, the stream is reopened and the rest sent in smaller parts.
 */
class StepStream {
  /**
   * @param {function(): grpc.ClientDuplexStream} open starts the call (again, after a refused part)
   * @param {Splitter|null} [splitter] the client's planner (null: every step sent whole)
   */
  constructor(open, splitter = null) {
    this._open = open;
    this._splitter = splitter;
    this._nextSequence = 1;
    this._ended = false;
    this._tail = Promise.resolve();  // writes happen in step() order, after each step's plan
    this._reopen();
  }

  /** Starts a call and listens to it (events of an earlier call are ignored). */
  _reopen() {
    const call = this._open();
    this._call = call;
    this._pending = [];   // {resolve, reject, sequence} in request order, one per request written
    this._error = null;
    // Settles once the call is over (final status received), whatever it was.
    this._finished = new Promise((resolve) => call.on('status', () => resolve()));
    call.on('data', (response) => {
      if (call !== this._call) return;
      const p = this._pending.shift();
      if (!p) return;
      if (Number(response.sequence) !== p.sequence) {
        p.reject(new Error(`StepStream: response sequence ${response.sequence}, expected ${p.sequence}`));
      } else {
        p.resolve(decodeReadings(response));
      }
    });
    call.on('error', (err) => { if (call === this._call) this._fail(toTaxelError(err)); });
    call.on('end', () => { if (call === this._call) this._fail(new Error('StepStream: the stream has ended')); });
  }

  _fail(err) {
    if (!this._error) this._error = err;
    for (const p of this._pending.splice(0)) p.reject(this._error);
  }

  /** Writes one request; resolves to its decoded response. */
  _write(req) {
    if (this._error) return Promise.reject(this._error);
    if (req.sequence === undefined) req.sequence = this._nextSequence;
    this._nextSequence = Number(req.sequence) + 1;
    return new Promise((resolve, reject) => {
      this._pending.push({ resolve, reject, sequence: Number(req.sequence) });
      this._call.write(req);
    });
  }

  /**
   * @param {StepArgs} args scene required on every request; `sequence` assigned when absent
   * @returns {Promise<object>} as {@link TaxelClient#step}
   */
  step(args) {
    if (this._error) return Promise.reject(this._error);
    if (this._ended) return Promise.reject(new Error('StepStream: already ended'));
    const req = stepRequest(args);
    const planned = this._splitter ? this._splitter.streamPlan(req) : Promise.resolve(null);
    // The chain waits for a whole step's write only (pipelining), for a split step's parts.
    const written = this._tail.then(() => planned).then((plan) => (plan ?
      { result: streamInParts(this, req, plan).then((parts) => attachGet(joinResponses(parts))), barrier: true } :
      { result: this._write(req) }));
    this._tail = written.then((w) => (w.barrier ? w.result.then(() => {}, () => {}) : undefined), () => {});
    return written.then((w) => w.result);
  }

  /** Half-closes the stream (after the steps already asked for); resolves when the server has finished it. */
  end() {
    if (!this._ended) {
      this._ended = true;
      return this._tail.then(() => {
        this._call.end();
        return this._finished;
      });
    }
    return this._tail.then(() => this._finished);
  }

  /** Cancels the call. */
  cancel() {
    this._ended = true;
    this._call.cancel();
  }
}

module.exports = {
  TaxelClient,
  StepStream,
  TaxelError,
  toTaxelError,
  tensor,
  toTypedArray,
  fromTensor,
  decodeStatusDetails,
  loadTaxelPackage,
  LOADER_OPTIONS,
  DEFAULT_PROTO_DIR,
  status: grpc.status,
};

// Builders of the smooth implicit shapes (plain objects).
Object.assign(module.exports, require('./shapes'));

// Placement over replicas (after module.exports: replica_set.js requires this module back).
module.exports.placement = require('./placement');
Object.assign(module.exports, require('./replica_set'));

'use strict';
/**
 * `ReplicaSet`: scenes spread over several taxel-server replicas by rendezvous placement
 * (./placement.js), each replica reached through an ordinary {@link TaxelClient}.
 *
 * @example
 *   const { ReplicaSet } = require('./taxel');
 *   const rs = await ReplicaSet.connect(['dns:///taxel-headless.sim.svc:50051'], { autoRecreate: true });
 *   await rs.createScene(spec);                          // on the replica placement picks
 *   const r = await rs.step({ scene: spec.name, poses, quatOrder: 'XYZW', dt: 0.01 });
 *
 * Scene calls are routed by scene name. With `autoRecreate`, a scene whose replica is unreachable
 * (UNAVAILABLE) is re-created on the next live replica by score from the spec this client kept
 * (with its meshes) and the call retried once; a scene gone from a restarted replica (NOT_FOUND
 * "scene: ...") is re-created in place.
 */
const dns = require('dns');
const grpc = require('@grpc/grpc-js');
const placement = require('./placement');
const { TaxelClient, TaxelError, toTaxelError } = require('./taxel');

/** Splits "host:port" / "[v6]:port"; throws a TypeError naming `field`. */
function splitHostPort(hostport, field) {
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(hostport) || /^(.+):(\d+)$/.exec(hostport);
  const port = m ? Number(m[2]) : 0;
  if (!m || port < 1 || port > 65535) {
    throw new TypeError(`${field}: expected host:port with a port in 1..65535, got '${hostport}'`);
  }
  return [m[1], port];
}

/**
 * The replica targets: "host:port" entries as they are; "dns:///host:port" (or
 * "dns://authority/host:port") becomes one "address:port" for every address of the name, sorted.
 * Duplicates dropped.
 * @param {string|string[]} targets
 * @returns {Promise<string[]>}
 */
async function resolveTargets(targets) {
  const entries = typeof targets === 'string' ? [targets] : [...targets];
  const out = [];
  for (const [i, entry] of entries.entries()) {
    const field = `targets[${i}]`;
    if (typeof entry !== 'string' || entry.length === 0) throw new TypeError(`${field}: expected a non-empty target`);
    if (!entry.startsWith('dns:')) {
      out.push(entry);
      continue;
    }
    let rest = entry.slice(4);
    if (rest.startsWith('//')) rest = rest.slice(2).split('/').slice(1).join('/');
    const [host, port] = splitHostPort(rest, field);
    let found;
    try {
      found = await dns.promises.lookup(host, { all: true });
    } catch (e) {
      throw new TypeError(`${field}: cannot resolve '${host}': ${e.code || e.message}`);
    }
    const addresses = [...new Set(found.map((a) => a.address))].sort();
    for (const a of addresses) out.push(a.includes(':') ? `[${a}]:${port}` : `${a}:${port}`);
  }
  const unique = [...new Set(out)];
  if (unique.length === 0) throw new TypeError('targets: no replica to connect to');
  return unique;
}

function meshIds(spec) {
  const ids = [];
  const add = (shapes) => { for (const s of shapes || []) if (s.mesh) ids.push(s.mesh.mesh_id); };
  for (const e of spec.entities || []) {
    for (const l of e.links || []) add(l.shapes);
    for (const a of e.assets || []) for (const ls of a.link_shapes || []) add(ls.shapes);
  }
  return ids;
}

const isUnavailable = (e) => e instanceof TaxelError && e.code === grpc.status.UNAVAILABLE;
const isSceneGone = (e) => e instanceof TaxelError && e.code === grpc.status.NOT_FOUND && e.details.startsWith('scene:');

class ReplicaSet {
  /**
   * Connects to every target and asks its replica_id (GetServerInfo); replicas that do not answer
   * are left out until refresh().
   * @param {string|string[]} targets see {@link resolveTargets}
   * @param {object} [options] `tenant` ("" without authentication; part of the placement key),
   *   `autoRecreate` (default false), `probeTimeoutMs` (how long refresh() waits for each replica,
   *   default 2000), and the {@link TaxelClient} options for every replica
   * @returns {Promise<ReplicaSet>}
   */
  static async connect(targets, options = {}) {
    const { tenant = '', autoRecreate = false, probeTimeoutMs = 2000, ...clientOptions } = options;
    const rs = new ReplicaSet(await resolveTargets(targets), tenant, autoRecreate, clientOptions);
    rs.probeTimeoutMs = probeTimeoutMs;
    try {
      await rs.refresh();
      if (rs.replicaIds.length === 0) {
        throw new TaxelError(grpc.status.UNAVAILABLE,
          `replica set: no replica answered GetServerInfo among ${rs._targets.join(', ')}`);
      }
    } catch (e) {
      rs.close();
      throw e;
    }
    return rs;
  }

  constructor(targets, tenant, autoRecreate, clientOptions) {
    this.tenant = tenant;
    this.autoRecreate = autoRecreate;
    this._targets = targets;
    this._byTarget = new Map(targets.map((t) => [t, new TaxelClient(t, clientOptions)]));
    this._clients = new Map();  // replica id -> TaxelClient
    this._live = new Map();     // replica id -> reachable at last contact
    this._home = new Map();     // scene -> replica id
    this._specs = new Map();    // scene -> kept SceneSpec (autoRecreate)
    this._meshes = new Map();   // mesh id -> [vertices, triangles]
    this._recreations = new Map();
  }

  /** Asks every target its replica_id again; those that answer are live (again). */
  async refresh() {
    const seen = new Map();  // replica id -> target
    for (const [target, client] of this._byTarget) {
      let info;
      try {
        info = await this._probe(client);
      } catch (e) {
        if (isUnavailable(e) || (e instanceof TaxelError && e.code === grpc.status.DEADLINE_EXCEEDED)) continue;
        throw e;
      }
      const id = info.replica_id;
      if (!id) throw new TypeError(`replica set: ${target} reports no replica_id`);
      if (seen.has(id)) {
        throw new TypeError(`replica set: targets ${seen.get(id)} and ${target} both report replica_id '${id}'; ` +
          'replica ids must be unique');
      }
      seen.set(id, target);
    }
    for (const [id, target] of seen) this._clients.set(id, this._byTarget.get(target));
    for (const id of this._clients.keys()) this._live.set(id, seen.has(id));
  }

  /**
   * GetServerInfo waiting (up to probeTimeoutMs) for the channel to connect: a channel in
   * reconnect backoff, its server down a moment ago, would fail at once otherwise.
   */
  _probe(client) {
    return new Promise((resolve, reject) => {
      client.stub.GetServerInfo({}, client._metadata(), { deadline: Date.now() + this.probeTimeoutMs, waitForReady: true },
        (err, response) => (err ? reject(toTaxelError(err)) : resolve(response)));
    });
  }

  /** The live replicas' ids, sorted. @returns {string[]} */
  get replicaIds() {
    return [...this._live].filter(([, up]) => up).map(([id]) => id).sort();
  }

  /** The live replicas by decreasing score for `scene`. @returns {string[]} */
  ranking(scene) {
    return placement.rank(this.replicaIds, this.tenant, scene);
  }

  /** The replica `scene` lives on: where this client put it, else the highest score. @returns {string} */
  replicaOf(scene) {
    if (this._home.has(scene)) return this._home.get(scene);
    const r = this.ranking(scene);
    if (r.length === 0) throw new TaxelError(grpc.status.UNAVAILABLE, 'replica set: no live replica');
    return r[0];
  }

  /** The TaxelClient of one replica. */
  client(replicaId) {
    return this._clients.get(replicaId);
  }

  /** How often `scene` was re-created by this client (failover or restart). */
  recreations(scene) {
    return this._recreations.get(scene) ?? 0;
  }

  async uploadMesh(vertices, triangles) {
    for (const id of this.replicaIds) {
      try {
        const r = await this._clients.get(id).uploadMesh(vertices, triangles);
        this._meshes.set(r.mesh_id, [vertices, triangles]);
        return r;
      } catch (e) {
        if (!isUnavailable(e)) throw e;
        this._live.set(id, false);
      }
    }
    throw new TaxelError(grpc.status.UNAVAILABLE, 'replica set: no live replica');
  }

  async _createOn(id, spec) {
    const c = this._clients.get(id);
    try {
      return await c.createScene(spec);
    } catch (e) {
      const needed = meshIds(spec).filter((m) => this._meshes.has(m));
      if (!(e instanceof TaxelError) || e.code !== grpc.status.NOT_FOUND || !e.details.includes('mesh_id') ||
          needed.length === 0) throw e;
      for (const m of needed) await c.uploadMesh(...this._meshes.get(m));
      return c.createScene(spec);
    }
  }

  /** CreateScene on the replica placement picks (an unreachable one is skipped). */
  async createScene(spec) {
    for (;;) {
      const id = this.replicaOf(spec.name);
      try {
        const info = await this._createOn(id, spec);
        this._home.set(spec.name, id);
        if (this.autoRecreate) this._specs.set(spec.name, spec);
        return info;
      } catch (e) {
        if (!isUnavailable(e)) throw e;
        this._live.set(id, false);
      }
    }
  }

  async _recover(scene, err) {
    if (!this.autoRecreate || !this._specs.has(scene) || !this._home.has(scene)) return false;
    const old = this._home.get(scene);
    let candidates;
    if (isSceneGone(err)) candidates = [old];
    else if (isUnavailable(err)) {
      this._live.set(old, false);
      candidates = this.ranking(scene);
    } else return false;
    for (const id of candidates) {
      try {
        await this._createOn(id, this._specs.get(scene));
      } catch (e) {
        if (isUnavailable(e)) { this._live.set(id, false); continue; }
        if (!(e instanceof TaxelError) || e.code !== grpc.status.ALREADY_EXISTS) return false;
      }
      this._home.set(scene, id);
      this._recreations.set(scene, this.recreations(scene) + 1);
      return true;
    }
    return false;
  }

  async _routed(scene, fn) {
    try {
      return await fn(this._clients.get(this.replicaOf(scene)));
    } catch (e) {
      if (!(await this._recover(scene, e))) throw e;
      return fn(this._clients.get(this.replicaOf(scene)));
    }
  }

  /** Looked up in ranking order for a scene this client did not create. */
  async getScene(name) {
    if (this._home.has(name)) return this._routed(name, (c) => c.getScene(name));
    for (const id of this.ranking(name)) {
      try {
        const info = await this._clients.get(id).getScene(name);
        this._home.set(name, id);
        return info;
      } catch (e) {
        if (isUnavailable(e)) this._live.set(id, false);
        else if (!(e instanceof TaxelError) || e.code !== grpc.status.NOT_FOUND) throw e;
      }
    }
    throw new TaxelError(grpc.status.NOT_FOUND, `scene: no scene named '${name}' on any live replica`);
  }

  async deleteScene(name) {
    await this.getScene(name);
    await this._clients.get(this.replicaOf(name)).deleteScene(name);
    this._home.delete(name);
    this._specs.delete(name);
  }

  /** SceneInfo of this tenant's scenes on every live replica. */
  async listScenes() {
    const out = [];
    for (const id of this.replicaIds) {
      try {
        out.push(...await this._clients.get(id).listScenes());
      } catch (e) {
        if (!isUnavailable(e)) throw e;
        this._live.set(id, false);
      }
    }
    return out;
  }

  async addSensor(scene, sensor) {
    const info = await this._routed(scene, (c) => c.addSensor(scene, sensor));
    const spec = this._specs.get(scene);
    if (spec) this._specs.set(scene, { ...spec, sensors: [...(spec.sensors || []), sensor] });
    return info;
  }

  async removeSensor(scene, sensor) {
    await this._routed(scene, (c) => c.removeSensor(scene, sensor));
    const spec = this._specs.get(scene);
    if (spec && typeof sensor === 'string') {
      this._specs.set(scene, { ...spec, sensors: (spec.sensors || []).filter((s) => s.name !== sensor) });
    }
  }

  step(args) {
    return this._routed(args.scene, (c) => c.step(args));
  }

  reset(scene, envIds = []) {
    return this._routed(scene, (c) => c.reset(scene, envIds));
  }

  readSensors(scene, options = {}) {
    return this._routed(scene, (c) => c.readSensors(scene, options));
  }

  /** A StepStream to the replica `scene` lives on (on an error, step() once, which moves the scene, then reopen). */
  openStepStream(scene) {
    return this._clients.get(this.replicaOf(scene)).openStepStream();
  }

  close() {
    for (const c of this._byTarget.values()) c.close();
  }
}

module.exports = { ReplicaSet, resolveTargets };

'use strict';
/**
 * Rendezvous (highest-random-weight) placement of scenes on replicas: the rule of every Taxel
 * client (docs/reference.md, "Placement").
 *
 *   score(replicaId, tenant, name) = SipHash-2-4(PLACEMENT_KEY, utf8(replicaId) ‖ 0x00 ‖ utf8(tenant) ‖ "/" ‖ utf8(name))
 *
 * as an unsigned 64-bit BigInt. The scene lives on the replica with the highest score; the rest,
 * by decreasing score, is where it goes when that replica is lost (equal scores, possible only for
 * equal ids, by increasing id, compared byte-wise).
 *
 * Run as `node placement.js < input` for the cross-language format (see {@link dump}).
 */

/** The fixed 128-bit key: bytes 00 01 .. 0f (the key of SipHash's reference test vectors). */
const PLACEMENT_KEY = Buffer.from([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]);

const MASK = (1n << 64n) - 1n;
const rotl = (x, b) => ((x << b) | (x >> (64n - b))) & MASK;

function sipRounds(v, n) {
  let [v0, v1, v2, v3] = v;
  for (let i = 0; i < n; i++) {
    v0 = (v0 + v1) & MASK; v1 = rotl(v1, 13n) ^ v0; v0 = rotl(v0, 32n);
    v2 = (v2 + v3) & MASK; v3 = rotl(v3, 16n) ^ v2;
    v0 = (v0 + v3) & MASK; v3 = rotl(v3, 21n) ^ v0;
    v2 = (v2 + v1) & MASK; v1 = rotl(v1, 17n) ^ v2; v2 = rotl(v2, 32n);
  }
  v[0] = v0; v[1] = v1; v[2] = v2; v[3] = v3;
}

/** Little-endian unsigned value of up to 8 bytes of `buf` from `start`. */
function load64(buf, start, n) {
  let x = 0n;
  for (let i = n - 1; i >= 0; i--) x = (x << 8n) | BigInt(buf[start + i]);
  return x;
}

/**
 * SipHash-2-4 of `data` under a 16-byte key.
 * @param {Buffer|Uint8Array} key 16 bytes
 * @param {Buffer|Uint8Array} data
 * @returns {bigint} unsigned 64-bit
 */
function siphash24(key, data) {
  if (key.length !== 16) throw new RangeError(`siphash24: key must be 16 bytes, got ${key.length}`);
  const k0 = load64(key, 0, 8);
  const k1 = load64(key, 8, 8);
  const v = [k0 ^ 0x736f6d6570736575n, k1 ^ 0x646f72616e646f6dn, k0 ^ 0x6c7967656e657261n, k1 ^ 0x7465646279746573n];
  const n = data.length;
  const end = n - (n % 8);
  const absorb = (m) => { v[3] ^= m; sipRounds(v, 2); v[0] ^= m; };
  for (let i = 0; i < end; i += 8) absorb(load64(data, i, 8));
  absorb((BigInt(n & 0xff) << 56n) | load64(data, end, n - end));
  v[2] ^= 0xffn;
  sipRounds(v, 4);
  return v[0] ^ v[1] ^ v[2] ^ v[3];
}

/** The rendezvous score of scene `tenant/name` on replica `replicaId`. @returns {bigint} */
function score(replicaId, tenant, name) {
  return siphash24(PLACEMENT_KEY, Buffer.concat([Buffer.from(replicaId, 'utf8'), Buffer.from([0]),
    Buffer.from(tenant, 'utf8'), Buffer.from('/'), Buffer.from(name, 'utf8')]));
}

/** `replicaIds` by decreasing score for scene `tenant/name`; the first is its home. @returns {string[]} */
function rank(replicaIds, tenant, name) {
  const scored = replicaIds.map((id) => ({ id, s: score(id, tenant, name) }));
  scored.sort((a, b) => (a.s !== b.s ? (a.s > b.s ? -1 : 1)
    : Buffer.compare(Buffer.from(a.id, 'utf8'), Buffer.from(b.id, 'utf8'))));
  return scored.map((x) => x.id);
}

/** The replica scene `tenant/name` is placed on. @returns {string} */
function place(replicaIds, tenant, name) {
  if (replicaIds.length === 0) throw new RangeError('place: no replicas');
  return rank(replicaIds, tenant, name)[0];
}

/**
 * The cross-language format (as taxel.placement.dump in Python): input, the replica ids on the
 * first line separated by spaces, then one `tenant<TAB>name` a line; output, one line a scene:
 * `tenant/name<TAB>ranking (comma-separated)<TAB>scores (16 hex digits each, comma-separated)`.
 * @param {string} text @returns {string}
 */
function dump(text) {
  const lines = text.split('\n');
  const replicas = lines[0].split(' ').filter((s) => s.length > 0);
  let out = '';
  for (const line of lines.slice(1)) {
    if (!line) continue;
    const [tenant, name] = line.split('\t');
    const order = rank(replicas, tenant, name);
    const scores = order.map((r) => score(r, tenant, name).toString(16).padStart(16, '0'));
    out += `${tenant}/${name}\t${order.join(',')}\t${scores.join(',')}\n`;
  }
  return out;
}

module.exports = { PLACEMENT_KEY, siphash24, score, rank, place, dump };

if (require.main === module) {
  const chunks = [];
  process.stdin.on('data', (c) => chunks.push(c));
  process.stdin.on('end', () => process.stdout.write(dump(Buffer.concat(chunks).toString('utf8'))));
}

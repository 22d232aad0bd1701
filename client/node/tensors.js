'use strict';
/**
 * Tensors of the Taxel wire (`taxel.v1.Tensor {dtype, shape, data, nonzero_mask}`): little-endian,
 * C order. Re-exported by taxel.js.
 */

const os = require('os');


const LITTLE_ENDIAN_HOST = os.endianness() === 'LE';

/** Element type of each DType: the TypedArray class that holds it. */
const DTYPE_ARRAYS = Object.freeze({
  FLOAT32: Float32Array,
  FLOAT64: Float64Array,
  INT32: Int32Array,
  BOOL: Uint8Array,
});

function dtypeOfArray(array) {
  if (array instanceof Float32Array) return 'FLOAT32';
  if (array instanceof Float64Array) return 'FLOAT64';
  if (array instanceof Int32Array) return 'INT32';
  if (array instanceof Uint8Array) return 'BOOL';
  throw new TypeError('tensor: expected a Float32Array, Float64Array, Int32Array or Uint8Array (bool)');
}

function product(shape) {
  return shape.reduce((a, b) => a * Number(b), 1);
}

/** Bytes of `array` in little-endian order: the same memory on a little-endian host. */
function littleEndianBytes(array) {
  const bytes = Buffer.from(array.buffer, array.byteOffset, array.byteLength);
  if (LITTLE_ENDIAN_HOST || array.BYTES_PER_ELEMENT === 1) return bytes;
  const swapped = Buffer.from(bytes);  // copy, then swap in place
  if (array.BYTES_PER_ELEMENT === 4) swapped.swap32();
  else swapped.swap64();
  return swapped;
}

/**
 * A wire Tensor from a TypedArray, without copying its memory (little-endian hosts).
 * @param {Float32Array|Float64Array|Int32Array|Uint8Array} array elements in C order
 *   (Uint8Array = BOOL, one byte per flag)
 * @param {number[]} [shape] default [array.length]; [] is a scalar (one element)
 * @returns {{dtype: string, shape: number[], data: Buffer}}
 */
function tensor(array, shape) {
  const dtype = dtypeOfArray(array);
  const dims = shape === undefined ? [array.length] : Array.from(shape, Number);
  if (product(dims) !== array.length) {
    throw new RangeError(`tensor: shape [${dims.join(', ')}] holds ${product(dims)} elements, the array ${array.length}`);
  }
  return { dtype, shape: dims, data: littleEndianBytes(array) };
}

/**
 * The sparse form of a tensor (read: {sparse: true}; Tensor.nonzero_mask): bit i of the mask
 * (byte i >> 3, least significant bit first) is set where element i is stored in `data`; the
 * other elements are zero. Returns a fresh TypedArray of all n elements.
 */
function expandSparse(Type, n, data, mask) {
  const size = Type.BYTES_PER_ELEMENT;
  if (mask.byteLength !== Math.ceil(n / 8)) {
    throw new RangeError(`tensor: sparse form of ${n} elements needs a ${Math.ceil(n / 8)}-byte mask, got ${mask.byteLength}`);
  }
  if ((n & 7) !== 0 && (mask[mask.byteLength - 1] >> (n & 7)) !== 0) {
    throw new RangeError('tensor: sparse form with mask bits past the last element');
  }
  let stored = 0;
  for (let i = 0; i < mask.byteLength; i++) stored += BIT_COUNTS[mask[i]];
  if (stored * size > data.byteLength) throw new RangeError('tensor: sparse form with fewer values than mask bits');
  if (stored * size < data.byteLength) throw new RangeError('tensor: sparse form with more values than mask bits');
  // Copied as integer words (bit for bit, NaN payloads included): 1 byte for BOOL, else 4-byte words.
  const Word = size === 1 ? Uint8Array : Uint32Array;
  const w = size === 1 ? 1 : size / 4;
  const aligned = data.byteOffset % Word.BYTES_PER_ELEMENT === 0 ? data : Uint8Array.from(data);
  const src = new Word(aligned.buffer, aligned.byteOffset, stored * w);
  const out = new Word(n * w);
  let k = 0;
  for (let byte = 0; byte < mask.byteLength; byte++) {
    for (let m = mask[byte]; m !== 0; m &= m - 1) {
      const i = (byte << 3) + 31 - Math.clz32(m & -m);  // the lowest set bit first: stored order
      for (let j = 0; j < w; j++) out[i * w + j] = src[k * w + j];
      k++;
    }
  }
  if (!LITTLE_ENDIAN_HOST && size > 1) {
    const b = Buffer.from(out.buffer);
    if (size === 4) b.swap32(); else b.swap64();
  }
  return new Type(out.buffer, 0, n);
}

/** Set bits of each byte value. */
const BIT_COUNTS = Uint8Array.from({ length: 256 }, (_, v) => {
  let c = 0;
  for (let x = v; x !== 0; x &= x - 1) c++;
  return c;
});

/**
 * The elements of a received Tensor as a TypedArray of its dtype (FLOAT32 -> Float32Array,
 * FLOAT64 -> Float64Array, INT32 -> Int32Array, BOOL -> Uint8Array).
 *
 * Zero-copy when `tensor.data.byteOffset` is a multiple of the element size (the result shares
 * memory with the received Buffer); otherwise — TypedArrays cannot start at an unaligned offset —
 * the bytes are copied once into a fresh, aligned array. Always a copy on a big-endian host.
 * @param {{dtype: string, shape: number[], data: Uint8Array}} t
 * @returns {Float32Array|Float64Array|Int32Array|Uint8Array}
 */
function toTypedArray(t) {
  const Type = DTYPE_ARRAYS[t.dtype];
  if (!Type) throw new TypeError(`tensor: unsupported dtype ${t.dtype}`);
  const data = t.data || Buffer.alloc(0);
  const n = product(t.shape || []);
  const size = Type.BYTES_PER_ELEMENT;
  if (t.nonzero_mask && t.nonzero_mask.byteLength > 0) return expandSparse(Type, n, data, t.nonzero_mask);
  if (data.byteLength !== n * size) {
    throw new RangeError(`tensor: ${t.dtype} [${(t.shape || []).join(', ')}] needs ${n * size} bytes, got ${data.byteLength}`);
  }
  if (LITTLE_ENDIAN_HOST && data.byteOffset % size === 0) {
    return new Type(data.buffer, data.byteOffset, n);  // view
  }
  const copy = new Uint8Array(n * size);  // fresh buffer: offset 0, aligned
  copy.set(data);
  if (!LITTLE_ENDIAN_HOST && size > 1) {
    const b = Buffer.from(copy.buffer);
    if (size === 4) b.swap32(); else b.swap64();
  }
  return new Type(copy.buffer, 0, n);
}

/**
 * A received Tensor as `{dtype, shape, data}` with `data` from {@link toTypedArray}.
 * @param {{dtype: string, shape: number[], data: Uint8Array}} t
 * @returns {{dtype: string, shape: number[], data: Float32Array|Float64Array|Int32Array|Uint8Array}}
 */
function fromTensor(t) {
  return { dtype: t.dtype, shape: Array.from(t.shape || [], Number), data: toTypedArray(t) };
}

/**
 * Accepts a wire Tensor ({dtype, shape, data: Buffer}), `{data: TypedArray, shape}`, or a bare
 * TypedArray whose shape is `[length / inner, inner]` (or `[length]` when not divisible; the
 * server then names the field and the shape it expected).
 */
function asTensor(value, inner) {
  if (value === undefined || value === null) return undefined;
  if (ArrayBuffer.isView(value)) {
    const shape = inner && value.length % inner === 0 ? [value.length / inner, inner] : [value.length];
    return tensor(value, shape);
  }
  if (ArrayBuffer.isView(value.data) && !(value.data instanceof Buffer) && value.dtype === undefined) {
    return tensor(value.data, value.shape);
  }
  return value;  // already a wire Tensor
}

module.exports = { tensor, toTypedArray, fromTensor, asTensor, expandSparse, DTYPE_ARRAYS };

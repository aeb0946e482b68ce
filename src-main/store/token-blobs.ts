// Binary codecs for token arrays (DESIGN §3): little-endian Int32 / Float32 BLOBs, never JSON.
// Correct on any host: a byte copy on little-endian hosts, a DataView walk on big-endian ones.

/** True when the host stores multi-byte numbers little-endian (every platform Node ships on today). */
export const HOST_IS_LITTLE_ENDIAN: boolean = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

type IntLike = Int32Array | ArrayLike<number>;
type FloatLike = Float32Array | ArrayLike<number>;

function asInt32(a: IntLike): Int32Array {
  return a instanceof Int32Array ? a : Int32Array.from(a as ArrayLike<number>);
}
function asFloat32(a: FloatLike): Float32Array {
  return a instanceof Float32Array ? a : Float32Array.from(a as ArrayLike<number>);
}

/** Bytes of a typed array, copied (the caller may mutate its array afterwards). */
function copyBytes(a: Int32Array | Float32Array): Buffer {
  return Buffer.from(new Uint8Array(a.buffer, a.byteOffset, a.byteLength));
}

function checkLength(blob: Uint8Array, what: string): void {
  if (blob.byteLength % 4 !== 0) throw new RangeError(`${what} blob length ${blob.byteLength} is not a multiple of 4`);
}

// ---- Int32 ----

/** Portable encoder (DataView, explicit little-endian). Exported for tests; use int32ToBlob. */
export function int32ToBlobPortable(a: IntLike): Buffer {
  const src = asInt32(a);
  const out = Buffer.allocUnsafe(src.length * 4);
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  for (let i = 0; i < src.length; i++) view.setInt32(i * 4, src[i], true);
  return out;
}

/** Portable decoder (DataView, explicit little-endian). Exported for tests; use blobToInt32. */
export function blobToInt32Portable(blob: Uint8Array | null | undefined): Int32Array {
  if (!blob || blob.byteLength === 0) return new Int32Array(0);
  checkLength(blob, 'Int32');
  const n = blob.byteLength / 4;
  const out = new Int32Array(n);
  const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  for (let i = 0; i < n; i++) out[i] = view.getInt32(i * 4, true);
  return out;
}

export function int32ToBlob(a: IntLike): Buffer {
  return HOST_IS_LITTLE_ENDIAN ? copyBytes(asInt32(a)) : int32ToBlobPortable(a);
}

export function blobToInt32(blob: Uint8Array | null | undefined): Int32Array {
  if (!HOST_IS_LITTLE_ENDIAN) return blobToInt32Portable(blob);
  if (!blob || blob.byteLength === 0) return new Int32Array(0);
  checkLength(blob, 'Int32');
  // Copy into a fresh, aligned buffer (SQLite/Node buffers may sit at any byte offset).
  const out = new Int32Array(blob.byteLength / 4);
  new Uint8Array(out.buffer).set(blob);
  return out;
}

// ---- Float32 ----

export function float32ToBlobPortable(a: FloatLike): Buffer {
  const src = asFloat32(a);
  const out = Buffer.allocUnsafe(src.length * 4);
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  for (let i = 0; i < src.length; i++) view.setFloat32(i * 4, src[i], true);
  return out;
}

export function blobToFloat32Portable(blob: Uint8Array | null | undefined): Float32Array {
  if (!blob || blob.byteLength === 0) return new Float32Array(0);
  checkLength(blob, 'Float32');
  const n = blob.byteLength / 4;
  const out = new Float32Array(n);
  const view = new DataView(blob.buffer, blob.byteOffset, blob.byteLength);
  for (let i = 0; i < n; i++) out[i] = view.getFloat32(i * 4, true);
  return out;
}

export function float32ToBlob(a: FloatLike): Buffer {
  return HOST_IS_LITTLE_ENDIAN ? copyBytes(asFloat32(a)) : float32ToBlobPortable(a);
}

export function blobToFloat32(blob: Uint8Array | null | undefined): Float32Array {
  if (!HOST_IS_LITTLE_ENDIAN) return blobToFloat32Portable(blob);
  if (!blob || blob.byteLength === 0) return new Float32Array(0);
  checkLength(blob, 'Float32');
  const out = new Float32Array(blob.byteLength / 4);
  new Uint8Array(out.buffer).set(blob);
  return out;
}

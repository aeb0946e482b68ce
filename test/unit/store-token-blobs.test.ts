import { describe, expect, it } from 'vitest';
import {
  HOST_IS_LITTLE_ENDIAN,
  blobToFloat32,
  blobToFloat32Portable,
  blobToInt32,
  blobToInt32Portable,
  float32ToBlob,
  float32ToBlobPortable,
  int32ToBlob,
  int32ToBlobPortable,
} from '../../src-main/store/token-blobs.js';

describe('token blobs', () => {
  it('host is little-endian here (fast path exercised)', () => {
    expect(HOST_IS_LITTLE_ENDIAN).toBe(true);
  });

  it('empty arrays round-trip', () => {
    expect(int32ToBlob(new Int32Array(0)).byteLength).toBe(0);
    expect(float32ToBlob(new Float32Array(0)).byteLength).toBe(0);
    expect(blobToInt32(int32ToBlob(new Int32Array(0)))).toEqual(new Int32Array(0));
    expect(blobToFloat32(float32ToBlob(new Float32Array(0)))).toEqual(new Float32Array(0));
    expect(blobToInt32(null)).toEqual(new Int32Array(0));
    expect(blobToFloat32(undefined)).toEqual(new Float32Array(0));
    expect(blobToInt32Portable(Buffer.alloc(0))).toEqual(new Int32Array(0));
  });

  it('encodes little-endian bytes explicitly', () => {
    expect([...int32ToBlob(new Int32Array([1, -2, 151645]))]).toEqual([
      1, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff, 0x5d, 0x50, 0x02, 0x00,
    ]);
    expect([...float32ToBlob(new Float32Array([1]))]).toEqual([0, 0, 0x80, 0x3f]);
  });

  it('fast path and DataView path agree byte for byte', () => {
    const ids = Int32Array.from({ length: 5000 }, (_, i) => (i * 2654435761) | 0);
    const lps = Float32Array.from({ length: 5000 }, (_, i) => -Math.abs(Math.sin(i)) * 7);
    expect(int32ToBlob(ids).equals(int32ToBlobPortable(ids))).toBe(true);
    expect(float32ToBlob(lps).equals(float32ToBlobPortable(lps))).toBe(true);
    expect(blobToInt32Portable(int32ToBlob(ids))).toEqual(ids);
    expect(blobToFloat32Portable(float32ToBlob(lps))).toEqual(lps);
  });

  it('round-trips extremes, NaN/-0/Infinity and plain number arrays', () => {
    const ids = new Int32Array([0, 1, -1, 2147483647, -2147483648, 151643]);
    expect(blobToInt32(int32ToBlob(ids))).toEqual(ids);
    expect(blobToInt32(int32ToBlob([5, 6, 7]))).toEqual(new Int32Array([5, 6, 7]));
    const f = new Float32Array([0, -0, Infinity, -Infinity, NaN, -1e-30, -12.5]);
    const back = blobToFloat32(float32ToBlob(f));
    expect(Object.is(back[1], -0)).toBe(true);
    expect(Number.isNaN(back[4])).toBe(true);
    expect(back).toEqual(f);
  });

  it('decodes from an unaligned buffer slice and copies (no aliasing)', () => {
    const ids = new Int32Array([10, 20, 30]);
    const padded = Buffer.concat([Buffer.from([9]), int32ToBlob(ids)]);
    const slice = padded.subarray(1);
    expect(slice.byteOffset % 4).not.toBe(0);
    const out = blobToInt32(slice);
    expect(out).toEqual(ids);
    slice[0] = 99;
    expect(out[0]).toBe(10);
    const src = new Int32Array([1, 2]);
    const blob = int32ToBlob(src);
    src[0] = 7;
    expect(blobToInt32(blob)[0]).toBe(1);
  });

  it('encodes typed-array views with a byteOffset', () => {
    const big = new Int32Array([1, 2, 3, 4, 5]);
    const view = big.subarray(2);
    expect(blobToInt32(int32ToBlob(view))).toEqual(new Int32Array([3, 4, 5]));
  });

  it('rejects blobs whose length is not a multiple of 4', () => {
    expect(() => blobToInt32(Buffer.alloc(5))).toThrow(RangeError);
    expect(() => blobToFloat32(Buffer.alloc(3))).toThrow(RangeError);
    expect(() => blobToInt32Portable(Buffer.alloc(6))).toThrow(RangeError);
  });
});

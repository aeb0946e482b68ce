// Deterministic hashing and PRNG: every "random" choice of the sim is a pure function of its inputs.

/** 32-bit hash of a list of numbers and strings (FNV-1a over parts, then a murmur3 finaliser). */
export function hash32(...parts: Array<number | string>): number {
  let h = 0x811c9dc5;
  for (const p of parts) {
    const s = typeof p === 'number' ? `#${p}` : `$${p}`;
    for (let i = 0; i < s.length; i++) {
      h ^= s.charCodeAt(i);
      h = Math.imul(h, 0x01000193);
    }
    h ^= 0xff;
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Uniform in [0, 1) from the hash of the parts. */
export function unit(...parts: Array<number | string>): number {
  return hash32(...parts) / 4294967296;
}

/** mulberry32: a seeded stream, for the engine's knob rolls (failures, drops). */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function randomHex(next: () => number, chars: number): string {
  let s = '';
  while (s.length < chars) s += Math.floor(next() * 16).toString(16);
  return s;
}

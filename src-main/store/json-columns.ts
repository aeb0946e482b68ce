// JSON columns of the completions table (requests as received / served, the response), stored either as
// plain JSON text (schema ≤ 5, and small values) or as a tagged BLOB: a message-level delta against the
// same column of the parent completion, and/or raw-deflated. See store/README.md, "Delta storage".
//
// A delta keeps the value's top-level keys in order; each key is either copied from the base (unchanged),
// set (`s`), or extended (`x`: the base's array up to `keep`, then the added elements). An agent's request
// is its previous request plus a few messages, so a turn stores only those messages.
import { deflateRawSync, inflateRawSync } from 'node:zlib';

export interface JsonDelta {
  /** The value's keys, in order. */
  k: string[];
  /** Keys whose value is given in full. */
  s?: Record<string, unknown>;
  /** Array keys: [elements kept from the base's array, elements added after them]. */
  x?: Record<string, [number, unknown[]]>;
}

/** Tags of a BLOB-encoded column value (first byte). */
const TAG_DELTA = 1;
const TAG_DELTA_DEFLATED = 2;
const TAG_FULL_DEFLATED = 3;
/** Below this many bytes, compression is not worth a call into zlib. */
const DEFLATE_MIN_BYTES = 1024;

export type JsonColumn = string | Buffer | null;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A base value with the JSON text of its array elements, computed once and reused when the next turn is
 * compared against it (the element texts of one turn are the base texts of the next).
 */
export class DeltaBase {
  private readonly texts = new Map<string, string[]>();
  constructor(readonly value: unknown) {}

  /** JSON text of each element of array key `key` (cached). */
  elementTexts(key: string): string[] {
    let t = this.texts.get(key);
    if (!t) {
      const arr = (this.value as Obj)[key] as unknown[];
      t = arr.map(elementText);
      this.texts.set(key, t);
    }
    return t;
  }

  /** Seeds the cache with texts computed while diffing (so they are not computed twice). */
  seed(key: string, texts: string[]): void {
    this.texts.set(key, texts);
  }
}

function elementText(v: unknown): string {
  return typeof v === 'object' && v !== null ? JSON.stringify(v) : `${typeof v}:${String(v)}`;
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * The delta of `value` against `base`, or null when there is nothing to gain (either is not a plain
 * object, or no key is shared). `next`, when given, receives the element texts of `value` for reuse.
 */
export function diffJson(base: DeltaBase, value: unknown, next?: DeltaBase): JsonDelta | null {
  const b = base.value;
  if (!isObj(b) || !isObj(value)) return null;
  // Keys JSON would drop (undefined values) are dropped here too, so a delta reads back as JSON.parse would.
  const d: JsonDelta = { k: Object.keys(value).filter((key) => value[key] !== undefined) };
  let shared = 0;
  for (const key of d.k) {
    const v = value[key];
    if (!Object.prototype.hasOwnProperty.call(b, key)) {
      (d.s ??= {})[key] = v;
      continue;
    }
    const bv = b[key];
    if (Array.isArray(v) && Array.isArray(bv)) {
      const bt = base.elementTexts(key);
      const vt = v.map(elementText);
      next?.seed(key, vt);
      let keep = 0;
      while (keep < bt.length && keep < vt.length && bt[keep] === vt[keep]) keep++;
      if (keep === bt.length && keep === vt.length) shared++;
      else if (keep > 0) {
        (d.x ??= {})[key] = [keep, v.slice(keep)];
        shared++;
      } else (d.s ??= {})[key] = v;
      continue;
    }
    if (sameJson(bv, v)) shared++;
    else (d.s ??= {})[key] = v;
  }
  return shared > 0 ? d : null;
}

/** Rebuilds a value from its base and delta. Unchanged elements are shared with the base (read-only). */
export function applyJsonDelta(base: unknown, d: JsonDelta): unknown {
  if (!isObj(base)) throw new Error('delta column: the base value is not an object');
  const out: Obj = {};
  for (const key of d.k) {
    if (d.s && Object.prototype.hasOwnProperty.call(d.s, key)) out[key] = d.s[key];
    else if (d.x && Object.prototype.hasOwnProperty.call(d.x, key)) {
      const [keep, add] = d.x[key]!;
      const from = base[key];
      if (!Array.isArray(from) || from.length < keep) throw new Error(`delta column: base key ${key} has fewer than ${keep} elements`);
      out[key] = from.slice(0, keep).concat(add);
    } else {
      if (!Object.prototype.hasOwnProperty.call(base, key)) throw new Error(`delta column: base lacks key ${key}`);
      out[key] = base[key];
    }
  }
  return out;
}

function tagged(tag: number, text: string): Buffer {
  const body = Buffer.from(text, 'utf8');
  const out = Buffer.allocUnsafe(body.length + 1);
  out[0] = tag;
  body.copy(out, 1);
  return out;
}

function deflated(tag: number, text: string): Buffer {
  const z = deflateRawSync(Buffer.from(text, 'utf8'));
  const out = Buffer.allocUnsafe(z.length + 1);
  out[0] = tag;
  z.copy(out, 1);
  return out;
}

/**
 * Encodes a JSON column: a delta against `base` when one helps, compressed when large; plain JSON text
 * otherwise. `usesBase` tells the caller whether decoding will need the base.
 */
export function encodeJsonColumn(value: unknown, base: DeltaBase | null, next?: DeltaBase): { column: JsonColumn; usesBase: boolean } {
  if (value === undefined || value === null) return { column: null, usesBase: false };
  const delta = base ? diffJson(base, value, next) : null;
  if (delta) {
    const text = JSON.stringify(delta);
    return { column: text.length >= DEFLATE_MIN_BYTES ? deflated(TAG_DELTA_DEFLATED, text) : tagged(TAG_DELTA, text), usesBase: true };
  }
  const text = JSON.stringify(value);
  return { column: text.length >= DEFLATE_MIN_BYTES ? deflated(TAG_FULL_DEFLATED, text) : text, usesBase: false };
}

/** True when decoding this column needs the parent's value of the same column. */
export function columnNeedsBase(column: JsonColumn): boolean {
  return Buffer.isBuffer(column) && (column[0] === TAG_DELTA || column[0] === TAG_DELTA_DEFLATED);
}

/** Decodes a JSON column; `base` is the parent's decoded value of the same column (needed for deltas). */
export function decodeJsonColumn(column: JsonColumn, base: () => unknown): unknown {
  if (column === null) return null;
  if (typeof column === 'string') return JSON.parse(column);
  const tag = column[0];
  const body = column.subarray(1);
  switch (tag) {
    case TAG_DELTA:
      return applyJsonDelta(base(), JSON.parse(body.toString('utf8')) as JsonDelta);
    case TAG_DELTA_DEFLATED:
      return applyJsonDelta(base(), JSON.parse(inflateRawSync(body).toString('utf8')) as JsonDelta);
    case TAG_FULL_DEFLATED:
      return JSON.parse(inflateRawSync(body).toString('utf8'));
    default:
      throw new Error(`JSON column: unknown encoding tag ${tag}`);
  }
}

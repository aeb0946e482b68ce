// Small pure helpers shared by the Anthropic, Responses and Gemini codecs: zod validation that throws
// DialectError with a field path, opaque base64 tokens (thinking signatures, encrypted reasoning), ids.
import type { z } from 'zod';
import { DialectError } from './codec.js';

export type Path = ReadonlyArray<string | number>;

export function pathString(path: Path): string {
  return path.length === 0 ? 'request body' : path.join('.');
}

export function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function valueAt(root: unknown, path: Path): unknown {
  let cur = root;
  for (const key of path) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string | number, unknown>)[key];
  }
  return cur;
}

/** Turns the first zod issue into a one-line message naming the field, e.g. `messages.3.content: expected string or array`. */
export function formatIssue(issue: z.core.$ZodIssue, root: unknown, base: Path): string {
  const rel = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
  const where = pathString([...base, ...rel]);
  if (issue.code === 'invalid_type') {
    const value = valueAt(root, rel);
    const expected = issue.expected === 'int' ? 'integer' : issue.expected;
    if (value === undefined) return `${where}: required field missing (expected ${expected})`;
    return `${where}: expected ${expected}, got ${expected === 'integer' && typeof value === 'number' ? String(value) : typeName(value)}`;
  }
  return `${where}: ${issue.message.replace(/^Invalid input: /, '')}`;
}

/** Validates `value` (found at `path` in the request) or throws a 400 DialectError naming the field. */
export function check<S extends z.ZodType>(schema: S, value: unknown, path: Path = [], errorType?: string): z.output<S> {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  throw new DialectError(formatIssue(r.error.issues[0], value, path), 400, errorType);
}

/** The body must be a JSON object before any field is looked at. */
export function requireObject(body: unknown, errorType?: string): Record<string, unknown> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new DialectError(`request body: expected a JSON object, got ${typeName(body)}`, 400, errorType);
  }
  return body as Record<string, unknown>;
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

// ---- base64 of UTF-8 text, without Buffer (core also runs in the renderer) ----

export function base64Encode(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}

export function base64Decode(b64: string): string | null {
  try {
    const bin = atob(b64);
    const bytes = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}

/**
 * Rollgate's own opaque reasoning token (Anthropic thinking `signature`, Responses `encrypted_content`):
 * base64 of the reasoning text behind a marker, so the text comes back even when the client only keeps
 * the token (Claude Code's `display:"omitted"`, Codex's encrypted reasoning).
 */
const REASONING_TOKEN_PREFIX = 'rollgate.v1.';

export function encodeReasoningToken(text: string): string {
  return REASONING_TOKEN_PREFIX + base64Encode(text);
}

/** The reasoning text inside a token made by `encodeReasoningToken`, or null for anyone else's token. */
export function decodeReasoningToken(token: unknown): string | null {
  if (typeof token !== 'string' || !token.startsWith(REASONING_TOKEN_PREFIX)) return null;
  return base64Decode(token.slice(REASONING_TOKEN_PREFIX.length));
}

/** Id suffix derived from a canonical id (`chatcmpl-abc` → `abc`), safe for `msg_…`, `resp_…`. */
export function idSuffix(id: string): string {
  const s = id.replace(/^(chatcmpl-|cmpl-|resp_|msg_)/, '').replace(/[^A-Za-z0-9_-]/g, '');
  return s || 'rollgate';
}

export function parseJsonObject(text: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(text);
    return isPlainObject(v) ? v : null;
  } catch {
    return null;
  }
}

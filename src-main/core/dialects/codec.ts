// Contract every dialect codec implements (DESIGN §3). Pure: frames are returned as strings.
import type { CanonicalDelta, CanonicalRequest, CanonicalResponse, Dialect } from '../types.js';

/** A request the dialect cannot accept; the gateway turns it into the dialect's error shape. */
export class DialectError extends Error {
  constructor(message: string, readonly status = 400, readonly type = 'invalid_request_error') {
    super(message);
    this.name = 'DialectError';
  }
}

export interface ParseContext {
  /** Model named in the URL (Gemini). */
  urlModel?: string;
  /** Streaming chosen by the URL rather than the body (Gemini `:streamGenerateContent`). */
  urlStream?: boolean;
}

export interface ParsedRequest<C = unknown> {
  canonical: CanonicalRequest;
  /** Whatever the encoders need to map the answer back (tool name maps, original ids, model echo). */
  context: C;
}

export interface StreamEncoder {
  /** Frames to send before the first delta. */
  start(): string[];
  delta(delta: CanonicalDelta): string[];
  /** Closing frames (usage, stop events, terminator); called after the record is committed. */
  finish(response: CanonicalResponse): string[];
  /** A dialect-shaped error event mid-stream, then the terminator if the dialect has one. */
  error(status: number, message: string): string[];
}

export interface ErrorBody { status: number; body: unknown }

export interface DialectCodec<C = unknown> {
  readonly dialect: Dialect;
  parseRequest(body: unknown, ctx: ParseContext): ParsedRequest<C>;
  encodeResponse(response: CanonicalResponse, context: C): unknown;
  streamEncoder(context: C, meta: { id: string; model: string; created: number }): StreamEncoder;
  encodeError(status: number, message: string, type?: string): ErrorBody;
}

export function sseFrame(data: unknown, event?: string): string {
  const payload = typeof data === 'string' ? data : JSON.stringify(data);
  return (event ? `event: ${event}\n` : '') + `data: ${payload}\n\n`;
}

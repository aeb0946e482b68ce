// HTTP plumbing shared by both flavours: SSE framing, request bookkeeping, the token clock.
import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { TokenFormat } from '../token-format.js';
import type { ChatTokenizer } from '../tokenizer/index.js';
import type { Run, SimState } from './state.js';

export interface SimContext {
  state: SimState;
  /** The served model's tokenizer and family: how prompts render and how output is written and parsed. */
  fmt: TokenFormat;
  tok: ChatTokenizer;
  model: string;
  maxModelLen: number;
}

export const hex = (bytes = 16) => randomBytes(bytes).toString('hex');
export const nowSec = () => Math.floor(Date.now() / 1000);

export class HttpError extends Error {
  constructor(readonly status: number, message: string, readonly type = 'BadRequestError', readonly param: string | null = null) {
    super(message);
  }
}

export type Body = Record<string, unknown>;

export function bodyOf(req: FastifyRequest): Body {
  const b = req.body;
  if (!b || typeof b !== 'object' || Array.isArray(b)) throw new HttpError(400, 'Request body must be a JSON object');
  return b as Body;
}

/** An SSE response on the raw socket, so chunks leave as they are written. */
export class SseWriter {
  private ended = false;
  constructor(private readonly reply: FastifyReply) {
    reply.hijack();
    reply.raw.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', connection: 'keep-alive' });
  }
  get open(): boolean {
    return !this.ended && !this.reply.raw.destroyed;
  }
  data(payload: unknown): void {
    if (this.open) this.reply.raw.write(`data: ${typeof payload === 'string' ? payload : JSON.stringify(payload)}\n\n`);
  }
  done(): void {
    this.data('[DONE]');
    this.end();
  }
  end(): void {
    if (this.ended) return;
    this.ended = true;
    if (!this.reply.raw.destroyed) this.reply.raw.end();
  }
  /** Simulates an engine dying mid-stream: the socket goes away without a terminator. */
  drop(): void {
    this.ended = true;
    // Let what was already written reach the client first, as when an engine dies mid-generation.
    const raw = this.reply.raw;
    setTimeout(() => raw.destroy(), 20);
  }
}

/** Tracks one generation: admission through the pause gate, client disconnects, and release. */
export async function withRun<T>(ctx: SimContext, req: FastifyRequest, fn: (run: Run) => Promise<T>): Promise<T> {
  const run = await ctx.state.admit();
  const onClose = () => {
    run.closed = true;
  };
  req.raw.socket?.once('close', onClose);
  try {
    return await fn(run);
  } finally {
    req.raw.socket?.off('close', onClose);
    ctx.state.finish(run);
  }
}

/** True when a sample ended on one of the family's stop tokens (it rides with the token before it). */
export function endsOnStopToken(ctx: SimContext, s: { ids: number[]; finish: string }): boolean {
  return s.finish === 'stop' && ctx.fmt.stopIds.concat(ctx.tok.eosTokenId).includes(s.ids[s.ids.length - 1]!);
}

/** What the family's parser reads: the sampled text with special tokens kept and the stop token left out. */
export function parserText(ctx: SimContext, ids: number[], matched: number | string | null): string {
  const body = typeof matched === 'number' && ids[ids.length - 1] === matched ? ids.slice(0, -1) : ids;
  const text = ctx.tok.decode(body);
  return typeof matched === 'string' && text.endsWith(matched) ? text.slice(0, -matched.length) : text;
}

/** Text deltas for the family's parser as a sample's ids are sent (special tokens kept, stop token and string cut). */
export function parserTextStream(ctx: SimContext, s: { ids: number[]; matched: number | string | null }) {
  let emitted = 0;
  return {
    upTo(count: number, last: boolean): string {
      const text = parserText(ctx, s.ids.slice(0, count), last ? s.matched : null);
      if (!last && text.endsWith('\uFFFD')) return '';
      const delta = text.slice(emitted);
      emitted = Math.max(emitted, text.length);
      return delta;
    },
  };
}

/** Groups token indices into stream steps: one token each, except a final EOS rides with the token before it. */
export function streamSteps(n: number, endsWithEos: boolean): number[][] {
  // Zero tokens (max_tokens 0) still needs one step to carry the finish reason.
  if (n === 0) return [[]];
  const steps: number[][] = [];
  for (let i = 0; i < n; i++) steps.push([i]);
  if (endsWithEos && steps.length >= 2) {
    const last = steps.pop()!;
    steps[steps.length - 1].push(...last);
  }
  return steps;
}

export function utf8Bytes(s: string): number[] {
  return Array.from(Buffer.from(s, 'utf8'));
}

export function resolveMaxTokens(ctx: SimContext, promptLen: number, requested: unknown): number {
  const room = ctx.maxModelLen - promptLen;
  return typeof requested === 'number' && requested >= 0 ? Math.min(Math.floor(requested), Math.max(room, 0)) : Math.max(room, 0);
}

export function stopList(v: unknown): string[] | undefined {
  if (typeof v === 'string') return [v];
  if (Array.isArray(v)) return v.filter((s): s is string => typeof s === 'string' && s.length > 0);
  return undefined;
}

/** Structured-output request in any of the spellings engines accept. */
export function jsonSchemaOf(body: Body): Record<string, unknown> | true | undefined {
  const rf = body.response_format as { type?: string; json_schema?: { schema?: Record<string, unknown> } } | undefined;
  if (rf?.type === 'json_schema') return rf.json_schema?.schema ?? true;
  if (rf?.type === 'json_object') return true;
  const so = body.structured_outputs as { json?: unknown } | undefined;
  const g = so?.json ?? body.guided_json;
  if (typeof g === 'string') {
    try {
      return JSON.parse(g) as Record<string, unknown>;
    } catch {
      return true;
    }
  }
  if (g && typeof g === 'object') return g as Record<string, unknown>;
  return undefined;
}

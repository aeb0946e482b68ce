// Gemini answers: GenerateContentResponse, its SSE chunks (`data:` only, no [DONE]) and error envelopes.
import type { CanonicalDelta, CanonicalResponse, FinishReason } from '../types.js';
import { sseFrame, type StreamEncoder } from './codec.js';
import { encodeReasoningToken, parseJsonObject } from './codec-util.js';
import type { GeminiContext } from './gemini.js';

type Part = Record<string, unknown>;

const STATUS_NAMES = new Set(['INVALID_ARGUMENT', 'FAILED_PRECONDITION', 'OUT_OF_RANGE', 'UNAUTHENTICATED', 'PERMISSION_DENIED', 'NOT_FOUND', 'ABORTED', 'ALREADY_EXISTS', 'RESOURCE_EXHAUSTED', 'CANCELLED', 'DATA_LOSS', 'UNKNOWN', 'INTERNAL', 'UNIMPLEMENTED', 'UNAVAILABLE', 'DEADLINE_EXCEEDED']);

export function geminiErrorStatus(status: number): string {
  if (status === 400) return 'INVALID_ARGUMENT';
  if (status === 401) return 'UNAUTHENTICATED';
  if (status === 403) return 'PERMISSION_DENIED';
  if (status === 404) return 'NOT_FOUND';
  if (status === 409) return 'ABORTED';
  if (status === 429) return 'RESOURCE_EXHAUSTED';
  if (status === 499) return 'CANCELLED';
  if (status === 501) return 'UNIMPLEMENTED';
  if (status === 503) return 'UNAVAILABLE';
  if (status === 504) return 'DEADLINE_EXCEEDED';
  if (status >= 500) return 'INTERNAL';
  return 'INVALID_ARGUMENT';
}

/** `type` is used as the status name when it is one (DialectErrors from this codec carry INVALID_ARGUMENT). */
export function geminiErrorBody(status: number, message: string, type?: string) {
  return { error: { code: status, message, status: type && STATUS_NAMES.has(type) ? type : geminiErrorStatus(status) } };
}

export function geminiFinishReason(finish: FinishReason): string {
  if (finish === 'length') return 'MAX_TOKENS';
  if (finish === 'stop' || finish === 'tool_calls') return 'STOP';
  return 'OTHER';
}

/** Gemini counts thoughts apart from candidates: total = prompt + candidates + thoughts. */
function usageMetadata(res: CanonicalResponse) {
  const thoughts = res.usage.reasoning_tokens ?? 0;
  return {
    promptTokenCount: res.usage.prompt_tokens,
    candidatesTokenCount: res.usage.completion_tokens - thoughts,
    totalTokenCount: res.usage.total_tokens,
    ...(thoughts > 0 ? { thoughtsTokenCount: thoughts } : {}),
  };
}

function callPart(id: string, name: string, args: string): Part {
  return { functionCall: { name, args: parseJsonObject(args) ?? {}, id } };
}

/**
 * The first non-thought part carries a thoughtSignature holding the reasoning, so the reasoning comes back
 * with the history even when thoughts are not shown (Gemini CLI drops thought parts from its history).
 */
function signFirst(parts: Part[], reasoning: string | null): void {
  if (!reasoning) return;
  const first = parts.find((p) => !p.thought);
  if (first) first.thoughtSignature = encodeReasoningToken(reasoning);
}

export function encodeGeminiResponse(res: CanonicalResponse, ctx: GeminiContext) {
  const m = res.message;
  const parts: Part[] = [];
  if (m.reasoning && ctx.includeThoughts) parts.push({ text: m.reasoning, thought: true });
  if (m.content) parts.push({ text: m.content });
  for (const tc of m.tool_calls) parts.push(callPart(tc.id, tc.function.name, tc.function.arguments));
  signFirst(parts, m.reasoning);
  if (parts.length === 0) parts.push({ text: '' });
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason: geminiFinishReason(res.finish_reason), index: 0 }],
    usageMetadata: usageMetadata(res),
    modelVersion: ctx.model,
    responseId: res.id,
  };
}

interface Building { id: string; name: string; args: string; emitted: boolean }

/**
 * One `data:` chunk per delta, lagging one delta behind so that the last chunk (finishReason +
 * usageMetadata) always carries a non-empty part (Gemini CLI treats a chunk without parts as invalid).
 * Function calls are emitted whole once complete.
 */
export class GeminiStream implements StreamEncoder {
  private held: Part[] = [];
  private readonly building = new Map<number, Building>();
  private reasoning = '';
  private signed = false;
  private sawText = false;
  private sawReasoning = false;

  constructor(private readonly ctx: GeminiContext, private readonly meta: { id: string; model: string; created: number }) {}

  private chunk(parts: Part[], extra: Record<string, unknown> = {}): string {
    return sseFrame({
      candidates: [{ content: { role: 'model', parts }, ...('finishReason' in extra ? { finishReason: extra.finishReason } : {}), index: 0 }],
      ...('usageMetadata' in extra ? { usageMetadata: extra.usageMetadata } : {}),
      modelVersion: this.ctx.model,
      responseId: this.meta.id,
    });
  }

  private push(part: Part): void {
    if (!part.thought && !this.signed) {
      this.signed = true;
      if (this.reasoning) part.thoughtSignature = encodeReasoningToken(this.reasoning);
    }
    this.held.push(part);
  }

  /** Completed calls join the held parts. */
  private completeCalls(): void {
    for (const b of this.building.values()) {
      if (b.emitted) continue;
      b.emitted = true;
      this.push(callPart(b.id, b.name, b.args));
    }
  }

  private flush(): string[] {
    if (this.held.length === 0) return [];
    const parts = this.held;
    this.held = [];
    return [this.chunk(parts)];
  }

  start(): string[] {
    return [];
  }

  delta(d: CanonicalDelta): string[] {
    if (d.kind === 'tool_call') {
      const b = this.building.get(d.index);
      if (b) {
        b.args += d.arguments;
        if (d.name) b.name += d.name;
        return [];
      }
      this.completeCalls();
      const frames = this.flush();
      this.building.set(d.index, { id: d.id ?? `call_${d.index}`, name: d.name ?? '', args: d.arguments, emitted: false });
      return frames;
    }
    if (!d.text) return [];
    this.completeCalls();
    const frames = this.flush();
    if (d.kind === 'reasoning') {
      this.sawReasoning = true;
      this.reasoning += d.text;
      if (this.ctx.includeThoughts) this.push({ text: d.text, thought: true });
    } else {
      this.sawText = true;
      this.push({ text: d.text });
    }
    return frames;
  }

  finish(res: CanonicalResponse): string[] {
    const m = res.message;
    if (!this.sawReasoning && m.reasoning) {
      this.reasoning = m.reasoning;
      if (this.ctx.includeThoughts) this.push({ text: m.reasoning, thought: true });
    }
    if (!this.sawText && m.content) this.push({ text: m.content });
    this.completeCalls();
    m.tool_calls.forEach((tc, i) => {
      if (!this.building.has(i)) this.push(callPart(tc.id, tc.function.name, tc.function.arguments));
    });
    const parts = this.held.length ? this.held : [{ text: '' }];
    this.held = [];
    return [this.chunk(parts, { finishReason: geminiFinishReason(res.finish_reason), usageMetadata: usageMetadata(res) })];
  }

  error(status: number, message: string): string[] {
    return [...this.flush(), sseFrame(geminiErrorBody(status, message))];
  }
}

// Chat-mode re-renders (DESIGN §6). In chat mode the engine renders every prompt from messages, so the
// next prompt holds the previous turn's output as the chat template re-renders it, not as it was
// sampled. With Qwen3 on vLLM the usual case is a tool-call turn: the model samples
// `</think>` `\n\n` `<tool_call>`, vLLM answers with `content: "\n\n"`, the agent sends that back and
// the template renders `</think>` `\n\n\n` `<tool_call>` (one more newline, a different token). The
// texts differ only in whitespace; the token ids differ.
//
// The sampled ids are what the policy produced and what a trainer trains on, so a merged trace keeps
// them (mask 1, their own logprobs). The engine's later prompts held the re-rendered ids instead; each
// such stretch is recorded on the trace (RerenderedSpan: sampled ids ↔ served ids), and the proof of
// every later turn states how many of those stretches its engine prompt holds. Only stretches whose
// decoded texts are equal once whitespace is removed are accepted: anything else stays a break.
import type { RerenderedSpan } from './types.js';

/** Longest stretch (in tokens, on either side) one re-rendered span may cover. */
const MAX_SPAN = 8;
/** More re-rendered spans than this in one turn is not a re-render but a different text. */
const MAX_SPANS_PER_TURN = 16;

export type TokenText = (id: number) => string;

/** A span found by `alignRerender`, in the coordinates of the two arrays it compared. */
export interface SpanMatch {
  sampledFrom: number;
  sampledTo: number;
  servedFrom: number;
  servedTo: number;
}

const WS = /\s+/g;

function textOf(ids: ArrayLike<number>, from: number, to: number, tokenText: TokenText): string {
  let s = '';
  for (let i = from; i < to; i++) s += tokenText(ids[i]);
  return s.replace(WS, '');
}

/**
 * Walks `sampled[sFrom:]` against `served[tFrom:]`: equal ids match one for one; where they differ, the
 * shortest pair of stretches (each ≤ MAX_SPAN tokens) whose texts are equal without whitespace and after
 * which the ids agree again is taken as one re-rendered span. Returns the spans and the index in `served`
 * right after the re-rendered `sampled`, or null when the difference is more than whitespace.
 */
export function alignRerender(
  sampled: ArrayLike<number>, sFrom: number, served: ArrayLike<number>, tFrom: number, tokenText: TokenText,
): { spans: SpanMatch[]; servedEnd: number } | null {
  const n = sampled.length;
  const m = served.length;
  const spans: SpanMatch[] = [];
  let i = sFrom;
  let j = tFrom;
  while (i < n) {
    if (j < m && sampled[i] === served[j]) {
      i++;
      j++;
      continue;
    }
    if (spans.length === MAX_SPANS_PER_TURN) return null;
    const found = shortestSpan(sampled, i, served, j, tokenText);
    if (!found) return null;
    spans.push({ sampledFrom: i, sampledTo: i + found.a, servedFrom: j, servedTo: j + found.b });
    i += found.a;
    j += found.b;
  }
  return { spans, servedEnd: j };
}

function shortestSpan(sampled: ArrayLike<number>, i: number, served: ArrayLike<number>, j: number, tokenText: TokenText): { a: number; b: number } | null {
  const n = sampled.length;
  const m = served.length;
  for (let size = 1; size <= 2 * MAX_SPAN; size++) {
    for (let a = Math.max(0, size - MAX_SPAN); a <= Math.min(size, MAX_SPAN); a++) {
      const b = size - a;
      if (i + a > n || j + b > m) continue;
      // the ids must agree again right after the span (or the sampled turn ends there)
      if (i + a < n && (j + b >= m || sampled[i + a] !== served[j + b])) continue;
      if (textOf(sampled, i, i + a, tokenText) === textOf(served, j, j + b, tokenText)) return { a, b };
    }
  }
  return null;
}

/** The served view's shift at the end of `spans`: how many more ids the engine had than the trace. */
export function spanShift(spans: readonly RerenderedSpan[], count = spans.length): number {
  let s = 0;
  for (let k = 0; k < count; k++) s += spans[k].served.length - spans[k].sampled.length;
  return s;
}

// Loss-mask overlays for the token view, from the traces API (DESIGN §6). Pure.
//
// A trace's full sequence is promptIds ++ responseIds; turn k's engine prompt is full[0:promptLength_k]
// (the trace's proof), its sampled ids follow with mask 1. So a completion inside a trace can show,
// on its own prompt, which earlier tokens were trained (mask 1: earlier samples), which were not
// (mask 0: tool results, user turns) and which are the first prompt (context).
import type { Completion, Trace } from '../backend/types.js';
import type { TokenMarker } from '../components/TokenView.js';

export interface Overlay {
  mask: Int8Array;
  logprobAt: (i: number) => number | undefined;
  markers: Map<number, TokenMarker>;
  traceId: string;
  turn: number;
}

export function traceOfCompletion(traces: Trace[], completionId: string): { trace: Trace; turn: number } | null {
  for (const t of traces) {
    const k = t.completionIds.indexOf(completionId);
    if (k >= 0) return { trace: t, turn: k };
  }
  return null;
}

/**
 * Where each turn's output starts in the trace's full sequence: from the proof (after chat-mode re-renders
 * the engine prompt is longer or shorter than that by the spans' difference), else reconstructed from the
 * mask (start of each mask-1 run).
 */
export function turnPromptLengths(t: Trace): number[] {
  if (t.proof?.turns?.length) return t.proof.turns.map((x) => x.outputStart ?? x.promptLength);
  const P0 = t.promptIds.length;
  const out = [P0];
  for (let i = 1; i < t.lossMask.length; i++) if (t.lossMask[i] === 1 && t.lossMask[i - 1] !== 1) out.push(P0 + i);
  return out;
}

/** Overlay for one completion's token view (its prompt ++ output), or null when it is not in a trace. */
export function completionOverlay(traces: Trace[], c: Completion): Overlay | null {
  const found = traceOfCompletion(traces, c.id);
  if (!found) return null;
  const { trace, turn } = found;
  const P0 = trace.promptIds.length;
  const L = turnPromptLengths(trace)[turn] ?? c.promptIds.length;
  const P = c.promptIds.length;
  const O = c.outputIds.length;
  const mask = new Int8Array(P + O);
  const toTrace = engineToTrace(trace, trace.proof?.turns?.[turn]?.rerendered ?? 0);
  for (let i = 0; i < P; i++) {
    const x = toTrace(i);
    mask[i] = x < 0 ? 0 : x < P0 ? -1 : (trace.lossMask[x - P0] ?? -1);
  }
  for (let j = 0; j < O; j++) mask[P + j] = trace.lossMask[L - P0 + j] ?? 1;
  const markers = new Map<number, TokenMarker>();
  turnPromptLengths(trace).forEach((len, k) => {
    if (k < turn && len < P) markers.set(len, { kind: 'turn', label: `turn ${k + 1} output starts` });
  });
  return {
    mask,
    logprobAt: (i) => {
      const x = i < P ? toTrace(i) : -1;
      return x >= P0 ? trace.responseLogprobs[x - P0] : undefined;
    },
    markers,
    traceId: trace.id,
    turn,
  };
}

/**
 * Maps a position of a turn's engine prompt to the trace's full sequence, given how many re-rendered
 * spans that prompt holds; -1 inside a span's served ids (the engine read them, the trace keeps the sampled ones).
 */
export function engineToTrace(t: Trace, spans: number): (i: number) => number {
  const list = (t.rerendered ?? []).slice(0, spans);
  return (i) => {
    let surplus = 0;
    for (const s of list) {
      const start = s.at + surplus;
      if (i < start) break;
      if (i < start + s.served.length) return -1;
      surplus += s.served.length - s.sampled.length;
    }
    return i - surplus;
  };
}

/** Mask, markers and (when the last turn has them) piece texts for a whole trace. */
export function traceTokens(t: Trace, completions: Map<string, Completion>) {
  const P = t.promptIds.length;
  const R = t.responseIds.length;
  const mask = new Int8Array(P + R);
  mask.fill(-1, 0, P);
  for (let i = 0; i < R; i++) mask[P + i] = t.lossMask[i] ?? 0;
  const markers = new Map<number, TokenMarker>();
  turnPromptLengths(t).forEach((len, k) => {
    if (k > 0) markers.set(len, { kind: 'turn', label: `turn ${k + 1} output starts` });
  });
  for (const b of t.breaks ?? []) {
    if (typeof b.tokenIndex === 'number' && b.tokenIndex < P + R) markers.set(b.tokenIndex, { kind: 'break', label: `chain break: ${b.reason}` });
  }
  // Full sequence = last turn's prompt ++ its output: reuse that completion's piece texts.
  const last = completions.get(t.completionIds[t.completionIds.length - 1]);
  let promptPieces: string[] | undefined;
  let outputPieces: string[] | undefined;
  if (last?.promptPieces && last.outputPieces && last.promptPieces.length + last.outputPieces.length === P + R && last.promptPieces.length >= P) {
    const all = last.promptPieces.concat(last.outputPieces);
    promptPieces = all.slice(0, P);
    outputPieces = all.slice(P);
  }
  return { mask, markers, promptPieces, outputPieces };
}

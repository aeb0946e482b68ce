// prefix-merge builder (DESIGN §6).
//
// Model. The ok completions of a session form a forest: a completion's parent is the earlier ok
// completion whose tip (promptIds ++ outputIds) is the LONGEST exact prefix of its promptIds (the
// latest such completion when several tips are identical). Found with an exact index of the earlier
// tips (tip-trie.ts, no hashing): it stores only the tokens not shared with an earlier tip, and when a
// prompt extends one of the last few tips (checked against that completion's ids, the usual case) the
// lookup starts at that tip. Each prompt token is compared about twice (there, and against the trace
// in the proof); all other work is linear in the session's new tokens.
// Each path of the forest is a trace: at a node with several children (retries, n>1, parallel
// sub-agents, forks of the history), the child whose subtree holds the most recent completion
// continues the trace and every other child starts its own trace (origin 'branch'). So siblings are
// never merged, and every sampled token of an ok completion lands in exactly one trace with mask 1.
//
// Inside a trace, interstitial ids (prompt ids after the previous tip: tool results, user turns,
// template tokens, an EOS the template re-renders after a length-cut output, a newline after EOS) get
// mask 0 and logprob 0; sampled ids keep mask 1 and their logprobs. At each turn boundary the builder
// checks that the concatenation built so far equals that turn's engine promptIds (the proof); a
// failure splits the trace with a 'proof-failed' break instead of producing a wrong one.
//
// Breaks (recorded on the trace that ended, see TraceBreak):
//  - a later completion Y shares the trace's content beyond its first prompt but does not extend its
//    last tip: 'prompt-diverged' when they diverge inside the last turn's output / end of turn,
//    'compaction' when Y's prompt is shorter than the last turn's prompt, else 'rewritten-history'.
//    A Y that extends nothing, shares at least half of the trace's first prompt, is shorter than its content
//    and follows a trace of ≥ 2 turns is also 'compaction' (system prompt kept, history summarised).
//    Identical prompts are siblings, not breaks.
//  - the trace's last completion was followed only by an aborted / errored attempt: 'aborted' / 'error'.
//  - onPolicyChange 'split': 'policy-changed'. A failed proof: 'proof-failed'.
// Aborted and errored completions never contribute tokens; when the chain went on anyway they are
// listed in the trace's `skipped`, and when they extend no ok completion they are returned as `unplaced`.
import { applyReward, byTime, checkInput, groupBySession, toArray } from './common.js';
import { alignRerender, spanShift, type SpanMatch } from './rerender.js';
import { commonLength, TipTrie } from './tip-trie.js';
import type {
  BreakReason,
  BuildOptions,
  BuildResult,
  BuildStats,
  ProofTurn,
  SkippedCompletion,
  Trace,
  TraceOrigin,
  TrajectoryInput,
  UnplacedCompletion,
} from './types.js';

interface Node {
  c: TrajectoryInput;
  /** position in time order among all of the session's completions */
  order: number;
  tipLen: number;
  parent: number;
  children: number[];
  /** latest order in this node's subtree */
  latest: number;
  heavy: number;
  /** best-related earlier node (longest common prefix of this prompt with any earlier tip) */
  relNode: number;
  relLen: number;
  /** first earlier node with an identical prompt (-1 if none) */
  samePrompt: number;
  trace: number;
  /**
   * Set when this prompt continues its parent's tip only through a chat-mode re-render (rerender.ts): the
   * spans (parent output ↔ this prompt) and where in this prompt the parent's output ends.
   */
  rerender: { spans: SpanMatch[]; servedEnd: number } | null;
}

interface Building {
  index: number;
  trace: Trace;
  nodes: number[];
  startOrder: number;
  /**
   * The trace's content so far (promptIds ++ responseIds) for the proof checks; null while the trace has
   * only its first turn (the content is then that completion's own prompt ++ output).
   */
  buf: Int32Array | null;
  len: number;
}

export function buildPrefixMerge(records: Iterable<TrajectoryInput>, opts: BuildOptions = {}): BuildResult {
  const traces: Trace[] = [];
  const unplaced: UnplacedCompletion[] = [];
  const stats: Required<BuildStats> = { inputTokens: 0, tokenOps: 0, compareOps: 0, newTokens: 0, indexOps: 0 };
  for (const [sessionId, list] of groupBySession(records)) {
    const r = buildSession(sessionId, list, opts, stats);
    traces.push(...r.traces);
    unplaced.push(...r.unplaced);
  }
  applyReward(traces, opts.reward);
  return { traces, unplaced, stats };
}

/** How many of the latest nodes a prompt is checked against before walking the trie from its root. */
const RECENT = 4;

function buildSession(
  sessionId: string,
  input: TrajectoryInput[],
  opts: BuildOptions,
  stats: Required<BuildStats>,
): { traces: Trace[]; unplaced: UnplacedCompletion[] } {
  const all = [...input].sort(byTime);
  for (const c of all) {
    checkInput(c);
    stats.inputTokens += c.promptIds.length + c.outputIds.length;
  }

  // ---- retries: 'replace' drops an ok record that an ok retry with the same prompt replaced ----
  const replacedBy = new Map<string, string>();
  if (opts.retries === 'replace') {
    const byId = new Map(all.map((c) => [c.id, c]));
    for (const r of all) {
      if (r.status !== 'ok' || !r.retryOf) continue;
      const x = byId.get(r.retryOf);
      if (!x || x.status !== 'ok' || byTime(x, r) >= 0) continue;
      if (x.promptIds.length !== r.promptIds.length) continue;
      stats.tokenOps += x.promptIds.length;
      stats.compareOps += x.promptIds.length;
      if (commonLength(x.promptIds, 0, r.promptIds, 0, x.promptIds.length) < x.promptIds.length) continue;
      replacedBy.set(x.id, r.id);
    }
  }

  const unplaced: UnplacedCompletion[] = [];
  const nodes: Node[] = [];
  const failed: Array<{ c: TrajectoryInput; parent: number; order: number }> = [];
  const nodeById = new Map<string, number>();
  /** the tips of the ok nodes so far (see tip-trie.ts): parent, longest common prefix, identical prompts */
  const trie = new TipTrie();
  let direct = 0;
  /**
   * The usual case: q extends the tip of one of the last few nodes (the previous turn, or one of n>1
   * samples). Checked here against that completion's own arrays (output first: cheap to rule out
   * siblings), so the trie walk starts at its tip and compares only the tokens beyond it.
   */
  const recentTip = (q: ArrayLike<number>): number => {
    const before = direct;
    for (let j = nodes.length - 1; j >= 0 && j >= nodes.length - RECENT; j--) {
      if (direct - before > q.length) break; // failed tries cost at most about two prompt lengths
      const x = nodes[j];
      if (x.tipLen > q.length) continue;
      const p = x.c.promptIds;
      const o = x.c.outputIds;
      const k = commonLength(q, p.length, o, 0, o.length);
      direct += k + 1;
      if (k < o.length) continue;
      const kp = commonLength(q, 0, p, 0, p.length);
      direct += kp + 1;
      if (kp === p.length) return j;
    }
    return -1;
  };

  all.forEach((c, order) => {
    const q = c.promptIds;
    if (c.status !== 'ok') {
      trie.query(q, -1, recentTip(q));
      failed.push({ c, parent: trie.parent, order });
      return;
    }
    if (replacedBy.has(c.id)) return;

    const idx = nodes.length;
    trie.query(q, idx, recentTip(q));
    const parent = trie.parent;
    const node: Node = {
      c,
      order,
      tipLen: q.length + c.outputIds.length,
      parent,
      children: [],
      latest: order,
      heavy: -1,
      // longest common prefix with any earlier tip, and the latest node whose tip shares all of it
      relNode: trie.rel,
      relLen: trie.lcp,
      samePrompt: trie.same,
      trace: -1,
      rerender: null,
    };
    nodes.push(node);
    nodeById.set(c.id, idx);
    if (parent >= 0) nodes[parent].children.push(idx);
    trie.insert(idx, q, c.outputIds);
  });
  stats.tokenOps += direct + trie.compares + trie.hops + trie.stored;
  stats.compareOps += direct + trie.compares + trie.hops;
  stats.newTokens += trie.stored;
  stats.indexOps += trie.stored + trie.vertices;
  if (opts.tokenText) linkRerenders(nodes, opts.tokenText, stats);

  // ---- decomposition into paths: continue with the child whose subtree is most recent ----
  for (let i = nodes.length - 1; i >= 0; i--) {
    const n = nodes[i];
    for (const ch of n.children) {
      if (nodes[ch].latest > n.latest) n.latest = nodes[ch].latest;
      if (n.heavy < 0 || nodes[ch].latest > nodes[n.heavy].latest) n.heavy = ch;
    }
  }

  const built: Building[] = [];
  const startTrace = (start: number, origin: TraceOrigin): Building => {
    const n = nodes[start];
    const c = n.c;
    const b: Building = {
      index: built.length,
      trace: {
        id: `${sessionId}/pm/${c.id}`,
        sessionId,
        builder: 'prefix-merge',
        completionIds: [],
        promptIds: toArray(c.promptIds),
        responseIds: [],
        lossMask: [],
        responseLogprobs: [],
        reward: null,
        policyVersions: [],
        breaks: [],
        proof: { ok: true, turns: [] },
        origin,
        skipped: [],
        rerendered: [],
      },
      nodes: [],
      startOrder: n.order,
      buf: null,
      len: 0,
    };
    stats.tokenOps += c.promptIds.length;
    built.push(b);
    appendTurn(b, start, c.promptIds.length);
    return b;
  };
  /**
   * Appends turn ni: c.promptIds[from:] are interstitial (mask 0), then c's output (mask 1). `b.buf` holds
   * what the engine read (c's prompt in the engine's ids), which differs from the trace's content by the
   * re-rendered spans; `bufFrom` is where c's prompt stops equalling it.
   */
  const appendTurn = (b: Building, ni: number, from: number, bufFrom = from): void => {
    const t = b.trace;
    const c = nodes[ni].c;
    const tipLen = nodes[ni].tipLen;
    if (b.nodes.length > 0) {
      // a later turn: the engine's content so far equals c's prompt up to bufFrom (the proof just checked it)
      let buf = b.buf;
      if (buf === null || tipLen > buf.length) {
        const grown = new Int32Array(Math.max(64, 2 * tipLen));
        if (buf) grown.set(buf.subarray(0, b.len));
        else {
          const f = nodes[b.nodes[0]].c;
          grown.set(f.promptIds);
          grown.set(f.outputIds, f.promptIds.length);
        }
        b.buf = buf = grown;
      }
      const P = c.promptIds.length;
      for (let i = bufFrom; i < P; i++) buf[i] = c.promptIds[i];
      for (let j = 0; j < c.outputIds.length; j++) buf[P + j] = c.outputIds[j];
    }
    b.len = tipLen;
    for (let i = from; i < c.promptIds.length; i++) {
      t.responseIds.push(c.promptIds[i]);
      t.lossMask.push(0);
      t.responseLogprobs.push(0);
    }
    for (let j = 0; j < c.outputIds.length; j++) {
      t.responseIds.push(c.outputIds[j]);
      t.lossMask.push(1);
      t.responseLogprobs.push(c.outputLogprobs[j]);
    }
    stats.tokenOps += c.promptIds.length - Math.min(from, bufFrom) + c.outputIds.length;
    t.completionIds.push(c.id);
    t.policyVersions.push(c.policyVersion);
    const turn: ProofTurn = { completionId: c.id, promptLength: c.promptIds.length, outputLength: c.outputIds.length };
    if (t.rerendered.length > 0) {
      turn.rerendered = t.rerendered.length;
      turn.outputStart = c.promptIds.length - spanShift(t.rerendered);
    }
    t.proof.turns.push(turn);
    b.nodes.push(ni);
    nodes[ni].trace = b.index;
  };
  /** -1 when the content built so far is a prefix of q, else the first index where it is not. */
  const proofMismatch = (b: Building, q: ArrayLike<number>): number => {
    const len = b.len;
    const n = q.length < len ? q.length : len;
    let i: number;
    if (b.buf) {
      i = commonLength(b.buf, 0, q, 0, n);
    } else {
      const f = nodes[b.nodes[0]].c;
      const P = f.promptIds.length;
      i = commonLength(f.promptIds, 0, q, 0, q.length < P ? q.length : P);
      if (i === P) i += commonLength(f.outputIds, 0, q, P, n - P);
    }
    stats.tokenOps += len;
    stats.compareOps += i;
    if (i < n) return i;
    return len > q.length ? q.length : -1;
  };

  const walk = (start: number, origin: TraceOrigin): void => {
    let b = startTrace(start, origin);
    let prev = start;
    for (let ni = nodes[start].heavy; ni >= 0; prev = ni, ni = nodes[ni].heavy) {
      const c = nodes[ni].c;
      let reason: 'policy-changed' | 'proof-failed' | null = null;
      let at = 0;
      if (opts.onPolicyChange === 'split' && c.policyVersion !== nodes[prev].c.policyVersion) {
        reason = 'policy-changed';
        at = nodes[prev].tipLen;
      } else {
        const m = proofMismatch(b, c.promptIds);
        // a re-render continues the trace where the prompt leaves the engine's content at the first span
        const expected = nodes[ni].rerender?.spans[0].servedFrom ?? -1;
        if (m !== expected) {
          reason = 'proof-failed';
          at = m;
        }
      }
      if (reason) {
        const from = b;
        b = startTrace(ni, { kind: 'split', fromTraceId: from.trace.id, afterCompletionId: nodes[prev].c.id, reason });
        from.trace.breaks.push({ reason, atCompletionId: c.id, tokenIndex: at, continuedIn: b.trace.id });
        if (reason === 'proof-failed') from.trace.proof.ok = false;
        continue;
      }
      const rr = nodes[ni].rerender;
      if (rr) {
        addSpans(b.trace, nodes[prev].c, c, rr.spans);
        appendTurn(b, ni, rr.servedEnd, rr.spans[0].servedFrom);
      } else {
        appendTurn(b, ni, b.len);
      }
    }
  };

  // roots and non-heavy children start traces, in time order
  for (let i = 0; i < nodes.length; i++) {
    const n = nodes[i];
    if (n.trace >= 0) continue;
    if (n.parent < 0) {
      walk(i, { kind: 'root' });
    } else {
      const p = nodes[n.parent];
      walk(i, { kind: 'branch', fromTraceId: '', afterCompletionId: p.c.id, tokenIndex: p.tipLen });
    }
  }
  // fill in branch origins (the parent's trace exists now) and identical-prompt siblings
  const laterSame = new Map<number, number>();
  for (let i = 0; i < nodes.length; i++) {
    const s = nodes[i].samePrompt;
    if (s >= 0 && !laterSame.has(s)) laterSame.set(s, i);
  }
  for (const b of built) {
    const o = b.trace.origin;
    const start = b.nodes[0];
    if (o.kind === 'branch') o.fromTraceId = built[nodes[nodes[start].parent].trace].trace.id;
    if (o.kind !== 'split') {
      const sib = nodes[start].samePrompt >= 0 ? nodes[start].samePrompt : (laterSame.get(start) ?? -1);
      if (sib >= 0) o.samePromptAs = nodes[sib].c.id;
    }
  }

  // ---- breaks: later completions that did not continue a trace's last tip ----
  const events: Array<{ order: number; trace: number; skipped?: SkippedCompletion; brk?: Trace['breaks'][number] }> = [];
  const isLast = (ni: number): boolean => {
    const b = built[nodes[ni].trace];
    return b.nodes[b.nodes.length - 1] === ni;
  };
  for (const y of nodes) {
    if (y.relNode < 0) continue;
    const e = nodes[y.relNode];
    // y extends e's tip (a split trace) or lives in e's trace: no divergence
    if (y.relLen >= e.tipLen || e.trace === y.trace || !isLast(y.relNode) || y.order <= e.order) continue;
    const reason = classify(y, e, built[e.trace], nodes, y.parent < 0);
    if (reason) {
      events.push({
        order: y.order,
        trace: e.trace,
        brk: { reason, atCompletionId: y.c.id, tokenIndex: y.relLen, continuedIn: built[y.trace].trace.id },
      });
    }
  }
  for (const f of failed) {
    const reason = f.c.status === 'aborted' ? 'aborted' : f.c.status === 'incomplete' ? 'incomplete' : 'error';
    if (f.parent < 0) {
      unplaced.push({ completionId: f.c.id, reason });
      continue;
    }
    const p = nodes[f.parent];
    // the chain ended at p (a leaf) and a failed attempt was what tried to continue it
    if (isLast(f.parent) && p.latest === p.order) {
      events.push({ order: f.order, trace: p.trace, brk: { reason, atCompletionId: f.c.id, tokenIndex: p.tipLen } });
    } else {
      events.push({ order: f.order, trace: p.trace, skipped: { completionId: f.c.id, reason } });
    }
  }
  for (const [x, r] of replacedBy) {
    let survivor = r;
    while (replacedBy.has(survivor)) survivor = replacedBy.get(survivor)!;
    const ni = nodeById.get(survivor) ?? -1;
    if (ni >= 0) events.push({ order: -1, trace: nodes[ni].trace, skipped: { completionId: x, reason: 'retried', replacedBy: r } });
  }
  events.sort((a, b) => a.order - b.order);
  for (const ev of events) {
    const t = built[ev.trace].trace;
    if (ev.brk) t.breaks.push(ev.brk);
    if (ev.skipped) t.skipped.push(ev.skipped);
  }

  built.sort((a, b) => a.startOrder - b.startOrder);
  return { traces: built.map((b) => b.trace), unplaced };
}

/** Tokens at the end of a prompt that a re-render may tokenize differently (the assistant header's newline). */
const TURN_BOUNDARY_TOKENS = 2;

function classify(y: Node, e: Node, b: Building, nodes: Node[], yIsRoot: boolean): BreakReason | null {
  const d = y.relLen;
  const yLen = y.c.promptIds.length;
  const eLen = e.c.promptIds.length;
  if (yLen === d && eLen === d) return null; // identical prompts: siblings
  const first = nodes[b.nodes[0]].c.promptIds.length;
  // The next prompt parts at the very end of the last prompt: the turn boundary was re-tokenized (the
  // assistant header's newline merged with what the history put after it, e.g. once the reasoning was
  // dropped). A sibling with another question parts much earlier, in its own message.
  if (d < eLen && d >= eLen - TURN_BOUNDARY_TOKENS && yLen > eLen) return 'prompt-diverged';
  if (d >= first) {
    if (d >= eLen) return 'prompt-diverged';
    return yLen < eLen ? 'compaction' : 'rewritten-history';
  }
  // nothing earlier is a prefix of y, it keeps most of the first prompt (the system prompt) and is shorter
  if (yIsRoot && 2 * d >= first && b.nodes.length >= 2 && yLen < e.tipLen) return 'compaction';
  return null;
}

/**
 * Chat mode: a prompt that extends no earlier tip but leaves its closest one (e) inside e's output, and
 * re-renders the rest of that output with only whitespace changed, continues e (rerender.ts).
 */
function linkRerenders(nodes: Node[], tokenText: (id: number) => string, stats: Required<BuildStats>): void {
  for (const y of nodes) {
    if (y.parent >= 0 || y.relNode < 0) continue;
    const e = nodes[y.relNode];
    const eP = e.c.promptIds.length;
    const d = y.relLen;
    if (d < eP || d >= e.tipLen || y.order <= e.order) continue;
    const found = alignRerender(e.c.outputIds, d - eP, y.c.promptIds, d, tokenText);
    stats.tokenOps += e.tipLen - d;
    stats.compareOps += e.tipLen - d;
    if (!found || found.spans.length === 0) continue;
    y.rerender = found;
    y.parent = y.relNode;
    const idx = nodes.indexOf(y);
    const at = e.children.findIndex((ch) => ch > idx);
    if (at < 0) e.children.push(idx);
    else e.children.splice(at, 0, idx);
  }
}

/** Records the spans of e's output (already in the trace, the last turn) that c's prompt re-rendered. */
function addSpans(t: Trace, e: TrajectoryInput, c: TrajectoryInput, spans: readonly SpanMatch[]): void {
  const outputStart = e.promptIds.length - spanShift(t.rerendered);
  for (const s of spans) {
    t.rerendered.push({
      at: outputStart + s.sampledFrom,
      sampled: toArray(e.outputIds.subarray(s.sampledFrom, s.sampledTo)),
      served: toArray(c.promptIds.subarray(s.servedFrom, s.servedTo)),
      completionId: e.id,
      servedIn: c.id,
    });
  }
}

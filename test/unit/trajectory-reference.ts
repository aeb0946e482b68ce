// TEST ORACLE, not shipped: the original hash-map prefix-merge builder (before the tip trie, issue 4),
// kept verbatim so property tests can check that the fast builder produces identical traces, breaks,
// origins and unplaced lists. Quadratic-ish in practice (it hashes and maps every prefix of every tip);
// use it on small sessions only.
// prefix-merge builder (DESIGN §6).
//
// Model. The ok completions of a session form a forest: a completion's parent is the earlier ok
// completion whose tip (promptIds ++ outputIds) is the LONGEST exact prefix of its promptIds. Found
// with prefix hashes (a map from hashed tip to completions, confirmed by exact comparison), so the
// work is linear in the session's total tokens. Each path of the forest is a trace: at a node with
// several children (retries, n>1, parallel sub-agents, forks of the history), the child whose subtree
// holds the most recent completion continues the trace and every other child starts its own trace
// (origin 'branch'). So siblings are never merged, and every sampled token of an ok completion lands
// in exactly one trace with mask 1.
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
//    Identical prompts are siblings, not breaks. Y parting within the last 2 tokens of the last prompt
//    (the turn boundary re-tokenized, e.g. once the reasoning was dropped) and longer than it: 'prompt-diverged'.
//  - the trace's last completion was followed only by an aborted / errored attempt: 'aborted' / 'error'.
//  - onPolicyChange 'split': 'policy-changed'. A failed proof: 'proof-failed'.
// Aborted and errored completions never contribute tokens; when the chain went on anyway they are
// listed in the trace's `skipped`, and when they extend no ok completion they are returned as `unplaced`.
import { applyReward, byTime, checkInput, groupBySession } from '../../src-main/core/trajectory/common.js';
import type {
  BreakReason,
  BuildOptions,
  BuildResult,
  SkippedCompletion,
  Trace,
  TraceOrigin,
  TrajectoryInput,
  UnplacedCompletion,
} from '../../src-main/core/trajectory/types.js';

const P1 = 2147483647; // 2^31 - 1
const B1 = 1000003;
const P2 = 2147483629;
const B2 = 999983;
const LOW = 4194304; // 2^22: key = h1 * 2^22 + (h2 mod 2^22) < 2^53

class PrefixHasher {
  /** h1[i], h2[i] = hashes of tokens[0:i]; index 0 is the empty prefix. */
  readonly h1: Float64Array;
  readonly h2: Float64Array;
  length = 0;

  constructor(capacity: number) {
    this.h1 = new Float64Array(capacity + 1);
    this.h2 = new Float64Array(capacity + 1);
  }

  push(token: number): void {
    const t = (token >>> 0) % 2147483587;
    const i = this.length;
    this.h1[i + 1] = (this.h1[i] * B1 + t + 1) % P1;
    this.h2[i + 1] = (this.h2[i] * B2 + t + 1) % P2;
    this.length = i + 1;
  }

  pushAll(tokens: ArrayLike<number>): void {
    for (let i = 0; i < tokens.length; i++) this.push(tokens[i]);
  }

  /** Key of the prefix of length i (0 ≤ i ≤ length). */
  key(i: number): number {
    return this.h1[i] * LOW + (this.h2[i] % LOW);
  }
}


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
}

interface Building {
  index: number;
  trace: Trace;
  nodes: number[];
  startOrder: number;
}

export function buildPrefixMergeReference(records: Iterable<TrajectoryInput>, opts: BuildOptions = {}): BuildResult {
  const traces: Trace[] = [];
  const unplaced: UnplacedCompletion[] = [];
  const stats = { inputTokens: 0, tokenOps: 0 };
  for (const [sessionId, list] of groupBySession(records)) {
    const r = buildSession(sessionId, list, opts, stats);
    traces.push(...r.traces);
    unplaced.push(...r.unplaced);
  }
  applyReward(traces, opts.reward);
  return { traces, unplaced, stats };
}

function equalRange(a: ArrayLike<number>, b: ArrayLike<number>, n: number): boolean {
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false;
  return true;
}

function buildSession(
  sessionId: string,
  input: TrajectoryInput[],
  opts: BuildOptions,
  stats: { inputTokens: number; tokenOps: number },
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
      if (!equalRange(x.promptIds, r.promptIds, x.promptIds.length)) continue;
      replacedBy.set(x.id, r.id);
    }
  }

  const unplaced: UnplacedCompletion[] = [];
  const nodes: Node[] = [];
  const failed: Array<{ c: TrajectoryInput; parent: number; order: number }> = [];
  const nodeById = new Map<string, number>();
  /** hashed tip → nodes with that tip, latest first */
  const tipMap = new Map<number, number[]>();
  /** hashed prefix of any tip → latest node whose tip has it */
  const prefixMap = new Map<number, number>();
  /** hashed full prompt → nodes with that prompt */
  const promptMap = new Map<number, number[]>();

  const tipEquals = (n: Node, q: ArrayLike<number>): boolean => {
    const p = n.c.promptIds;
    const o = n.c.outputIds;
    stats.tokenOps += n.tipLen;
    if (!equalRange(p, q, p.length)) return false;
    for (let j = 0; j < o.length; j++) if (q[p.length + j] !== o[j]) return false;
    return true;
  };

  const findParent = (q: ArrayLike<number>, h: PrefixHasher): number => {
    for (let i = q.length; i >= 0; i--) {
      stats.tokenOps++;
      const cands = tipMap.get(h.key(i));
      if (!cands) continue;
      for (const ci of cands) if (nodes[ci].tipLen === i && tipEquals(nodes[ci], q)) return ci;
    }
    return -1;
  };

  all.forEach((c, order) => {
    const q = c.promptIds;
    const h = new PrefixHasher(q.length + c.outputIds.length);
    h.pushAll(q);
    stats.tokenOps += q.length;
    const parent = findParent(q, h);
    if (c.status !== 'ok') {
      failed.push({ c, parent, order });
      return;
    }
    if (replacedBy.has(c.id)) return;

    // longest common prefix with any earlier tip (hash-walk from the parent's tip)
    let d = parent >= 0 ? nodes[parent].tipLen : 0;
    while (d < q.length && prefixMap.has(h.key(d + 1))) {
      d++;
      stats.tokenOps++;
    }
    const relNode = d > 0 ? (prefixMap.get(h.key(d)) ?? -1) : -1;

    // identical prompt seen before?
    let samePrompt = -1;
    const pk = h.key(q.length);
    const same = promptMap.get(pk);
    if (same) {
      for (const si of same) {
        const sp = nodes[si].c.promptIds;
        stats.tokenOps += sp.length;
        if (sp.length === q.length && equalRange(sp, q, q.length)) {
          samePrompt = si;
          break;
        }
      }
    }

    const idx = nodes.length;
    const node: Node = {
      c,
      order,
      tipLen: q.length + c.outputIds.length,
      parent,
      children: [],
      latest: order,
      heavy: -1,
      relNode,
      relLen: d,
      samePrompt,
      trace: -1,
    };
    nodes.push(node);
    nodeById.set(c.id, idx);
    if (parent >= 0) nodes[parent].children.push(idx);
    if (same) same.push(idx);
    else promptMap.set(pk, [idx]);

    h.pushAll(c.outputIds);
    stats.tokenOps += c.outputIds.length;
    for (let i = 1; i <= node.tipLen; i++) prefixMap.set(h.key(i), idx);
    stats.tokenOps += node.tipLen;
    const tk = h.key(node.tipLen);
    const tips = tipMap.get(tk);
    if (tips) tips.unshift(idx);
    else tipMap.set(tk, [idx]);
  });

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
        promptIds: Array.from(c.promptIds),
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
    };
    stats.tokenOps += c.promptIds.length;
    built.push(b);
    appendTurn(b, start, c.promptIds.length);
    return b;
  };
  const appendTurn = (b: Building, ni: number, from: number): void => {
    const t = b.trace;
    const c = nodes[ni].c;
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
    stats.tokenOps += c.promptIds.length - from + c.outputIds.length;
    t.completionIds.push(c.id);
    t.policyVersions.push(c.policyVersion);
    t.proof.turns.push({ completionId: c.id, promptLength: c.promptIds.length, outputLength: c.outputIds.length });
    b.nodes.push(ni);
    nodes[ni].trace = b.index;
  };
  /** -1 when the content built so far is a prefix of q, else the first index where it is not. */
  const proofMismatch = (b: Building, q: ArrayLike<number>): number => {
    const t = b.trace;
    const P = t.promptIds.length;
    const len = P + t.responseIds.length;
    stats.tokenOps += len;
    for (let i = 0; i < len; i++) {
      if (i >= q.length) return i;
      if ((i < P ? t.promptIds[i] : t.responseIds[i - P]) !== q[i]) return i;
    }
    return -1;
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
        if (m >= 0) {
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
      appendTurn(b, ni, b.trace.promptIds.length + b.trace.responseIds.length);
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
    const reason = f.c.status === 'aborted' ? 'aborted' : 'error';
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

function classify(y: Node, e: Node, b: Building, nodes: Node[], yIsRoot: boolean): BreakReason | null {
  const d = y.relLen;
  const yLen = y.c.promptIds.length;
  const eLen = e.c.promptIds.length;
  if (yLen === d && eLen === d) return null; // identical prompts: siblings
  const first = nodes[b.nodes[0]].c.promptIds.length;
  if (d < eLen && d >= eLen - 2 && yLen > eLen) return 'prompt-diverged'; // re-tokenized turn boundary
  if (d >= first) {
    if (d >= eLen) return 'prompt-diverged';
    return yLen < eLen ? 'compaction' : 'rewritten-history';
  }
  // nothing earlier is a prefix of y, it keeps most of the first prompt (the system prompt) and is shorter
  if (yIsRoot && 2 * d >= first && b.nodes.length >= 2 && yLen < e.tipLen) return 'compaction';
  return null;
}

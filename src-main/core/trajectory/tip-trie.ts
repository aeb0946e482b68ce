// Compressed trie over the tips (promptIds ++ outputIds) of a session's ok completions, used by the
// prefix-merge builder to place each new prompt among the earlier tips. Exact: no hashing.
//
// Every token of a stored tip lives once in `tok` (an append-only Int32Array): an insert copies only the
// tokens beyond the longest prefix it shares with earlier tips (the session's *new* tokens), and each
// edge of the trie is a contiguous range of `tok`. Vertices sit at branch points, at prompt ends and at
// tip ends (at most three new vertices per insert; a split adds the upper vertex, so vertex ids stay
// valid). A query walks the prompt down with exact comparisons and reads off, in one pass:
//   parent   the latest completion whose tip is the longest exact prefix of the prompt (-1: none)
//   lcp      the longest common prefix of the prompt with any earlier tip
//   rel      the latest completion whose tip shares that whole prefix (-1 when lcp = 0)
//   same     the earliest completion with an identical prompt (-1: none)
// From the root, a query costs one comparison per matched prompt token plus one step per vertex passed
// (vertices on a path have strictly increasing depths: at most the prompt length). When the caller has
// checked that the prompt extends the tip of an inserted completion X (`query(q, mark, X)`: the usual
// sequential turn), the walk starts at X's tip vertex and compares only the tokens beyond it; the
// vertices above are handed to the new completion in O(1) through `succ` when X was the newest one.
const NONE = -1;
/** A vertex with more children than this gets a token → child map. */
const WIDE = 8;

export class TipTrie {
  private tok: Int32Array;
  private tokLen = 0;
  // vertex arrays (struct of arrays); vertex 0 is the root (depth 0)
  private depth: Int32Array;
  /** offset in `tok` of the first token of the edge into the vertex */
  private off: Int32Array;
  private par: Int32Array;
  private first: Int32Array;
  private next: Int32Array;
  private prev: Int32Array;
  private nChild: Int32Array;
  /**
   * latest completion whose tip ends at this vertex or below — after following `succ`: find(latest[v]).
   * succ[X] = Y records that Y's tip extends X's while X was the newest completion, so Y (and whatever
   * succ[Y] names, transitively) also passes every vertex X passes; that spares re-marking X's whole
   * path for every turn of a sequential chain.
   */
  private latest: Int32Array;
  private succ = new Int32Array(64).fill(NONE);
  /** latest completion whose tip ends exactly here */
  private tipLatest: Int32Array;
  /** earliest completion whose prompt ends exactly here */
  private promptFirst: Int32Array;
  private count = 0;
  /** tip vertex of each inserted completion (vertex ids are stable: a split adds the upper vertex) */
  private tipVertex = new Int32Array(64);
  private readonly wide = new Map<number, Map<number, number>>();

  // ---- work counters ----
  /** exact token comparisons */
  compares = 0;
  /** vertices walked through */
  hops = 0;
  /** tokens copied into the trie (tokens not shared with an earlier tip) */
  stored = 0;
  get vertices(): number {
    return this.count;
  }

  // ---- result of the last query ----
  parent = NONE;
  lcp = 0;
  rel = NONE;
  same = NONE;
  // where the last descent stopped: at vertex sv (depth sd) when sc < 0, else sk tokens into the edge
  // from sv to its child sc (depth sd = depth[sv] + sk)
  private sv = 0;
  private sc = NONE;
  private sk = 0;
  private sd = 0;
  private sParent = NONE;

  constructor(tokenCapacity = 1024, vertexCapacity = 64) {
    this.tok = new Int32Array(Math.max(16, tokenCapacity));
    const n = Math.max(4, vertexCapacity);
    this.depth = new Int32Array(n);
    this.off = new Int32Array(n);
    this.par = new Int32Array(n);
    this.first = new Int32Array(n);
    this.next = new Int32Array(n);
    this.prev = new Int32Array(n);
    this.nChild = new Int32Array(n);
    this.latest = new Int32Array(n);
    this.tipLatest = new Int32Array(n);
    this.promptFirst = new Int32Array(n);
    this.alloc(0, 0); // root
  }

  /**
   * Places prompt `q` among the tips inserted so far (sets parent, lcp, rel, same). Pass the index the
   * completion will be inserted under as `mark` when `insert` follows (with the same q), else -1.
   * `from`: an inserted completion whose tip the caller has checked to be a prefix of q (exactly), or -1.
   */
  query(q: ArrayLike<number>, mark: number, from = NONE): void {
    const lazy = mark >= 0 && from >= 0 && from === mark - 1;
    if (from >= 0) {
      const v = this.tipVertex[from];
      // the tip being inserted passes every vertex above X's tip. When X is the newest completion they
      // all name X, and succ[X] = mark (set below, once rel is read) hands them on; else mark them.
      if (mark >= 0 && !lazy) {
        for (let u = this.par[v]; u >= 0; u = this.par[u]) {
          this.latest[u] = mark;
          this.hops++;
        }
      }
      this.descend(v, this.depth[v], q, 0, mark);
    } else {
      this.descend(0, 0, q, 0, mark);
    }
    const d = this.sd;
    this.parent = this.sParent;
    this.lcp = d;
    this.rel = d > 0 ? this.find(this.latest[this.sc >= 0 ? this.sc : this.sv]) : NONE;
    this.same = d === q.length && this.sc < 0 ? this.promptFirst[this.sv] : NONE;
    if (lazy) this.succ[from] = mark;
  }

  /** Inserts completion `idx` with tip q ++ o. Must directly follow `query(q, idx)`. */
  insert(idx: number, q: ArrayLike<number>, o: ArrayLike<number>): void {
    if (idx >= this.tipVertex.length) {
      const n = Math.max(2 * this.tipVertex.length, idx + 1);
      const tv = new Int32Array(n);
      tv.set(this.tipVertex);
      this.tipVertex = tv;
      const sc = new Int32Array(n).fill(NONE);
      sc.set(this.succ);
      this.succ = sc;
    }
    const m = q.length;
    const T = m + o.length;
    let x = this.sd;
    let v = this.sc >= 0 ? this.split(this.sc, this.sk, x) : this.sv;
    this.latest[v] = idx;
    if (x < m) {
      // the prompt leaves the trie at depth x: a new leaf path q[x:m] (prompt end) ++ o (tip end)
      const start = this.append(q, x, m);
      this.append(o, 0, o.length);
      const pv = this.alloc(m, start);
      this.addChild(v, pv);
      this.latest[pv] = idx;
      this.promptFirst[pv] = idx;
      let tv = pv;
      if (T > m) {
        tv = this.alloc(T, start + (m - x));
        this.addChild(pv, tv);
        this.latest[tv] = idx;
      }
      this.tipLatest[tv] = idx;
      this.tipVertex[idx] = tv;
      return;
    }
    // the whole prompt is in the trie: v is its end; follow the output as far as it matches
    if (this.promptFirst[v] < 0) this.promptFirst[v] = idx;
    this.descend(v, m, o, m, idx);
    x = this.sd;
    v = this.sc >= 0 ? this.split(this.sc, this.sk, x) : this.sv;
    this.latest[v] = idx;
    if (x < T) {
      const tv = this.alloc(T, this.append(o, x - m, o.length));
      this.addChild(v, tv);
      this.latest[tv] = idx;
      v = tv;
    }
    this.tipLatest[v] = idx;
    this.tipVertex[idx] = v;
  }

  /**
   * Walks s (whose element i sits at depth base + i) down from vertex v at depth x while it matches.
   * Sets sv/sc/sk/sd and sParent (the latest tip ending at the deepest vertex reached, or at v).
   * Marks every vertex it leaves with `mark` (when ≥ 0): the tip being inserted passes below it.
   */
  private descend(v: number, x: number, s: ArrayLike<number>, base: number, mark: number): void {
    const end = base + s.length;
    const tok = this.tok;
    const depth = this.depth;
    const off = this.off;
    const tipLatest = this.tipLatest;
    let parent = tipLatest[v];
    let c = NONE;
    let k = 0;
    let cmp = 0;
    let hops = 0;
    while (x < end) {
      c = this.child(v, s[x - base]);
      if (c < 0) break;
      if (mark >= 0) this.latest[v] = mark;
      const len = depth[c] - x;
      const o = off[c];
      const j = x - base;
      const lim = end - x < len ? end - x : len;
      k = 1;
      while (k < lim && tok[o + k] === s[j + k]) k++;
      cmp += k;
      if (k < len) {
        x += k;
        break; // inside the edge into c: a mismatch, or s ended
      }
      x += len;
      v = c;
      c = NONE;
      hops++;
      const t = tipLatest[v];
      if (t >= 0) parent = t;
    }
    this.compares += cmp;
    this.hops += hops;
    this.sv = v;
    this.sc = c;
    this.sk = k;
    this.sd = x;
    this.sParent = parent;
  }

  /** The end of x's succ chain (with path compression). */
  private find(x: number): number {
    const succ = this.succ;
    let end = x;
    while (end >= 0 && succ[end] >= 0) {
      end = succ[end];
      this.hops++;
    }
    while (x >= 0 && succ[x] >= 0 && succ[x] !== end) {
      const nx = succ[x];
      succ[x] = end;
      x = nx;
    }
    return end;
  }

  private child(v: number, t: number): number {
    if (this.nChild[v] > WIDE) return this.wide.get(v)!.get(t) ?? NONE;
    const tok = this.tok;
    const off = this.off;
    const next = this.next;
    for (let c = this.first[v]; c >= 0; c = next[c]) if (tok[off[c]] === t) return c;
    return NONE;
  }

  private addChild(v: number, c: number): void {
    const f = this.first[v];
    this.par[c] = v;
    this.prev[c] = NONE;
    this.next[c] = f;
    if (f >= 0) this.prev[f] = c;
    this.first[v] = c;
    const n = ++this.nChild[v];
    if (n === WIDE + 1) {
      const map = new Map<number, number>();
      for (let x = this.first[v]; x >= 0; x = this.next[x]) map.set(this.tok[this.off[x]], x);
      this.wide.set(v, map);
    } else if (n > WIDE + 1) {
      this.wide.get(v)!.set(this.tok[this.off[c]], c);
    }
  }

  /**
   * Splits the edge into c after k tokens: a new vertex at depth d takes c's place among its parent's
   * children, with c (ids of existing vertices never change) as its only child. Returns the new vertex.
   */
  private split(c: number, k: number, d: number): number {
    const w = this.alloc(d, this.off[c]);
    const p = this.par[c];
    const before = this.prev[c];
    const after = this.next[c];
    this.par[w] = p;
    this.prev[w] = before;
    this.next[w] = after;
    if (before >= 0) this.next[before] = w;
    else this.first[p] = w;
    if (after >= 0) this.prev[after] = w;
    if (this.nChild[p] > WIDE) this.wide.get(p)!.set(this.tok[this.off[c]], w);
    this.first[w] = c;
    this.nChild[w] = 1;
    this.latest[w] = this.latest[c];
    this.par[c] = w;
    this.prev[c] = NONE;
    this.next[c] = NONE;
    this.off[c] += k;
    return w;
  }

  private alloc(depth: number, off: number): number {
    const v = this.count;
    if (v === this.depth.length) this.growVertices();
    this.count = v + 1;
    this.depth[v] = depth;
    this.off[v] = off;
    this.par[v] = NONE;
    this.first[v] = NONE;
    this.next[v] = NONE;
    this.prev[v] = NONE;
    this.nChild[v] = 0;
    this.latest[v] = NONE;
    this.tipLatest[v] = NONE;
    this.promptFirst[v] = NONE;
    return v;
  }

  private growVertices(): void {
    const grow = (a: Int32Array): Int32Array => {
      const b = new Int32Array(a.length * 2);
      b.set(a);
      return b;
    };
    this.depth = grow(this.depth);
    this.off = grow(this.off);
    this.par = grow(this.par);
    this.first = grow(this.first);
    this.next = grow(this.next);
    this.prev = grow(this.prev);
    this.nChild = grow(this.nChild);
    this.latest = grow(this.latest);
    this.tipLatest = grow(this.tipLatest);
    this.promptFirst = grow(this.promptFirst);
  }

  /** Copies s[from:to] to the end of `tok`; returns its offset. */
  private append(s: ArrayLike<number>, from: number, to: number): number {
    const start = this.tokLen;
    const n = to - from;
    if (start + n > this.tok.length) {
      const b = new Int32Array(Math.max(this.tok.length * 2, start + n));
      b.set(this.tok.subarray(0, start));
      this.tok = b;
    }
    const tok = this.tok;
    for (let i = 0; i < n; i++) tok[start + i] = s[from + i];
    this.tokLen = start + n;
    this.stored += n;
    return start;
  }
}

/**
 * Length of the common prefix of a[aFrom : aFrom+n] and b[bFrom : bFrom+n] (exact comparison). Long
 * Int32Array ranges with 8-byte aligned starts are compared two ids at a time (as 64-bit integers).
 */
export function commonLength(a: ArrayLike<number>, aFrom: number, b: ArrayLike<number>, bFrom: number, n: number): number {
  let k = 0;
  if (n >= 64 && a instanceof Int32Array && b instanceof Int32Array) {
    const ao = a.byteOffset + 4 * aFrom;
    const bo = b.byteOffset + 4 * bFrom;
    if ((ao & 7) === 0 && (bo & 7) === 0) {
      const w = n >> 1;
      const A = new BigInt64Array(a.buffer, ao, w);
      const B = new BigInt64Array(b.buffer, bo, w);
      while (k < w && A[k] === B[k]) k++;
      k <<= 1;
    }
  }
  while (k < n && a[aFrom + k] === b[bFrom + k]) k++;
  return k;
}

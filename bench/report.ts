// Readable table of a bench result (bench/results/*.json). `tsx bench/report.ts FILE` reprints one.
import { readFileSync } from 'node:fs';
import type { LoadResult } from './load.js';
import type { OverheadRow, ThroughputRow } from './run.js';

interface Report {
  meta: Record<string, any>;
  overhead?: OverheadRow[];
  throughput?: ThroughputRow[];
  capture?: Record<string, any>;
  memory?: Record<string, any>;
  builder?: Record<string, any>;
  storage?: Record<string, any>;
  prompt?: Record<string, any>;
  sandbox?: Record<string, any>;
  stores?: Record<string, any>;
  cluster?: Record<string, any>;
  export?: Record<string, any>;
}

const f = (n: number | null | undefined, d = 2) => (n === null || n === undefined || !Number.isFinite(n) ? '-' : n.toFixed(d));
const pad = (s: string, n: number) => (s.length >= n ? s : ' '.repeat(n - s.length) + s);
const padR = (s: string, n: number) => (s.length >= n ? s : s + ' '.repeat(n - s.length));
function table(head: string[], rows: string[][], first = 12): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  widths[0] = Math.max(widths[0]!, first);
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? padR(c, widths[i]!) : pad(c, widths[i]!))).join('  ');
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

/** Fewer than 95% of the offered rate completed, errors, or a median far above the few-ms service time. */
export function saturated(res: LoadResult, rate: number): boolean {
  return res.okPerSec < 0.95 * rate || res.errors > 0 || res.latency.p50 > 50;
}

export interface TargetCheck { target: string; value: string; pass: boolean | null; note?: string }

export function targets(r: Report): TargetCheck[] {
  const out: TargetCheck[] = [];
  const at500 = (r.overhead ?? []).filter((o) => o.rate === 500);
  const groups = new Map<string, OverheadRow[]>();
  for (const o of at500) { const k = `${o.dialect} ${o.stream ? 'stream' : 'json'}`; groups.set(k, [...(groups.get(k) ?? []), o]); }
  for (const [k, rows] of groups) {
    const a = rows.find((x) => x.target === 'engine')?.result;
    const b = rows.find((x) => x.target === 'proxy')?.result;
    const c = rows.find((x) => x.target === 'rollgate')?.result;
    if (!a || !b || !c) continue;
    const c50 = c.latency.p50 - a.latency.p50;
    const c99 = c.latency.p99 - a.latency.p99;
    const b50 = b.latency.p50 - a.latency.p50;
    // A saturated run measures queueing on the shared CPUs: the latency targets cannot be judged from it.
    const sat = [a, b, c].some((x) => saturated(x, 500));
    const judge = (ok: boolean) => (sat ? null : ok);
    const note = sat ? ' (saturated run: not judged)' : '';
    out.push({ target: `added p50 ≤ 0.5 ms @500/s (${k})`, value: `${f(c50)} ms${note}`, pass: judge(c50 <= 0.5) });
    out.push({ target: `added p99 ≤ 3 ms @500/s (${k})`, value: `${f(c99)} ms${note}`, pass: judge(c99 <= 3) });
    out.push({ target: `overhead ≤ 1.5× proxy's, p50 @500/s (${k})`, value: `${f(c50)} vs ${f(b50)} ms (${f(c50 / Math.max(b50, 1e-3), 1)}×)${note}`, pass: judge(c50 <= 1.5 * Math.max(b50, 0)) });
    const cpuB = rows.find((x) => x.target === 'proxy')?.cpuPerReqMs ?? null;
    const cpuC = rows.find((x) => x.target === 'rollgate')?.cpuPerReqMs ?? null;
    if (cpuB !== null && cpuC !== null) {
      // CPU per request is the contention-robust view of the same target: what each process spends, not waits.
      out.push({ target: `CPU/request ≤ 1.5× proxy's @500/s (${k})`, value: `${f(cpuC, 3)} vs ${f(cpuB, 3)} ms (${f(cpuC / cpuB, 1)}×)`, pass: cpuC <= 1.5 * cpuB, note: 'informative' });
    }
  }
  const rec = (r.throughput ?? []).filter((t) => t.target === 'rollgate' && t.recordedPerSec !== undefined);
  if (rec.length) {
    const best = rec.reduce((x, y) => ((y.recordedPerSec ?? 0) > (x.recordedPerSec ?? 0) ? y : x));
    out.push({ target: '≥ 2,000 recorded completions/s', value: `${f(best.recordedPerSec, 0)}/s (${best.engine} engine, ${best.dialect} ${best.stream ? 'stream' : 'json'})`, pass: (best.recordedPerSec ?? 0) >= 2000 });
  }
  if (r.builder) out.push({ target: 'builder cheaper than reading the ids', value: `${f(r.builder.buildMs, 0)} vs ${f(r.builder.readIdsMs, 0)} ms`, pass: r.builder.buildMs < r.builder.readIdsMs });
  if (r.storage) {
    const st = r.storage;
    out.push({ target: 'long session stored ≤ 1.5× its unique content', value: `${f(st.delta.overUnique, 2)}× (schema 5: ${f(st.schema5.overUnique, 1)}×)`, pass: st.delta.overUnique <= 1.5 });
    out.push({ target: 'delta writes not slower than schema 5', value: `${f(st.delta.tokensPerSec / 1e6, 1)} vs ${f(st.schema5.tokensPerSec / 1e6, 1)} M tokens/s`, pass: st.throughputRatio >= 1 });
  }
  if (r.prompt) {
    const w = r.prompt.workers;
    out.push({ target: 'token-mode prompts: event-loop delay p99 ≤ 20 ms at 8 × 128k-token sessions', value: `${f(w.loopDelayMs.p99, 1)} ms (main thread: ${f(r.prompt.mainThread.loopDelayMs.p99, 0)} ms)`, pass: w.loopDelayMs.p99 <= 20 });
  }
  if (r.sandbox?.bwrap?.added) out.push({ target: 'bwrap start p50 ≤ 15 ms added', value: `+${f(r.sandbox.bwrap.added.p50, 1)} ms (${f(r.sandbox.bwrap.p50, 1)} vs bare ${f(r.sandbox.bare.p50, 1)})`, pass: r.sandbox.bwrap.added.p50 <= 15 });
  if (r.sandbox?.docker?.p50 !== undefined) out.push({ target: 'docker start p50 ≤ 400 ms', value: `${f(r.sandbox.docker.p50, 0)} ms`, pass: r.sandbox.docker.p50 <= 400 });
  if (r.export) {
    const pts = (r.export.rssAt as Array<{ fraction: number; rssMB: number | null }>).filter((p) => p.rssMB !== null);
    const q = pts.find((p) => p.fraction === 0.25)?.rssMB ?? null;
    const last = pts.at(-1)?.rssMB ?? null;
    const flat = q !== null && last !== null ? last <= q * 1.25 + 20 : null;
    out.push({ target: 'export RSS flat as the output grows', value: `${f(q, 0)} MB @25% → ${f(last, 0)} MB @100% of ${f(r.export.bytes / 1e6, 0)} MB`, pass: flat });
  }
  return out;
}

export function printReport(r: Report): void {
  const p = (s = '') => console.log(s);
  const m = r.meta;
  p(`\nRollgate bench ${m.quick ? '(quick) ' : ''}— ${m.startedAt}, node ${m.node}, ${m.cpus} CPUs (${m.cpuModel}), load avg before ${m.loadAvgBefore?.map((x: number) => x.toFixed(1)).join(' ')}, after ${m.loadAvgAfter?.map((x: number) => x.toFixed(1)).join(' ')}`);
  p('All processes (engine, proxy, Rollgate, load generator) share these CPUs; latencies in ms, measured from the scheduled send time.');

  if (r.overhead?.length) {
    p('\n== Added latency at fixed offered rates (open loop) ==');
    p('(a) engine = sim directly, (b) proxy = bare undici pass-through, (c) rollgate = capture + SQLite. The Anthropic baselines send the engine the OpenAI chat request Rollgate makes.');
    const keys = [...new Set(r.overhead.map((o) => `${o.dialect}|${o.stream}`))];
    for (const k of keys) {
      const [dialect, stream] = k.split('|');
      const rows: string[][] = [];
      for (const o of r.overhead.filter((x) => `${x.dialect}|${x.stream}` === k)) {
        const a = r.overhead.find((x) => x.dialect === o.dialect && x.stream === o.stream && x.rate === o.rate && x.target === 'engine')!.result;
        const res: LoadResult = o.result;
        const added = o.target === 'engine' ? ['', ''] : [f(res.latency.p50 - a.latency.p50), f(res.latency.p99 - a.latency.p99)];
        // '*' = saturated: fewer than 95% of the offered rate completed, errors, or a median far above the
        // few-ms service time of these short requests — latency there is queueing, not overhead.
        const sat = saturated(res, o.rate) ? '*' : '';
        rows.push([
          `${o.rate}/s ${o.target}`, `${f(res.okPerSec, 0)}${sat}`, `${res.errors}`, f(res.latency.p50), f(res.latency.p99), ...added,
          res.ttft ? f(res.ttft.p50) : '', res.ttft ? f(res.ttft.p99) : '', f(o.cpuPerReqMs ?? null, 3), f(o.engineCpuPerReqMs, 3),
        ]);
      }
      p(`\n${dialect === 'openai' ? 'OpenAI chat' : 'Anthropic Messages'}, ${stream === 'true' ? 'streaming' : 'non-streaming'}`);
      p(table(['rate target', 'ok/s', 'err', 'p50', 'p99', '+p50', '+p99', 'ttft p50', 'ttft p99', 'cpu/req', 'engine cpu/req'], rows, 16));
      const ratios: string[] = [];
      for (const rate of [...new Set(r.overhead.map((o) => o.rate))]) {
        const g = (t: string) => r.overhead!.find((x) => `${x.dialect}|${x.stream}` === k && x.rate === rate && x.target === t)?.result;
        const a = g('engine'); const b = g('proxy'); const c = g('rollgate');
        if (!a || !b || !c) continue;
        const b50 = b.latency.p50 - a.latency.p50; const c50 = c.latency.p50 - a.latency.p50;
        const b99 = b.latency.p99 - a.latency.p99; const c99 = c.latency.p99 - a.latency.p99;
        const ratio = (x: number, y: number) => (y > 0.05 ? `${f(x / y, 1)}×` : 'n/a (proxy adds ~0)');
        const cpu = (t: string) => r.overhead!.find((x) => `${x.dialect}|${x.stream}` === k && x.rate === rate && x.target === t)?.cpuPerReqMs ?? null;
        ratios.push(`${rate}/s: rollgate/proxy added p50 ${ratio(c50, b50)}, p99 ${ratio(c99, b99)}; p50 vs engine ${f(c.latency.p50 / a.latency.p50, 2)}×; CPU/request rollgate ${f(cpu('rollgate'), 3)} ms vs proxy ${f(cpu('proxy'), 3)} ms`);
      }
      if (ratios.length) p(ratios.join('\n'));
      if (rows.some((x) => x[1]!.endsWith('*'))) p('* saturated (under 95% of the offered rate completed, errors, or p50 > 50 ms): latency there is queueing on the shared CPUs, not per-request overhead.');
    }
  }

  if (r.throughput?.length) {
    p('\n== Maximum sustained completions/s (closed loop) ==');
    p(table(['engine dialect mode target', 'ok/s', 'err', 'p50', 'p99', 'recorded/s', 'tokens/s stored', 'cpu/req', 'engine cpu/req'], r.throughput.map((t) => [
      `${t.engine} ${t.dialect} ${t.stream ? 'stream' : 'json'} ${t.target}`, f(t.result.okPerSec, 0), `${t.result.errors}`, f(t.result.latency.p50), f(t.result.latency.p99),
      t.recordedPerSec !== undefined ? f(t.recordedPerSec, 0) : '', t.recordedTokensPerSec !== undefined ? f(t.recordedTokensPerSec, 0) : '', f(t.cpuPerReqMs ?? null, 3), f(t.engineCpuPerReqMs, 3),
    ]), 30));
    p('cpu/req = CPU ms the serving process (proxy or Rollgate) spent per request; 1000 / cpu/req ≈ what one core of it could sustain alone.');
  }

  if (r.capture) {
    const c = r.capture;
    p('\n== Capture ==');
    p(`stored ${c.completions} ok completions, ${c.promptTokens + c.outputTokens} tokens (${c.promptTokens} prompt + ${c.outputTokens} output) in ${f(c.sqliteBytes / 1e6, 1)} MB`);
    p(`SQLite bytes per million tokens: ${f(c.bytesPerMillionTokens / 1e6, 1)} MB (${f(c.bytesPerCompletion / 1e3, 1)} kB per completion; this workload has ~${f(c.promptTokens / Math.max(1, c.completions), 0)}-token prompts, so JSON request/response copies dominate)`);
    p(`best persisted rate through Rollgate: ${f(c.bestRecordedPerSec, 0)} completions/s, ${f(c.bestRecordedTokensPerSec, 0)} prompt+output tokens/s (${c.bestAt})`);
    if (r.export?.generated) p(`store writer alone (export data set, 8k-token prompts): ${f(r.export.generated.tokensPerSec / 1e6, 1)} M tokens/s, ${f(r.export.generated.completionsPerSec, 0)} completions/s`);
  }

  if (r.memory) {
    const mm = r.memory;
    p('\n== Memory ==');
    p(`Rollgate RSS: idle ${f(mm.idleRssMB, 0)} MB, peak ${f(mm.peakRssMB, 0)} MB with ${mm.sessions} concurrent streaming sessions (engine saw up to ${mm.peakEngineRunning} running); ${f(mm.perSessionKB, 0)} kB per session; ${mm.ok} ok, ${mm.errors} errors`);
  }

  if (r.storage) {
    const st = r.storage;
    p('\n== Long-session storage ==');
    p(`${st.turns} turns to ${st.finalContextTokens} tokens; unique content ${f(st.uniqueBytes / 1e6, 2)} MB (ids × 4 + unique text)`);
    p(`delta storage: ${f(st.delta.bytesPerSession / 1e6, 2)} MB per session (${f(st.delta.overUnique, 2)}×), ${f(st.delta.tokensPerSec / 1e6, 1)} M tokens/s, ${f(st.delta.completionsPerSec, 0)} completions/s`);
    p(`schema 5 (full copies): ${f(st.schema5.bytesPerSession / 1e6, 2)} MB per session (${f(st.schema5.overUnique, 1)}×), ${f(st.schema5.tokensPerSec / 1e6, 1)} M tokens/s, ${f(st.schema5.completionsPerSec, 0)} completions/s`);
  }

  if (r.prompt) {
    const pr = r.prompt;
    p(`\n== Token-mode prompt build (${pr.workers.sessions} concurrent sessions, ~${pr.workers.meanPromptTokens} tokens) ==`);
    p(table(['where', 'first p50', 'first p99', 'reuse p50', 'reuse p99', 'loop p99', 'loop max'], [pr.mainThread, pr.workers].map((x: any) => [
      x.name, `${f(x.firstTurn.p50, 0)} ms`, `${f(x.firstTurn.p99, 0)} ms`, `${f(x.reuseTurn.p50, 0)} ms`, `${f(x.reuseTurn.p99, 0)} ms`, `${f(x.loopDelayMs.p99, 1)} ms`, `${f(x.loopDelayMs.max, 0)} ms`,
    ])));
  }

  if (r.stores) {
    const st = r.stores;
    p(`\n== Stores: SQLite vs Postgres (${st.sessions} concurrent sessions × ${st.turns} calls: seq, intent, completion; then an export) ==`);
    p(table(['store', 'completions/s', 'M tokens/s', 'transactions', 'export completions/s'], (['sqlite', 'postgres'] as const).map((k) => [
      k, f(st[k].completionsPerSec, 0), f(st[k].tokensPerSec / 1e6, 1), String(st[k].transactions), f(st[k].exportCompletionsPerSec, 0),
    ])));
    p(`Postgres / SQLite: writes ${f(st.writeRatio, 2)}×, export ${f(st.exportRatio, 2)}× (test server: loopback, fsync off)`);
  }

  if (r.cluster) {
    const c = r.cluster;
    p('\n== Cluster: the gateway on each store, one vs three nodes (all on this machine), failover after kill -9 ==');
    p(table(['store', 'nodes', 'recorded/s', 'ok/s', 'p50 latency', 'errors'], c.throughput.map((t: any) => [
      t.store, String(t.nodes), f(t.recordedPerSec, 0), f(t.okPerSec, 0), `${f(t.latencyP50Ms, 1)} ms`, String(t.errors),
    ])));
    p(`Postgres / SQLite ${f(c.ratios.postgresOverSqlite, 2)}×, 3 nodes / 1 node ${f(c.ratios.threeOverOneNode, 2)}× (${c.note})`);
    if (c.failover) {
      const fo = c.failover;
      p(`failover over ${fo.kills.length} kills (p50): declared dead ${f(fo.declaredDeadP50Ms, 0)} ms, samples back on the queue ${f(fo.requeuedP50Ms, 0)} ms (max ${f(fo.requeuedMaxMs, 0)}), running again elsewhere ${f(fo.rerunP50Ms, 0)} ms (max ${f(fo.rerunMaxMs, 0)})`);
    }
  }

  if (r.sandbox) {
    const sb = r.sandbox;
    p(`\n== Sandbox start (${sb.starts} starts each, /bin/true to its exit) ==`);
    for (const k of ['bare', 'bwrap', 'bwrap+forwarder', 'docker', 'docker+forwarder']) {
      const v = sb[k];
      if (!v) continue;
      p(v.skipped ? `${padR(k, 17)} skipped: ${v.skipped}` : `${padR(k, 17)} p50 ${pad(f(v.p50, 1), 7)} ms  p99 ${pad(f(v.p99, 1), 7)} ms${v.added ? `  (+${f(v.added.p50, 1)} ms p50 over bare)` : ''}`);
    }
  }

  if (r.builder) {
    const b = r.builder;
    p('\n== Trace builder ==');
    p(`${b.completions} completions, contexts growing to ${b.finalContextTokens} tokens (${(b.totalInputTokens / 1e6).toFixed(1)} M input tokens): buildTraces('prefix-merge') ${f(b.buildMs, 0)} ms vs reading the ids from SQLite ${f(b.readIdsMs, 0)} ms (full records ${f(b.readFullRecordsMs, 0)} ms): ${f(b.buildOverRead, 1)}×; ${b.traces} trace(s), proof ${b.proofOk ? 'ok' : 'FAILED'}`);
  }

  if (r.export) {
    const e = r.export;
    p('\n== Export (rollgate export --format train --builder prefix-merge) ==');
    p(`${f(e.bytes / 1e6, 0)} MB in ${f(e.seconds, 1)} s: ${f(e.mbPerSec, 1)} MB/s (${f(e.mbPerSecAfterFirstByte, 1)} MB/s after the first byte); peak RSS ${f(e.peakRssMB, 0)} MB`);
    p(`RSS as the output grows: ${(e.rssAt as Array<{ mb: number; rssMB: number | null }>).map((x) => `${f(x.mb, 0)} MB → ${f(x.rssMB, 0)} MB`).join(', ')}`);
  }

  const t = targets(r);
  if (t.length) {
    p('\n== Targets ==');
    p(table(['target', 'measured', 'result'], t.map((x) => [x.target, x.value, x.pass === null ? '?' : x.pass ? 'met' : 'MISSED']), 40));
  }
  p(`\n${m.quick ? 'Quick smoke run: numbers are indicative only. ' : ''}Run time ${f(m.seconds, 0)} s.`);
}

if (process.argv[1]?.endsWith('report.ts') && process.argv[2]) printReport(JSON.parse(readFileSync(process.argv[2], 'utf8')) as Report);

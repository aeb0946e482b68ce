// SGLang native POST /generate (0.5.x tokenizer_manager shapes): no chat template, raw output text,
// cumulative streaming events, logprob triples in meta_info.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { bodyOf, endsOnStopToken, hex, HttpError, resolveMaxTokens, SseWriter, stopList, streamSteps, withRun, type Body, type SimContext } from './http.js';
import { topAlternatives, tokenLogprob } from './logprobs.js';
import { sample, type Sampled } from './sample.js';

export interface SglangShared { weightVersion: string }

type Triple = [number | null, number, string | null];

interface Job { rid: string; promptIds: number[]; s: Sampled; maxNew: number }

function inputsOf(ctx: SimContext, body: Body): { ids: number[][]; batch: boolean } {
  const isIds = (v: unknown): v is number[] => Array.isArray(v) && v.every((x) => Number.isInteger(x));
  if (body.input_ids !== undefined) {
    if (isIds(body.input_ids) && body.input_ids.length) return { ids: [body.input_ids], batch: false };
    if (Array.isArray(body.input_ids) && body.input_ids.length && body.input_ids.every((x) => isIds(x) && x.length)) return { ids: body.input_ids as number[][], batch: true };
    throw new HttpError(400, 'input_ids must be a non-empty list of token ids (or a list of such lists)');
  }
  if (typeof body.text === 'string') return { ids: [ctx.tok.encode(body.text)], batch: false };
  if (Array.isArray(body.text) && body.text.every((t) => typeof t === 'string')) return { ids: (body.text as string[]).map((t) => ctx.tok.encode(t)), batch: true };
  throw new HttpError(400, 'Either text or input_ids should be provided.');
}

export function sglangContextError(L: number, P: number, M: number): string | null {
  if (P >= L) return `The input (${P} tokens) is longer than the model's context length (${L} tokens).`;
  if (P + M > L) {
    return `Requested token count exceeds the model's maximum context length of ${L} tokens. You requested a total of ${P + M} tokens: ${P} tokens from the input messages and ${M} tokens for the completion. Please reduce the number of tokens in the input messages or the completion to fit within the limit.`;
  }
  return null;
}

export async function sglangGenerate(ctx: SimContext, shared: SglangShared, req: FastifyRequest, reply: FastifyReply) {
  const body = bodyOf(req);
  const sp = (body.sampling_params ?? {}) as Body;
  const { ids, batch } = inputsOf(ctx, body);
  const maxNew = typeof sp.max_new_tokens === 'number' ? sp.max_new_tokens : 128;
  for (const p of ids) {
    const err = sglangContextError(ctx.maxModelLen, p.length, maxNew);
    if (err) throw new HttpError(400, err);
  }
  if (ctx.state.rollFailure()) throw new HttpError(500, 'Simulated engine failure', 'InternalServerError');
  ctx.state.noteDpRank(body.data_parallel_rank ?? body.routed_dp_rank ?? req.headers['x-data-parallel-rank']);
  const n = typeof sp.n === 'number' && sp.n > 1 ? Math.floor(sp.n) : 1;
  let jsonSchema: Record<string, unknown> | true | undefined;
  if (typeof sp.json_schema === 'string') {
    try {
      jsonSchema = JSON.parse(sp.json_schema) as Record<string, unknown>;
    } catch {
      jsonSchema = true;
    }
  }
  const rids = Array.isArray(body.rid) ? body.rid : undefined;
  const jobs: Job[] = [];
  ids.forEach((promptIds, pi) => {
    for (let j = 0; j < n; j++) {
      const rid = String(rids?.[pi * n + j] ?? (typeof body.rid === 'string' && ids.length * n === 1 ? body.rid : hex()));
      const s = sample(ctx.fmt, ctx.state.seed, ctx.state.knobs.skill, {
        nonCanonicalRate: ctx.state.knobs.nonCanonicalRate,
        promptIds, maxTokens: resolveMaxTokens(ctx, promptIds.length, maxNew), stop: stopList(sp.stop),
        variant: ctx.state.variant(sp.sampling_seed, j), jsonSchema,
      });
      jobs.push({ rid, promptIds, s, maxNew });
    }
  });
  const many = batch || jobs.length > 1;
  const started = Date.now();
  if (body.stream === true) return streamGenerate(ctx, shared, req, reply, body, jobs, many, started);
  return withRun(ctx, req, async (run) => {
    const longest = Math.max(0, ...jobs.map((j) => j.s.ids.length));
    for (let i = 0; i < Math.max(1, longest); i++) {
      await ctx.state.tick(run, i === 0);
      if (run.aborted || run.closed) break;
    }
    const outs = jobs.map((j) => {
      const count = run.aborted ? Math.floor(j.s.ids.length / 2) : j.s.ids.length;
      return result(ctx, shared, body, j, count, true, run.aborted, (Date.now() - started) / 1000);
    });
    account(ctx, jobs, outs.map((o) => (o.output_ids as number[]).length));
    return reply.send(many ? outs : outs[0]);
  });
}

function account(ctx: SimContext, jobs: Job[], completions: number[]) {
  ctx.state.stats.promptTokens += jobs.reduce((a, j) => a + j.promptIds.length, 0);
  ctx.state.stats.completionTokens += completions.reduce((a, b) => a + b, 0);
}

/** One {text, output_ids, meta_info} for the first `count` output tokens. */
function result(
  ctx: SimContext, shared: SglangShared, body: Body, job: Job, count: number, finished: boolean, aborted: boolean, e2e: number,
): Record<string, unknown> {
  const sp = (body.sampling_params ?? {}) as Body;
  const { promptIds, s } = job;
  const P = promptIds.length;
  const out = s.ids.slice(0, count);
  let text = ctx.tok.decode(out, { skipSpecialTokens: sp.skip_special_tokens !== false });
  if (finished && typeof s.matched === 'string' && sp.no_stop_trim !== true && text.endsWith(s.matched)) text = text.slice(0, -s.matched.length);
  const finish = !finished ? null
    : aborted ? { type: 'abort', message: 'Abort in waiting queue', status_code: null, err_type: null }
    : s.finish === 'length' ? { type: 'length', length: job.maxNew }
    : { type: 'stop', matched: s.matched };
  const meta: Record<string, unknown> = {
    id: job.rid, finish_reason: finish, prompt_tokens: P, weight_version: shared.weightVersion, total_retractions: 0,
  };
  if (body.return_logprob === true) {
    const seed = ctx.state.seed;
    const withText = body.return_text_in_logprobs === true;
    const all = [...promptIds, ...out];
    const startRaw = typeof body.logprob_start_len === 'number' ? body.logprob_start_len : -1;
    const start = startRaw < 0 ? Math.max(0, P - 1) : Math.min(startRaw, P);
    const triple = (i: number): Triple => [i === 0 ? null : tokenLogprob('sglang', all[i - 1], i, all[i], seed), all[i], withText ? ctx.tok.tokenText(all[i]) : null];
    const k = typeof body.top_logprobs_num === 'number' ? body.top_logprobs_num : 0;
    const tops = (i: number): Triple[] | null => (i === 0 ? null
      : topAlternatives('sglang', all[i - 1], i, all[i], seed, k).map((a): Triple => [a.logprob, a.id, withText ? ctx.tok.tokenText(a.id) : null]));
    const inputIdx = Array.from({ length: P - start }, (_, j) => start + j);
    const outIdx = Array.from({ length: out.length }, (_, j) => P + j);
    meta.input_token_logprobs = inputIdx.map(triple);
    meta.output_token_logprobs = outIdx.map(triple);
    if (k > 0) {
      meta.input_top_logprobs = inputIdx.map(tops);
      meta.output_top_logprobs = outIdx.map(tops);
    }
  }
  meta.completion_tokens = out.length;
  meta.cached_tokens = 0;
  if (finished) meta.e2e_latency = e2e;
  return { text, output_ids: out, meta_info: meta };
}

async function streamGenerate(
  ctx: SimContext, shared: SglangShared, req: FastifyRequest, reply: FastifyReply, body: Body, jobs: Job[], many: boolean, started: number,
) {
  return withRun(ctx, req, async (run) => {
    const sse = new SseWriter(reply);
    const per = jobs.map((j) => ({ j, steps: streamSteps(j.s.ids.length, endsOnStopToken(ctx, j.s)), sent: 0 }));
    const longest = Math.max(...per.map((x) => x.steps.length));
    const breakAt = ctx.state.rollMidStream(longest);
    for (let step = 0; step < longest; step++) {
      await ctx.state.tick(run, step === 0);
      if (run.closed) return sse.end();
      if (breakAt && step === breakAt.at) {
        if (breakAt.kind === 'drop') return sse.drop();
        sse.data({ error: { message: 'Simulated engine error mid-stream' } });
        return sse.done();
      }
      per.forEach((x, index) => {
        const ids = x.steps[step];
        if (!ids) return;
        const last = step === x.steps.length - 1 || run.aborted;
        x.sent = ids.length ? ids[ids.length - 1] + 1 : x.sent;
        const ev = result(ctx, shared, body, x.j, x.sent, last, run.aborted, (Date.now() - started) / 1000);
        sse.data(many ? { ...ev, index } : ev);
      });
      if (run.aborted) break;
    }
    account(ctx, jobs, per.map((x) => x.sent));
    sse.done();
  });
}


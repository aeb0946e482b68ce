// vLLM POST /v1/completions: text or token-id prompts, legacy logprobs, prompt_logprobs scoring, echo.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { vllmError } from './vllm-errors.js';
import {
  bodyOf, endsOnStopToken, hex, HttpError, jsonSchemaOf, nowSec, resolveMaxTokens, SseWriter, stopList, streamSteps, withRun,
  type Body, type SimContext,
} from './http.js';
import { topAlternatives, tokenLogprob } from './logprobs.js';
import { vllmPromptLogprobs } from './openai-logprobs.js';
import { createDetokenizer, sample, type Sampled } from './sample.js';

function promptsOf(ctx: SimContext, raw: unknown): number[][] {
  const isIds = (v: unknown): v is number[] => Array.isArray(v) && v.length > 0 && v.every((x) => Number.isInteger(x));
  if (typeof raw === 'string') return [ctx.tok.encode(raw)];
  if (isIds(raw)) return [raw];
  if (Array.isArray(raw) && raw.length > 0) {
    return raw.map((p) => {
      if (typeof p === 'string') return ctx.tok.encode(p);
      if (isIds(p)) return p;
      throw new HttpError(400, 'prompt must be a string, a list of token ids, or a list of either');
    });
  }
  throw new HttpError(400, 'prompt must be a string, a list of token ids, or a list of either');
}

interface Item { promptIds: number[]; promptText: string; s: Sampled; index: number }

export async function vllmCompletions(ctx: SimContext, req: FastifyRequest, reply: FastifyReply) {
  const body = bodyOf(req);
  if (body.model != null && body.model !== ctx.model) throw new HttpError(404, `The model \`${String(body.model)}\` does not exist.`, 'NotFoundError', 'model');
  if (body.stream_options != null && body.stream !== true) throw new HttpError(400, 'Stream options can only be defined when `stream=True`.');
  if (body.stream === true && typeof body.prompt_logprobs === 'number' && body.prompt_logprobs > 0) {
    throw new HttpError(400, '`prompt_logprobs` are not available when `stream=True`.');
  }
  const prompts = promptsOf(ctx, body.prompt);
  const n = typeof body.n === 'number' && body.n > 1 ? Math.floor(body.n) : 1;
  const requested = typeof body.max_tokens === 'number' ? body.max_tokens : 16;
  const L = ctx.maxModelLen;
  for (const ids of prompts) {
    if (ids.length + requested > L) {
      throw new HttpError(400, `This model's maximum context length is ${L} tokens. However, you requested ${ids.length + requested} tokens (${ids.length} in the messages, ${requested} in the completion). Please reduce the length of the messages or completion.`);
    }
  }
  if (ctx.state.rollFailure()) throw new HttpError(500, 'Simulated engine failure', 'InternalServerError');
  ctx.state.noteDpRank(req.headers['x-data-parallel-rank']);
  const items: Item[] = [];
  prompts.forEach((promptIds, pi) => {
    for (let j = 0; j < n; j++) {
      const s = sample(ctx.fmt, ctx.state.seed, ctx.state.knobs.skill, {
        nonCanonicalRate: ctx.state.knobs.nonCanonicalRate,
        promptIds, maxTokens: resolveMaxTokens(ctx, promptIds.length, requested), stop: stopList(body.stop),
        variant: ctx.state.variant(body.seed, j), jsonSchema: jsonSchemaOf(body),
      });
      items.push({ promptIds, promptText: s.promptText, s, index: pi * n + j });
    }
  });
  if (body.stream === true) return streamCompletions(ctx, req, reply, body, items);
  return withRun(ctx, req, async (run) => {
    const longest = Math.max(0, ...items.map((x) => x.s.ids.length));
    for (let i = 0; i < Math.max(1, longest); i++) {
      await ctx.state.tick(run, i === 0);
      if (run.aborted || run.closed) break;
    }
    return reply.send(completionResponse(ctx, body, items, run.aborted));
  });
}

function visibleText(ctx: SimContext, body: Body, s: Sampled): string {
  const text = ctx.tok.decode(s.ids, { skipSpecialTokens: body.skip_special_tokens !== false });
  return typeof s.matched === 'string' && text.endsWith(s.matched) ? text.slice(0, -s.matched.length) : text;
}

/** Legacy CompletionLogProbs over `ids` (positions from `from`), offsets counted from `offset0`. */
function legacyLogprobs(ctx: SimContext, all: number[], from: number, k: number, offset0: number) {
  const seed = ctx.state.seed;
  const out = { text_offset: [] as number[], token_logprobs: [] as Array<number | null>, tokens: [] as string[], top_logprobs: [] as Array<Record<string, number> | null> };
  let offset = offset0;
  for (let i = from; i < all.length; i++) {
    const text = ctx.tok.tokenText(all[i]);
    out.tokens.push(text);
    out.text_offset.push(offset);
    offset += text.length;
    if (i === 0) {
      out.token_logprobs.push(null);
      out.top_logprobs.push(null);
      continue;
    }
    out.token_logprobs.push(tokenLogprob('vllm', all[i - 1], i, all[i], seed));
    const top: Record<string, number> = {};
    for (const a of topAlternatives('vllm', all[i - 1], i, all[i], seed, Math.max(1, k))) {
      const t = ctx.tok.tokenText(a.id);
      if (!(t in top)) top[t] = a.logprob;
    }
    out.top_logprobs.push(top);
  }
  return out;
}

function completionResponse(ctx: SimContext, body: Body, items: Item[], aborted: boolean) {
  const wantIds = body.return_token_ids === true;
  const k = typeof body.logprobs === 'number' ? body.logprobs : null;
  const echo = body.echo === true;
  const lp = { tok: ctx.tok, flavor: 'vllm' as const, seed: ctx.state.seed };
  let promptTokens = 0;
  let completion = 0;
  const seenPrompt = new Set<number[]>();
  const choices = items.map(({ promptIds, promptText, s, index }) => {
    if (!seenPrompt.has(promptIds)) {
      seenPrompt.add(promptIds);
      promptTokens += promptIds.length;
    }
    completion += s.ids.length;
    const all = [...promptIds, ...s.ids];
    const text = visibleText(ctx, body, s);
    return {
      index,
      text: echo ? promptText + text : text,
      logprobs: k === null ? null : legacyLogprobs(ctx, all, echo ? 0 : promptIds.length, k, echo ? 0 : promptText.length),
      finish_reason: aborted ? 'abort' : s.finish,
      stop_reason: s.finish === 'stop' && s.matched !== ctx.tok.eosTokenId ? s.matched : null,
      token_ids: wantIds ? s.ids : null,
      prompt_logprobs: typeof body.prompt_logprobs === 'number' ? vllmPromptLogprobs(lp, promptIds, body.prompt_logprobs) : null,
      prompt_token_ids: wantIds ? promptIds : null,
    };
  });
  ctx.state.stats.promptTokens += promptTokens;
  ctx.state.stats.completionTokens += completion;
  return {
    id: `cmpl-${hex()}`, object: 'text_completion', created: nowSec(), model: ctx.model, choices,
    service_tier: null, system_fingerprint: null,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens + completion, completion_tokens: completion, prompt_tokens_details: null },
    kv_transfer_params: null,
  };
}

async function streamCompletions(ctx: SimContext, req: FastifyRequest, reply: FastifyReply, body: Body, items: Item[]) {
  const head = { id: `cmpl-${hex()}`, object: 'text_completion', created: nowSec(), model: ctx.model };
  const wantIds = body.return_token_ids === true;
  const k = typeof body.logprobs === 'number' ? body.logprobs : null;
  const so = body.stream_options as { include_usage?: boolean } | undefined;
  const includeUsage = so != null && so.include_usage !== false;
  const eos = ctx.tok.eosTokenId;
  return withRun(ctx, req, async (run) => {
    const sse = new SseWriter(reply);
    const per = items.map((x) => ({
      ...x,
      steps: streamSteps(x.s.ids.length, endsOnStopToken(ctx, x.s)),
      detok: createDetokenizer(ctx.tok, body.skip_special_tokens !== false, typeof x.s.matched === 'string' ? x.s.matched : undefined),
      offset: x.promptText.length,
    }));
    const longest = Math.max(...per.map((x) => x.steps.length));
    const breakAt = ctx.state.rollMidStream(longest);
    let sent = 0;
    for (let step = 0; step < longest; step++) {
      await ctx.state.tick(run, step === 0);
      if (run.closed) return sse.end();
      if (breakAt && step === breakAt.at) {
        if (breakAt.kind === 'drop') return sse.drop();
        sse.data(vllmError(500, 'Simulated engine error mid-stream', 'InternalServerError'));
        return sse.done();
      }
      for (const x of per) {
        const ids = x.steps[step];
        if (!ids) continue;
        const isLast = step === x.steps.length - 1 || run.aborted;
        let text = step === 0 && body.echo === true ? x.promptText : '';
        for (const t of ids) text += x.detok.push(x.s.ids[t], isLast && t === ids[ids.length - 1]);
        const all = [...x.promptIds, ...x.s.ids];
        const P = x.promptIds.length;
        let logprobs = null;
        if (k !== null && ids.length) {
          logprobs = legacyLogprobs(ctx, all.slice(0, P + ids[ids.length - 1] + 1), P + ids[0], k, x.offset);
          x.offset = logprobs.text_offset.length ? logprobs.text_offset[logprobs.text_offset.length - 1] + logprobs.tokens[logprobs.tokens.length - 1].length : x.offset;
        }
        sent += ids.length;
        sse.data({
          ...head,
          choices: [{
            index: x.index, text, logprobs,
            finish_reason: run.aborted ? 'abort' : isLast ? x.s.finish : null,
            stop_reason: isLast && x.s.finish === 'stop' && x.s.matched !== eos ? x.s.matched : null,
            prompt_token_ids: wantIds && step === 0 ? x.promptIds : null,
            token_ids: wantIds ? ids.map((t) => x.s.ids[t]) : null,
          }],
          usage: null,
        });
      }
      if (run.aborted) break;
    }
    const promptTokens = [...new Set(items.map((x) => x.promptIds))].reduce((a, p) => a + p.length, 0);
    const completion = run.aborted ? sent : items.reduce((a, x) => a + x.s.ids.length, 0);
    ctx.state.stats.promptTokens += promptTokens;
    ctx.state.stats.completionTokens += completion;
    if (includeUsage) sse.data({ ...head, choices: [], usage: { prompt_tokens: promptTokens, total_tokens: promptTokens + completion, completion_tokens: completion } });
    sse.done();
  });
}

// SGLang 0.5.x POST /v1/chat/completions: no token ids anywhere, bare-hex id, matched_stop,
// reasoning_content, all-keys-with-nulls streaming, a separate finish chunk, flat errors.
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Qwen3ParseResult } from '../../core/families/qwen3/output-parser.js';
import type { CanonicalDelta } from '../../core/types.js';
import type { FunctionTool } from '../../core/types.js';
import {
  bodyOf, endsOnStopToken, hex, HttpError, jsonSchemaOf, nowSec, parserText, parserTextStream, resolveMaxTokens, SseWriter, stopList, streamSteps, withRun,
  type Body, type SimContext,
} from './http.js';
import { chatLogprobEntry } from './openai-logprobs.js';
import { sample, type Sampled } from './sample.js';
import { sglangContextError, type SglangShared } from './sglang-generate.js';
import { prepareChat } from './vllm-chat.js';

export function sglangFlatError(status: number, message: string, type = 'BadRequestError') {
  return { object: 'error', message, type, param: null, code: status };
}

const callId = () => `call_${hex(12)}`;

function collect(deltas: CanonicalDelta[]): Qwen3ParseResult & { calls: unknown[] } {
  let reasoning = '';
  let content = '';
  const calls: unknown[] = [];
  for (const d of deltas) {
    if (d.kind === 'reasoning') reasoning += d.text;
    else if (d.kind === 'content') content += d.text;
    else calls.push({ id: d.id, index: d.index, type: 'function', function: { name: d.name, arguments: d.arguments } });
  }
  return { reasoning: reasoning || null, content: content || null, toolCalls: [], calls };
}

/** Tokens from `<think>` through `</think>` (SGLang's usage.reasoning_tokens; 0 for formats without them). */
function reasoningTokens(ctx: SimContext, ids: number[], thinkingOpen: boolean): number {
  const endId = ctx.tok.singleTokenId('</think>');
  const end = endId === undefined ? -1 : ids.indexOf(endId);
  if (end >= 0) return end + 1;
  return thinkingOpen || (ids.length > 0 && ids[0] === ctx.tok.singleTokenId('<think>')) ? ids.length : 0;
}

export async function sglangChat(ctx: SimContext, shared: SglangShared, req: FastifyRequest, reply: FastifyReply) {
  const body = bodyOf(req);
  const maxKey = body.max_completion_tokens ?? body.max_tokens;
  let p;
  try {
    p = prepareChat(ctx, body, undefined);
  } catch (e) {
    if (e instanceof HttpError && e.status === 400 && /maximum context length/.test(e.message)) throw new HttpError(400, sglangContextError(ctx.maxModelLen, ctx.maxModelLen, 0)!);
    throw e;
  }
  const ctxErr = sglangContextError(ctx.maxModelLen, p.promptIds.length, typeof maxKey === 'number' ? maxKey : 0);
  if (ctxErr) throw new HttpError(400, ctxErr);
  if (ctx.state.rollFailure()) throw new HttpError(500, 'Simulated engine failure', 'InternalServerError');
  ctx.state.noteDpRank(body.data_parallel_rank ?? body.routed_dp_rank ?? req.headers['x-data-parallel-rank']);
  const n = typeof body.n === 'number' && body.n > 1 ? Math.floor(body.n) : 1;
  const samples = Array.from({ length: n }, (_, i) => sample(ctx.fmt, ctx.state.seed, ctx.state.knobs.skill, {
        nonCanonicalRate: ctx.state.knobs.nonCanonicalRate,
    promptIds: p.promptIds, maxTokens: resolveMaxTokens(ctx, p.promptIds.length, maxKey), stop: stopList(body.stop),
    variant: ctx.state.variant(body.seed, i), jsonSchema: jsonSchemaOf(body), toolChoice: body.tool_choice,
  }));
  const opts = {
    body,
    promptIds: p.promptIds,
    promptText: p.promptText,
    thinkingOpen: p.promptText.lastIndexOf('<think>') > p.promptText.lastIndexOf('</think>'),
    tools: p.tools,
    parseTools: Array.isArray(body.tools) && body.tools.length > 0 && body.tool_choice !== 'none',
    separate: body.separate_reasoning !== false,
    model: typeof body.model === 'string' ? body.model : 'default',
  };
  if (body.stream === true) return streamChat(ctx, shared, req, reply, opts, samples);
  return withRun(ctx, req, async (run) => {
    const longest = Math.max(0, ...samples.map((s) => s.ids.length));
    for (let i = 0; i < Math.max(1, longest); i++) {
      await ctx.state.tick(run, i === 0);
      if (run.aborted || run.closed) break;
    }
    return reply.send(chatResponse(ctx, shared, opts, samples, run.aborted));
  });
}

type Opts = {
  body: Body; promptIds: number[]; promptText: string; thinkingOpen: boolean; tools?: FunctionTool[]; parseTools: boolean; separate: boolean; model: string;
};

function parserFor(ctx: SimContext, o: Opts) {
  return ctx.fmt.family.createParser({ promptTail: o.promptText, tools: o.tools, parseReasoning: o.separate, parseToolCalls: o.parseTools, newToolCallId: callId });
}

function finishOf(s: Sampled, hasTools: boolean, aborted: boolean): { finish_reason: string; matched_stop: number | string | null } {
  if (aborted) return { finish_reason: 'abort', matched_stop: null };
  if (hasTools) return { finish_reason: 'tool_calls', matched_stop: null };
  return s.finish === 'length' ? { finish_reason: 'length', matched_stop: null } : { finish_reason: 'stop', matched_stop: s.matched };
}

function chatResponse(ctx: SimContext, shared: SglangShared, o: Opts, samples: Sampled[], aborted: boolean) {
  const lp = { tok: ctx.tok, flavor: 'sglang' as const, seed: ctx.state.seed };
  const P = o.promptIds.length;
  const topK = typeof o.body.top_logprobs === 'number' ? o.body.top_logprobs : 0;
  let completion = 0;
  let reasoningTok = 0;
  const choices = samples.map((s0, index) => {
    const s = aborted ? { ...s0, ids: s0.ids.slice(0, Math.floor(s0.ids.length / 2)) } : s0;
    completion += s.ids.length;
    reasoningTok += reasoningTokens(ctx, s.ids, o.thinkingOpen);
    const parser = parserFor(ctx, o);
    const r = collect([...parser.push(parserText(ctx, s.ids, aborted ? null : s.matched)), ...parser.end()]);
    return {
      index,
      message: { role: 'assistant', content: r.content, reasoning_content: r.reasoning, tool_calls: r.calls.length ? r.calls : null },
      logprobs: o.body.logprobs === true
        ? { content: s.ids.map((id, i) => chatLogprobEntry(lp, i === 0 ? o.promptIds[P - 1] : s.ids[i - 1], P + i, id, topK)) }
        : null,
      ...finishOf(s, r.calls.length > 0, aborted),
    };
  });
  ctx.state.stats.promptTokens += P;
  ctx.state.stats.completionTokens += completion;
  return {
    id: hex(), object: 'chat.completion', created: nowSec(), model: o.model, choices,
    usage: { prompt_tokens: P, total_tokens: P + completion, completion_tokens: completion, prompt_tokens_details: null, reasoning_tokens: reasoningTok },
    metadata: { weight_version: shared.weightVersion },
  };
}

async function streamChat(ctx: SimContext, shared: SglangShared, req: FastifyRequest, reply: FastifyReply, o: Opts, samples: Sampled[]) {
  const head = { id: hex(), object: 'chat.completion.chunk', created: nowSec(), model: o.model };
  const lp = { tok: ctx.tok, flavor: 'sglang' as const, seed: ctx.state.seed };
  const P = o.promptIds.length;
  const topK = typeof o.body.top_logprobs === 'number' ? o.body.top_logprobs : 0;
  const wantLp = o.body.logprobs === true;
  const includeUsage = (o.body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
  const nullDelta = { role: null, content: null, reasoning_content: null, tool_calls: null };
  const chunk = (index: number, delta: object, logprobs: unknown, finish: { finish_reason: string | null; matched_stop: unknown } = { finish_reason: null, matched_stop: null }) =>
    ({ ...head, choices: [{ index, delta: { ...nullDelta, ...delta }, logprobs, ...finish }], usage: null });

  return withRun(ctx, req, async (run) => {
    const sse = new SseWriter(reply);
    const per = samples.map((s) => ({
      s,
      steps: streamSteps(s.ids.length, endsOnStopToken(ctx, s)),
      text: parserTextStream(ctx, s),
      parser: parserFor(ctx, o),
      pendingLp: [] as unknown[],
      sawTool: false,
      sent: 0,
    }));
    per.forEach((_, index) => sse.data(chunk(index, { role: 'assistant', content: '' }, null)));
    const longest = Math.max(...per.map((x) => x.steps.length));
    const breakAt = ctx.state.rollMidStream(longest);
    for (let step = 0; step < longest; step++) {
      await ctx.state.tick(run, step === 0);
      if (run.closed) return sse.end();
      if (run.aborted) break;
      if (breakAt && step === breakAt.at) {
        if (breakAt.kind === 'drop') return sse.drop();
        sse.data({ error: sglangFlatError(500, 'Simulated engine error mid-stream', 'InternalServerError') });
        return sse.done();
      }
      per.forEach((x, index) => {
        const ids = x.steps[step];
        if (!ids) return;
        const isLast = step === x.steps.length - 1;
        const text = ids.length ? x.text.upTo(ids[ids.length - 1] + 1, isLast) : '';
        x.sent += ids.length;
        if (wantLp) for (const t of ids) x.pendingLp.push(chatLogprobEntry(lp, t === 0 ? o.promptIds[P - 1] : x.s.ids[t - 1], P + t, x.s.ids[t], topK));
        for (const d of [...x.parser.push(text), ...(isLast ? x.parser.end() : [])]) {
          if (d.kind === 'content') {
            sse.data(chunk(index, { content: d.text }, wantLp ? { content: x.pendingLp } : null));
            x.pendingLp = [];
          } else if (d.kind === 'reasoning') {
            sse.data(chunk(index, { reasoning_content: d.text }, null));
          } else {
            x.sawTool = true;
            sse.data(chunk(index, { tool_calls: [{ id: d.id, index: d.index, type: 'function', function: { name: d.name, arguments: d.arguments } }] }, null));
          }
        }
      });
    }
    per.forEach((x, index) => sse.data(chunk(index, {}, null, finishOf(x.s, x.sawTool, run.aborted))));
    const completion = per.reduce((a, x) => a + x.sent, 0);
    const reasoningTok = per.reduce((a, x) => a + reasoningTokens(ctx, x.s.ids.slice(0, x.sent), o.thinkingOpen), 0);
    ctx.state.stats.promptTokens += P;
    ctx.state.stats.completionTokens += completion;
    if (includeUsage) {
      sse.data({ ...head, choices: [], usage: { prompt_tokens: P, total_tokens: P + completion, completion_tokens: completion, prompt_tokens_details: null, reasoning_tokens: reasoningTok } });
    }
    sse.done();
  });
}

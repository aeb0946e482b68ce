// vLLM POST /v1/chat/completions (v0.11.x wire shape; see shared/reference/engines §1.2–1.3).
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { CanonicalDelta, ChatMessage, FunctionTool } from '../../core/types.js';
import { vllmError } from './vllm-errors.js';
import {
  bodyOf, endsOnStopToken, hex, HttpError, jsonSchemaOf, nowSec, parserText, parserTextStream, resolveMaxTokens, SseWriter, stopList, streamSteps, withRun,
  type Body, type SimContext,
} from './http.js';
import { chatLogprobEntry, vllmPromptLogprobs } from './openai-logprobs.js';
import { sample, type Sampled } from './sample.js';

export type ReasoningField = 'reasoning_content' | 'reasoning' | 'both';

export interface VllmOptions { reasoningField: ReasoningField }

interface Prepared {
  body: Body;
  tools?: FunctionTool[];
  promptIds: number[];
  promptText: string;
  maxTokens: number;
  n: number;
  parseTools: boolean;
}

export function toChatMessages(raw: unknown): ChatMessage[] {
  if (!Array.isArray(raw) || raw.length === 0) throw new HttpError(400, 'messages must be a non-empty list');
  return raw.map((m) => {
    const msg = { ...(m as Record<string, unknown>) } as Record<string, unknown>;
    if (msg.reasoning == null && msg.reasoning_content != null) msg.reasoning = msg.reasoning_content;
    if (msg.content === undefined) msg.content = null;
    return msg as unknown as ChatMessage;
  });
}

/** Renders the chat prompt like vLLM's chat preprocessing and checks the context length. */
export function prepareChat(ctx: SimContext, body: Body, maxKey: unknown): Omit<Prepared, 'body' | 'n' | 'parseTools'> & { tools?: FunctionTool[] } {
  const messages = toChatMessages(body.messages);
  const tools = Array.isArray(body.tools) ? (body.tools as FunctionTool[]) : undefined;
  const cont = body.continue_final_message === true;
  let promptText: string;
  try {
    const kwargs = (body.chat_template_kwargs ?? undefined) as Record<string, unknown> | undefined;
    promptText = ctx.fmt.render({ tools, chat_template_kwargs: kwargs }, messages, cont ? false : body.add_generation_prompt !== false);
  } catch (e) {
    throw new HttpError(400, `chat template error: ${(e as Error).message}`);
  }
  if (cont) promptText = promptText.replace(/<\|im_end\|>\n$/, '');
  const promptIds = ctx.tok.encode(promptText);
  const P = promptIds.length;
  const L = ctx.maxModelLen;
  if (P >= L) throw new HttpError(400, `This model's maximum context length is ${L} tokens. However, your request has ${P} input tokens. Please reduce the length of the input messages.`);
  if (typeof maxKey === 'number' && P + maxKey > L) {
    throw new HttpError(400, `This model's maximum context length is ${L} tokens. However, you requested ${P + maxKey} tokens (${P} in the messages, ${maxKey} in the completion). Please reduce the length of the messages or completion.`);
  }
  return { promptIds, promptText, maxTokens: resolveMaxTokens(ctx, P, maxKey), tools };
}

/** The served family's parser, as vLLM runs its reasoning + tool parsers on chat output. */
function chatParser(ctx: SimContext, p: Prepared) {
  return ctx.fmt.family.createParser({ promptTail: p.promptText, tools: p.tools, parseToolCalls: p.parseTools, newToolCallId: () => `chatcmpl-tool-${hex()}` });
}

function validate(body: Body): void {
  if (body.top_logprobs != null && body.top_logprobs !== 0 && body.logprobs !== true) {
    throw new HttpError(400, 'when using `top_logprobs`, `logprobs` must be set to true.', 'BadRequestError', 'top_logprobs');
  }
  if (body.stream_options != null && body.stream !== true) throw new HttpError(400, 'Stream options can only be defined when `stream=True`.');
  if (body.stream === true && typeof body.prompt_logprobs === 'number' && body.prompt_logprobs > 0) {
    throw new HttpError(400, '`prompt_logprobs` are not available when `stream=True`.');
  }
}

/** vLLM names the stop token or string that ended a sample, but not the EOS. */
export function stopReason(s: Sampled, eos: number): number | string | null {
  return s.finish === 'stop' && s.matched !== eos ? s.matched : null;
}

function reasoningKeys(field: ReasoningField, text: string | null): Record<string, string | null> {
  if (field === 'reasoning') return { reasoning: text };
  if (field === 'reasoning_content') return { reasoning_content: text };
  return { reasoning: text, reasoning_content: text };
}

function deltaObject(deltas: CanonicalDelta[], field: ReasoningField): Record<string, unknown> {
  const d: Record<string, unknown> = {};
  let content = '';
  let reasoning = '';
  const calls: unknown[] = [];
  for (const x of deltas) {
    if (x.kind === 'content') content += x.text;
    else if (x.kind === 'reasoning') reasoning += x.text;
    else calls.push({ index: x.index, id: x.id, type: 'function', function: { name: x.name, arguments: x.arguments } });
  }
  if (reasoning) Object.assign(d, reasoningKeys(field, reasoning));
  if (content) d.content = content;
  if (calls.length) d.tool_calls = calls;
  return d;
}

export async function vllmChat(ctx: SimContext, opts: VllmOptions, req: FastifyRequest, reply: FastifyReply) {
  const body = bodyOf(req);
  validate(body);
  if (body.model != null && body.model !== ctx.model) throw new HttpError(404, `The model \`${String(body.model)}\` does not exist.`, 'NotFoundError', 'model');
  const maxKey = body.max_completion_tokens ?? body.max_tokens;
  const p = prepareChat(ctx, body, maxKey);
  const n = typeof body.n === 'number' && body.n > 1 ? Math.floor(body.n) : 1;
  const parseTools = Array.isArray(body.tools) && body.tools.length > 0 && body.tool_choice !== 'none';
  if (ctx.state.rollFailure()) throw new HttpError(500, 'Simulated engine failure', 'InternalServerError');
  ctx.state.noteDpRank(req.headers['x-data-parallel-rank']);
  const samples = Array.from({ length: n }, (_, i) => sample(ctx.fmt, ctx.state.seed, ctx.state.knobs.skill, {
        nonCanonicalRate: ctx.state.knobs.nonCanonicalRate,
    promptIds: p.promptIds, maxTokens: p.maxTokens, stop: stopList(body.stop), variant: ctx.state.variant(body.seed, i),
    jsonSchema: jsonSchemaOf(body), toolChoice: body.tool_choice,
  }));
  const prep: Prepared = { ...p, body, n, parseTools };
  if (body.stream === true) return streamChat(ctx, opts, req, reply, prep, samples);
  return withRun(ctx, req, async (run) => {
    const longest = Math.max(0, ...samples.map((s) => s.ids.length));
    for (let i = 0; i < Math.max(1, longest); i++) {
      await ctx.state.tick(run, i === 0);
      if (run.aborted || run.closed) break;
    }
    const cut = run.aborted ? Math.floor(longest / 2) : longest;
    return reply.send(chatResponse(ctx, opts, prep, samples.map((s) => (run.aborted ? { ...s, ids: s.ids.slice(0, cut) } : s)), run.aborted));
  });
}

function chatResponse(ctx: SimContext, opts: VllmOptions, p: Prepared, samples: Sampled[], aborted: boolean) {
  const b = p.body;
  const lp = { tok: ctx.tok, flavor: 'vllm' as const, seed: ctx.state.seed };
  const wantIds = b.return_token_ids === true;
  const topK = typeof b.top_logprobs === 'number' ? b.top_logprobs : 0;
  const asIds = b.return_tokens_as_token_ids === true;
  const P = p.promptIds.length;
  let completion = 0;
  const fault = ctx.state.rollCaptureFault();
  const choices = samples.map((s, index) => {
    completion += s.ids.length;
    const parser = chatParser(ctx, p);
    const deltas = [...parser.push(parserText(ctx, s.ids, s.matched)), ...parser.end()];
    let reasoning = '';
    let content = '';
    const toolCalls: unknown[] = [];
    for (const d of deltas) {
      if (d.kind === 'reasoning') reasoning += d.text;
      else if (d.kind === 'content') content += d.text;
      else toolCalls.push({ id: d.id, type: 'function', function: { name: d.name, arguments: d.arguments } });
    }
    const finish = aborted ? 'abort' : toolCalls.length && s.finish === 'stop' ? 'tool_calls' : s.finish;
    const all = [...p.promptIds, ...s.ids];
    return {
      index,
      message: {
        role: 'assistant', content: content || null, refusal: null, annotations: null, audio: null, function_call: null,
        tool_calls: toolCalls, ...reasoningKeys(opts.reasoningField, reasoning || null),
      },
      logprobs: b.logprobs === true
        ? { content: s.ids.map((id, i) => chatLogprobEntry(lp, all[P + i - 1], P + i, id, topK, asIds)).slice(0, fault === 'short-logprobs' ? -1 : undefined) }
        : null,
      finish_reason: finish,
      stop_reason: aborted ? null : stopReason(s, ctx.tok.eosTokenId),
      token_ids: wantIds ? s.ids : null,
    };
  });
  ctx.state.stats.promptTokens += P;
  ctx.state.stats.completionTokens += completion;
  const pl = typeof b.prompt_logprobs === 'number' ? vllmPromptLogprobs(lp, p.promptIds, b.prompt_logprobs) : null;
  return {
    id: `chatcmpl-${hex()}`, object: 'chat.completion', created: nowSec(), model: ctx.model, choices,
    service_tier: null, system_fingerprint: null,
    usage: { prompt_tokens: P, total_tokens: P + completion, completion_tokens: completion, prompt_tokens_details: null },
    prompt_logprobs: pl, prompt_token_ids: wantIds && fault !== 'missing-ids' ? p.promptIds : null, kv_transfer_params: null,
  };
}

async function streamChat(ctx: SimContext, opts: VllmOptions, req: FastifyRequest, reply: FastifyReply, p: Prepared, samples: Sampled[]) {
  const b = p.body;
  const id = `chatcmpl-${hex()}`;
  const created = nowSec();
  const head = { id, object: 'chat.completion.chunk', created, model: ctx.model };
  const wantIds = b.return_token_ids === true;
  const wantLp = b.logprobs === true;
  const topK = typeof b.top_logprobs === 'number' ? b.top_logprobs : 0;
  const asIds = b.return_tokens_as_token_ids === true;
  const so = b.stream_options as { include_usage?: boolean; continuous_usage_stats?: boolean } | undefined;
  const includeUsage = so != null && so.include_usage !== false;
  const continuous = includeUsage && so?.continuous_usage_stats === true;
  const lp = { tok: ctx.tok, flavor: 'vllm' as const, seed: ctx.state.seed };
  const P = p.promptIds.length;
  const eos = ctx.tok.eosTokenId;
  const usage = (completion: number) => ({ prompt_tokens: P, total_tokens: P + completion, completion_tokens: completion });

  return withRun(ctx, req, async (run) => {
    const sse = new SseWriter(reply);
    const per = samples.map((s) => ({
      s,
      steps: streamSteps(s.ids.length, endsOnStopToken(ctx, s)),
      text: parserTextStream(ctx, s),
      parser: chatParser(ctx, p),
      sent: 0,
      sawTool: false,
    }));
    let sentTokens = 0;
    const withUsage = (o: Record<string, unknown>) => (continuous ? { ...o, usage: usage(sentTokens) } : o);
    const longest = Math.max(0, ...per.map((x) => x.steps.length));
    const breakAt = ctx.state.rollMidStream(longest);
    const fault = ctx.state.rollCaptureFault();
    for (let index = 0; index < per.length; index++) {
      sse.data(withUsage({ ...head, choices: [{ index, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }], prompt_token_ids: wantIds && fault !== 'missing-ids' ? p.promptIds : null }));
    }
    let aborted = false;
    for (let step = 0; step < Math.max(1, longest); step++) {
      await ctx.state.tick(run, step === 0);
      if (run.closed) return sse.end();
      if (run.aborted) {
        aborted = true;
        break;
      }
      if (breakAt && step === breakAt.at) {
        if (breakAt.kind === 'drop') return sse.drop();
        sse.data(vllmError(500, 'Simulated engine error mid-stream', 'InternalServerError'));
        return sse.done();
      }
      for (let index = 0; index < per.length; index++) {
        const x = per[index];
        const ids = x.steps[step];
        if (!ids) continue;
        const isLast = step === x.steps.length - 1;
        const text = ids.length ? x.text.upTo(ids[ids.length - 1] + 1, isLast) : '';
        const deltas = [...x.parser.push(text), ...(isLast ? x.parser.end() : [])];
        if (deltas.some((d) => d.kind === 'tool_call')) x.sawTool = true;
        const delta = deltaObject(deltas, opts.reasoningField);
        sentTokens += ids.length;
        if (!isLast && Object.keys(delta).length === 0 && !wantIds && !wantLp) continue;
        const choice: Record<string, unknown> = {
          index, delta,
          logprobs: wantLp ? { content: ids.map((t) => chatLogprobEntry(lp, t === 0 ? p.promptIds[P - 1] : x.s.ids[t - 1], P + t, x.s.ids[t], topK, asIds))
            .slice(0, isLast && fault === 'short-logprobs' ? -1 : undefined) } : null,
          finish_reason: isLast ? (x.sawTool && x.s.finish === 'stop' ? 'tool_calls' : x.s.finish) : null,
        };
        if (isLast) choice.stop_reason = stopReason(x.s, eos);
        choice.token_ids = wantIds ? ids.map((t) => x.s.ids[t]) : null;
        sse.data(withUsage({ ...head, choices: [choice] }));
      }
    }
    if (aborted) {
      for (let index = 0; index < per.length; index++) {
        sse.data({ ...head, choices: [{ index, delta: {}, logprobs: null, finish_reason: 'abort', stop_reason: null, token_ids: wantIds ? [] : null }] });
      }
    }
    const completion = aborted ? sentTokens : samples.reduce((a, s) => a + s.ids.length, 0);
    ctx.state.stats.promptTokens += P;
    ctx.state.stats.completionTokens += completion;
    if (includeUsage) sse.data({ ...head, choices: [], usage: usage(completion) });
    sse.done();
  });
}

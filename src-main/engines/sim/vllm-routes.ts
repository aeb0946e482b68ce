// The vLLM flavour's routes (OpenAI server + dev/RL control routes), errors in vLLM's nested envelope.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { bodyOf, HttpError, type SimContext } from './http.js';
import { vllmChat, prepareChat, type VllmOptions } from './vllm-chat.js';
import { vllmCompletions } from './vllm-completions.js';
import { vllmError } from './vllm-errors.js';
import type { PauseMode } from './state.js';

const VERSION: Record<VllmOptions['reasoningField'], string> = { reasoning_content: '0.11.0', both: '0.12.0', reasoning: '0.17.0' };

export function registerVllm(app: FastifyInstance, ctx: SimContext, opts: VllmOptions): void {
  app.setErrorHandler((err: Error & { statusCode?: number }, _req, reply) => {
    if (err instanceof HttpError) return reply.code(err.status).send(vllmError(err.status, err.message, err.type, err.param));
    const status = err.statusCode && err.statusCode < 500 ? err.statusCode : 500;
    return reply.code(status).send(vllmError(status, err.message, status === 400 ? 'BadRequestError' : status === 404 ? 'NotFoundError' : 'InternalServerError'));
  });
  app.setNotFoundHandler((req, reply) => reply.code(404).send(vllmError(404, `Not Found: ${req.method} ${req.url}`, 'NotFoundError')));

  app.post('/v1/chat/completions', (req, reply) => vllmChat(ctx, opts, req, reply));
  app.post('/v1/completions', (req, reply) => vllmCompletions(ctx, req, reply));

  app.post('/tokenize', async (req) => {
    const body = bodyOf(req);
    let tokens: number[];
    if (body.messages !== undefined) tokens = prepareChat(ctx, body, undefined).promptIds;
    else if (typeof body.prompt === 'string') tokens = ctx.tok.encode(body.prompt);
    else throw new HttpError(400, 'Either `prompt` or `messages` is required');
    return { count: tokens.length, max_model_len: ctx.maxModelLen, tokens, token_strs: body.return_token_strs === true ? ctx.tok.pieces(tokens) : null };
  });
  app.post('/detokenize', async (req) => {
    const tokens = bodyOf(req).tokens;
    if (!Array.isArray(tokens) || !tokens.every((t) => Number.isInteger(t))) throw new HttpError(400, '`tokens` must be a list of token ids');
    return { prompt: ctx.tok.decode(tokens as number[]) };
  });

  app.get('/v1/models', async () => {
    const created = Math.floor(Date.now() / 1000);
    return {
      object: 'list',
      data: [{
        id: ctx.model, object: 'model', created, owned_by: 'vllm', root: ctx.model, parent: null, max_model_len: ctx.maxModelLen,
        permission: [{
          id: `modelperm-${Math.floor(ctx.state.rng() * 2 ** 32).toString(16).padStart(8, '0')}`, object: 'model_permission', created,
          allow_create_engine: false, allow_sampling: true, allow_logprobs: true, allow_search_indices: false, allow_view: true,
          allow_fine_tuning: false, organization: '*', group: null, is_blocking: false,
        }],
      }],
    };
  });
  app.get('/health', async (_req, reply) => reply.code(200).send(''));
  app.get('/version', async () => ({ version: VERSION[opts.reasoningField] }));
  app.get('/metrics', async (_req, reply) => {
    const s = ctx.state.stats;
    const l = `{engine="0",model_name="${ctx.model}"}`;
    reply.type('text/plain; version=0.0.4; charset=utf-8');
    return [
      '# HELP vllm:num_requests_running Number of requests in model execution batches.',
      '# TYPE vllm:num_requests_running gauge', `vllm:num_requests_running${l} ${s.running.toFixed(1)}`,
      '# HELP vllm:num_requests_waiting Number of requests waiting to be processed.',
      '# TYPE vllm:num_requests_waiting gauge', `vllm:num_requests_waiting${l} ${s.waiting.toFixed(1)}`,
      '# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.',
      '# TYPE vllm:kv_cache_usage_perc gauge', `vllm:kv_cache_usage_perc${l} ${Math.min(1, s.running * 0.01).toFixed(4)}`,
      '# TYPE vllm:prompt_tokens_total counter', `vllm:prompt_tokens_total${l} ${s.promptTokens.toFixed(1)}`,
      '# TYPE vllm:generation_tokens_total counter', `vllm:generation_tokens_total${l} ${s.completionTokens.toFixed(1)}`,
      '',
    ].join('\n');
  });

  const pause = async (req: FastifyRequest, reply: FastifyReply) => {
    const q = req.query as Record<string, string | undefined>;
    let mode = (q.mode ?? (q.wait_for_inflight_requests === 'true' ? 'wait' : 'abort')) as PauseMode;
    if (!['abort', 'wait', 'keep'].includes(mode)) return reply.code(400).send({ error: `Invalid mode: ${mode}` });
    await ctx.state.pause(mode);
    return { status: 'paused' };
  };
  app.post('/pause', pause);
  app.post('/resume', async () => {
    ctx.state.resume();
    return { status: 'resumed' };
  });
  app.get('/is_paused', async () => ({ is_paused: ctx.state.paused }));
}

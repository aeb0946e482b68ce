// The SGLang flavour's routes (0.5.x http_server.py): native /generate, OpenAI chat, control endpoints.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { bodyOf, HttpError, type SimContext } from './http.js';
import { sglangChat, sglangFlatError } from './sglang-chat.js';
import { sglangGenerate, type SglangShared } from './sglang-generate.js';
import { prepareChat } from './vllm-chat.js';

export interface SglangOptions { weightVersion: string; host: string }

const FLUSH_TEXT = 'Cache flushed.\nPlease check backend logs for more details. (When there are running or waiting requests, the operation will not be performed.)\n';

export function registerSglang(app: FastifyInstance, ctx: SimContext, opts: SglangOptions): void {
  const shared: SglangShared = { weightVersion: opts.weightVersion };

  app.setErrorHandler((err: Error & { statusCode?: number }, req, reply) => {
    const status = err instanceof HttpError ? err.status : err.statusCode && err.statusCode < 500 ? err.statusCode : 500;
    const type = err instanceof HttpError ? err.type : status === 400 ? 'Bad Request' : 'InternalServerError';
    // OpenAI routes answer flat; native routes nest a bare message.
    if (req.url.startsWith('/v1/')) return reply.code(status).send(sglangFlatError(status, err.message, type));
    return reply.code(status).send({ error: { message: err.message } });
  });
  app.setNotFoundHandler((_req, reply) => reply.code(404).send({ detail: 'Not Found' }));

  const generate = (req: FastifyRequest, reply: FastifyReply) => sglangGenerate(ctx, shared, req, reply);
  app.post('/generate', generate);
  app.put('/generate', generate);
  app.post('/v1/chat/completions', (req, reply) => sglangChat(ctx, shared, req, reply));

  const modelInfo = async () => ({
    model_path: ctx.model, tokenizer_path: ctx.model, is_generation: true, preferred_sampling_params: null, weight_version: shared.weightVersion,
  });
  app.get('/get_model_info', modelInfo);
  app.get('/model_info', modelInfo);
  const serverInfo = async () => {
    const addr = app.server.address();
    return {
      model_path: ctx.model, tokenizer_path: ctx.model, host: opts.host, port: typeof addr === 'object' && addr ? addr.port : 0,
      served_model_name: ctx.model, context_length: null, tp_size: 1, dp_size: 1, mem_fraction_static: 0.88,
      max_running_requests: null, chunked_prefill_size: 8192, reasoning_parser: 'qwen3', tool_call_parser: 'qwen25',
      enable_metrics: true, weight_version: shared.weightVersion, skip_tokenizer_init: false, enable_cache_report: false,
      max_total_num_tokens: 412345, max_req_input_len: ctx.maxModelLen - 6,
      internal_states: [{ last_gen_throughput: 1234.5, memory_usage: { weight: 15.3, kvcache: 55.2, graph: 0.8, token_capacity: 412345 } }],
      version: '0.5.4',
    };
  };
  app.get('/get_server_info', serverInfo);
  app.get('/server_info', serverInfo);
  app.get('/get_load', async () => [{ dp_rank: 0, num_reqs: ctx.state.stats.running, num_waiting_reqs: ctx.state.stats.waiting, num_tokens: 0 }]);

  const empty = async (_req: FastifyRequest, reply: FastifyReply) => reply.code(200).send('');
  app.get('/health', empty);
  app.get('/health_generate', empty);

  const flush = async (_req: FastifyRequest, reply: FastifyReply) => {
    reply.type('text/plain; charset=utf-8');
    return reply.code(ctx.state.runs.size > 0 ? 400 : 200).send(FLUSH_TEXT);
  };
  app.post('/flush_cache', flush);
  app.get('/flush_cache', flush);

  app.post('/pause_generation', async (req) => {
    const mode = (req.body as { mode?: string } | undefined)?.mode ?? 'abort';
    if (!['abort', 'retract', 'in_place'].includes(mode)) throw new HttpError(400, `Invalid mode: ${mode}`);
    // retract and in_place both keep in-flight requests to finish after continue_generation.
    await ctx.state.pause(mode === 'abort' ? 'abort' : 'keep');
    return { message: 'Generation paused successfully.', status: 'ok' };
  });
  app.post('/continue_generation', async () => {
    ctx.state.resume();
    return { message: 'Generation continued successfully.', status: 'ok' };
  });
  app.post('/abort_request', async (req, reply) => {
    const b = (req.body ?? {}) as { abort_all?: boolean };
    if (b.abort_all) for (const r of ctx.state.runs) r.aborted = true;
    return reply.code(200).send('');
  });
  app.post('/update_weights_from_disk', async (req) => {
    const b = bodyOf(req);
    if (typeof b.weight_version === 'string') shared.weightVersion = b.weight_version;
    return {
      success: true,
      message: `Succeeded to update model weights.${typeof b.weight_version === 'string' ? ` Weight version updated to ${b.weight_version}.` : ''}`,
      num_paused_requests: 0,
    };
  });
  app.post('/update_weight_version', async (req) => {
    const b = bodyOf(req);
    if (typeof b.new_version === 'string') shared.weightVersion = b.new_version;
    return { success: true, message: `Weight version updated to ${shared.weightVersion}.` };
  });
  app.get('/get_weight_version', async () => ({ weight_version: shared.weightVersion }));

  const tokenize = async (req: FastifyRequest) => {
    const body = bodyOf(req);
    let tokens: number[];
    if (body.messages !== undefined && body.prompt === undefined) tokens = prepareChat(ctx, body, undefined).promptIds;
    else if (typeof body.prompt === 'string' && body.messages === undefined) tokens = ctx.tok.encode(body.prompt);
    else throw new HttpError(400, 'Exactly one of prompt or messages must be provided');
    return { tokens, count: tokens.length, max_model_len: ctx.maxModelLen };
  };
  app.post('/tokenize', tokenize);
  app.post('/v1/tokenize', tokenize);
  const detokenize = async (req: FastifyRequest) => {
    const body = bodyOf(req);
    if (!Array.isArray(body.tokens) || !body.tokens.every((t) => Number.isInteger(t))) throw new HttpError(400, 'tokens must be a list of token ids');
    return { text: ctx.tok.decode(body.tokens as number[], { skipSpecialTokens: body.skip_special_tokens !== false }) };
  };
  app.post('/detokenize', detokenize);
  app.post('/v1/detokenize', detokenize);

  const card = () => ({ id: ctx.model, object: 'model', created: Math.floor(Date.now() / 1000), owned_by: 'sglang', root: ctx.model, parent: null, max_model_len: ctx.maxModelLen });
  app.get('/v1/models', async () => ({ object: 'list', data: [card()] }));
  app.get('/v1/models/*', async (req, reply) => {
    const id = (req.params as Record<string, string>)['*'];
    if (id === ctx.model) return card();
    return reply.code(404).send({ error: { message: `The model '${id}' does not exist`, type: 'invalid_request_error', param: 'model', code: 'model_not_found' } });
  });

  app.get('/metrics', async (_req, reply) => {
    const s = ctx.state.stats;
    const l = `{model_name="${ctx.model}"}`;
    reply.type('text/plain; version=0.0.4; charset=utf-8');
    return [
      '# HELP sglang:num_running_reqs The number of running requests.', '# TYPE sglang:num_running_reqs gauge', `sglang:num_running_reqs${l} ${s.running.toFixed(1)}`,
      '# HELP sglang:num_queue_reqs The number of requests in the waiting queue.', '# TYPE sglang:num_queue_reqs gauge', `sglang:num_queue_reqs${l} ${s.waiting.toFixed(1)}`,
      '# HELP sglang:token_usage The token usage.', '# TYPE sglang:token_usage gauge', `sglang:token_usage${l} ${Math.min(1, s.running * 0.01).toFixed(4)}`,
      '# TYPE sglang:cache_hit_rate gauge', `sglang:cache_hit_rate${l} 0.0`,
      '# TYPE sglang:gen_throughput gauge', `sglang:gen_throughput${l} 0.0`,
      '# TYPE sglang:prompt_tokens_total counter', `sglang:prompt_tokens_total${l} ${s.promptTokens.toFixed(1)}`,
      '# TYPE sglang:generation_tokens_total counter', `sglang:generation_tokens_total${l} ${s.completionTokens.toFixed(1)}`,
      '',
    ].join('\n');
  });
}

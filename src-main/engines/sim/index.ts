// Simulated vLLM / SGLang engines over real loopback HTTP (DESIGN §4 "sim"). Entry point.
import Fastify from 'fastify';
import { loadTokenFormat } from '../token-format.js';
import type { SimContext } from './http.js';
import { registerSglang } from './sglang-routes.js';
import { SimState, type Flavor, type SimKnobs, type SimStats } from './state.js';
import { registerVllm } from './vllm-routes.js';
import type { ReasoningField } from './vllm-chat.js';

export type { Flavor, SimKnobs, SimStats } from './state.js';
export type { ReasoningField } from './vllm-chat.js';
export { decide as simPolicy } from './policy.js';
export { tokenLogprob } from './logprobs.js';

export interface SimEngineOptions {
  flavor: Flavor;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0 (a free port). */
  port?: number;
  /** Engine seed: policy variety and logprobs. Default 0. */
  seed?: number;
  /** 0..1, probability of a right answer. Default 0.8. */
  skill?: number;
  /** Share of tokens sampled in a non-canonical split (see SimKnobs.nonCanonicalRate). */
  nonCanonicalRate?: number;
  /** Served model name. Default: a model of the family (Qwen/Qwen3-8B for qwen3). */
  model?: string;
  /** The model family it renders, samples and parses like (core/families). Default: detected from the tokenizer, else qwen3. */
  family?: string;
  /** Tokenizer spec. Default: the family's builtin. */
  tokenizer?: string;
  maxModelLen?: number;
  ttftMs?: number;
  perTokenMs?: number;
  failureRate?: number;
  midStreamDropRate?: number;
  midStreamErrorRate?: number;
  missingIdsRate?: number;
  shortLogprobsRate?: number;
  /** vLLM only: which reasoning key(s) responses carry (v0.11.0 / v0.11.1–0.16 / newest). Default 'both'. */
  reasoningField?: ReasoningField;
  /** SGLang only: the weight_version it reports. Default 'default'. */
  weightVersion?: string;
}

/** A model name of each family, served by default (what an agent configured for that model sends). */
export const SIM_MODELS: Record<string, string> = {
  'qwen3': 'Qwen/Qwen3-8B',
  'qwen3-coder': 'Qwen/Qwen3-Coder-30B-A3B-Instruct',
  'gpt-oss': 'openai/gpt-oss-20b',
  'glm45': 'zai-org/GLM-4.5-Air',
  'deepseek-v31': 'deepseek-ai/DeepSeek-V3.1',
};

export interface SimEngine {
  url: string;
  flavor: Flavor;
  model: string;
  /** The model family it speaks. */
  family: string;
  close(): Promise<void>;
  setKnobs(partial: Partial<SimKnobs>): void;
  stats(): SimStats & { knobs: SimKnobs };
}

export async function startSimEngine(opts: SimEngineOptions): Promise<SimEngine> {
  const fmt = await loadTokenFormat({ tokenizer: opts.tokenizer, family: opts.family });
  const tok = fmt.tok;
  const knobs: SimKnobs = {
    ttftMs: opts.ttftMs ?? 30,
    perTokenMs: opts.perTokenMs ?? 5,
    failureRate: opts.failureRate ?? 0,
    midStreamDropRate: opts.midStreamDropRate ?? 0,
    midStreamErrorRate: opts.midStreamErrorRate ?? 0,
    missingIdsRate: opts.missingIdsRate ?? 0,
    shortLogprobsRate: opts.shortLogprobsRate ?? 0,
    skill: opts.skill ?? 0.8,
    nonCanonicalRate: opts.nonCanonicalRate ?? 0,
  };
  const state = new SimState(opts.flavor, opts.seed ?? 0, knobs);
  const model = opts.model ?? SIM_MODELS[fmt.family.name] ?? 'Qwen/Qwen3-8B';
  const ctx: SimContext = { state, fmt, tok, model, maxModelLen: opts.maxModelLen ?? 40960 };

  const app = Fastify({ logger: false, bodyLimit: 256 * 1024 * 1024, keepAliveTimeout: 60_000 });
  // Engines accept JSON without a content-type (curl -d); treat any body as JSON.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string' }, (_req, body, done) => {
    const text = String(body ?? '');
    if (!text.trim()) return done(null, {});
    try {
      done(null, JSON.parse(text));
    } catch {
      const err = new Error('Invalid JSON body') as Error & { statusCode: number };
      err.statusCode = 400;
      done(err, undefined);
    }
  });
  app.addHook('onRequest', async (req) => {
    state.stats.requests++;
    const route = req.url.split('?')[0];
    state.stats.byRoute[route] = (state.stats.byRoute[route] ?? 0) + 1;
  });

  if (opts.flavor === 'vllm') registerVllm(app, ctx, { reasoningField: opts.reasoningField ?? 'both' });
  else registerSglang(app, ctx, { weightVersion: opts.weightVersion ?? 'default', host: opts.host ?? '127.0.0.1' });

  const host = opts.host ?? '127.0.0.1';
  await app.listen({ host, port: opts.port ?? 0 });
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : opts.port;
  const shownHost = host.includes(':') ? `[${host}]` : host;

  return {
    url: `http://${shownHost}:${port}`,
    flavor: opts.flavor,
    model,
    family: fmt.family.name,
    async close() {
      state.resume(); // release held requests so the server can drain
      for (const r of state.runs) r.aborted = true;
      app.server.closeAllConnections?.();
      await app.close();
    },
    setKnobs(partial) {
      for (const [k, v] of Object.entries(partial)) if (typeof v === 'number') (state.knobs as unknown as Record<string, number>)[k] = v;
    },
    stats: () => ({ ...structuredClone(state.stats), knobs: { ...state.knobs } }),
  };
}

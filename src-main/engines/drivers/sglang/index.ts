// SGLang: token mode only (0.5.x's chat endpoint returns no token ids); pause_generation /
// continue_generation; the data-parallel rank travels in the /generate body.
import { OPENAI_MODELS_CONTEXT } from '../openai-models.js';
import type { EngineDriver } from '../types.js';
import { sglangScoring } from './scoring.js';
import { sglangTokenWire } from './token-wire.js';

export const sglangDriver: EngineDriver = {
  kind: 'sglang',
  label: 'SGLang',
  modes: ['token'],
  defaultMode: 'token',
  missingModes: { chat: 'SGLang 0.5.x returns no token ids in chat mode; use mode: token' },
  token: sglangTokenWire,
  scoring: sglangScoring,
  healthTimeoutMs: 10_000,
  pauseRoute: (mode) => ({ path: '/pause_generation', body: { mode: mode === 'abort' ? 'abort' : 'in_place' } }),
  resumeRoute: () => ({ path: '/continue_generation', body: {} }),
  loadMetrics: { running: 'sglang:num_running_reqs', waiting: 'sglang:num_queue_reqs' },
  contextLength: OPENAI_MODELS_CONTEXT,
  // The rank is a body field (sglangTokenWire); no header.
  rankHeaders: () => ({}),
};

// vLLM: chat mode (the engine templates; ids via return_token_ids, vLLM ≥ 0.10.2) or token mode
// (/v1/completions with token ids); dev/RL pause routes; X-data-parallel-rank for sticky DP ranks.
import { OPENAI_MODELS_CONTEXT } from '../openai-models.js';
import type { EngineDriver } from '../types.js';
import { VllmChatAdapter } from './chat-adapter.js';
import { vllmScoring } from './scoring.js';
import { vllmTokenWire } from './token-wire.js';

export const vllmDriver: EngineDriver = {
  kind: 'vllm',
  label: 'vLLM',
  modes: ['chat', 'token'],
  defaultMode: 'chat',
  chatAdapter: (config) => new VllmChatAdapter(config),
  token: vllmTokenWire,
  scoring: vllmScoring,
  healthTimeoutMs: 5000,
  pauseRoute: (mode) => ({ path: `/pause?mode=${mode === 'abort' ? 'abort' : 'wait'}` }),
  resumeRoute: () => ({ path: '/resume' }),
  loadMetrics: { running: 'vllm:num_requests_running', waiting: 'vllm:num_requests_waiting' },
  contextLength: OPENAI_MODELS_CONTEXT,
  rankHeaders: (rank) => ({ 'X-data-parallel-rank': String(rank) }),
};

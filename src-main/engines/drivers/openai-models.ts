// Both engines answer the OpenAI-compatible /v1/models with vLLM's `max_model_len` on the served model.
export const OPENAI_MODELS_CONTEXT = {
  path: '/v1/models',
  read(json: unknown): number | null {
    const len = (json as { data?: Array<{ max_model_len?: unknown }> } | null)?.data?.[0]?.max_model_len;
    return typeof len === 'number' && Number.isFinite(len) && len > 0 ? len : null;
  },
};

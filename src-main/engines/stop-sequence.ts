// Which of the agent's stop strings ended a generation. vLLM reports it as `stop_reason`, SGLang as
// `matched_stop` / `finish_reason.matched`: a string when a stop string matched, a token id (EOS or a
// stop token) or null otherwise.

export function matchedStopString(engineSaid: unknown, stops: readonly string[] | undefined): string | null {
  return typeof engineSaid === 'string' && stops?.includes(engineSaid) ? engineSaid : null;
}

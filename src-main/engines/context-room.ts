// Fitting an agent's output budget into the engine's context (DESIGN §4). Agents ask for a fixed
// max_tokens whatever model they talk to (Claude Code 2.1.330 asks for 128000, opencode 32000); engines
// reject prompt + max_tokens > max_model_len. Token mode knows the prompt length, so it clamps the budget
// to the room left; chat mode retries once without max_tokens (vLLM then fills the room itself). The body
// actually sent is what gets recorded as the request served.
import type { EngineDriver } from './drivers/types.js';
import { engineRequest } from './http.js';
import type { EngineError } from './types.js';

const lengths = new Map<string, number>();

/** The replica's context length where its driver says the engine tells it; null when unknown. */
export async function contextLength(driver: Pick<EngineDriver, 'contextLength'>, replica: string, signal?: AbortSignal): Promise<number | null> {
  const known = lengths.get(replica);
  if (known !== undefined) return known;
  try {
    const res = await engineRequest({ baseUrl: replica, path: driver.contextLength.path, signal, timeoutMs: 5000 });
    if (res.statusCode !== 200) { await res.body.dump(); return null; }
    const len = driver.contextLength.read(await res.body.json());
    if (len === null) return null;
    lengths.set(replica, len);
    return len;
  } catch {
    return null;
  }
}

/** The requested budget, cut to the room the prompt leaves (never below 1; an over-long prompt is the engine's error to give). */
export function fitMaxTokens(requested: number, promptLen: number, contextLen: number | null): number {
  if (contextLen === null) return requested;
  const room = contextLen - promptLen;
  return room >= 1 ? Math.min(requested, room) : requested;
}

/** The engine refused prompt + max_tokens as too long for its context (vLLM and SGLang wordings). */
export function isContextLengthError(err: EngineError): boolean {
  return err.status === 400 && /maximum context length|context length/i.test(err.message);
}

// Token mode (DESIGN §4): Rollgate builds the prompt ids itself. When a request extends the session's
// previous request, the previously sampled ids are reused verbatim so nothing is re-tokenized.
import { isDeepStrictEqual } from 'node:util';
import type { CanonicalRequest, ChatMessage, TokenCapture } from '../core/types.js';
import type { TokenFormat } from './token-format.js';
import { DEFAULT_DEVELOPER_ROLE, type DeveloperRole } from './types.js';

export interface TokenPrompt {
  promptIds: Int32Array;
  /** How many leading ids were copied from the previous turn's prompt + sampled output. */
  reusedIds: number;
}

export type TokenHistory = ReadonlyArray<{ request: CanonicalRequest; capture: Pick<TokenCapture, 'promptIds' | 'outputIds'> }>;

function comparable(m: ChatMessage): unknown {
  const { dialect_extras: _x, ...rest } = m;
  return rest;
}

function extendsPrevious(req: CanonicalRequest, prev: CanonicalRequest): boolean {
  const n = prev.messages.length;
  if (req.messages.length <= n || req.messages[n]!.role !== 'assistant') return false;
  if (!isDeepStrictEqual(req.tools ?? [], prev.tools ?? [])) return false;
  if (!isDeepStrictEqual(req.chat_template_kwargs ?? {}, prev.chat_template_kwargs ?? {})) return false;
  for (let i = 0; i < n; i++) if (!isDeepStrictEqual(comparable(req.messages[i]!), comparable(prev.messages[i]!))) return false;
  return true;
}

/**
 * The earlier turns whose sampled ids this request can reuse, most recent first (siblings such as title
 * calls are skipped): the request extends that turn's request and the turn ended on a stop token. Cheap;
 * the render and encode in buildTokenPrompt are what cost.
 */
export function reusableTurns(fmt: Pick<TokenFormat, 'stopIds'>, req: CanonicalRequest, history: TokenHistory = [], most = 3): TokenHistory[number][] {
  const out: TokenHistory[number][] = [];
  for (let h = history.length - 1; h >= 0 && out.length < most; h--) {
    const prev = history[h]!;
    const last = prev.capture.outputIds[prev.capture.outputIds.length - 1];
    if (last !== undefined && fmt.stopIds.includes(last) && extendsPrevious(req, prev.request)) out.push(prev);
  }
  return out;
}

/** Reuses the first of `candidates` (reusableTurns) whose turn the template can be continued after; else renders afresh. */
export function buildTokenPrompt(fmt: TokenFormat, req: CanonicalRequest, candidates: TokenHistory = [], developerRole: DeveloperRole = DEFAULT_DEVELOPER_ROLE): TokenPrompt {
  for (const prev of candidates) {
    const reused = reusePrevious(fmt, req, prev, developerRole);
    if (reused) return reused;
  }
  return { promptIds: Int32Array.from(fmt.tok.encode(fmt.render(req, req.messages, true, developerRole))), reusedIds: 0 };
}

// Marks the reused assistant turn so the text the template puts after it can be cut out exactly,
// however the template renders that turn (Qwen3 adds an empty think block only to a final turn).
const TURN_SENTINEL = 'ROLLGATE_REUSED_TURN_8c1e4f';

function reusePrevious(fmt: TokenFormat, req: CanonicalRequest, prev: TokenHistory[number], developerRole: DeveloperRole): TokenPrompt | null {
  const { tok, family } = fmt;
  const out = prev.capture.outputIds;
  const lastId = out[out.length - 1]!;
  const n = prev.request.messages.length;
  const probe = req.messages.slice();
  probe[n] = { ...probe[n]!, content: TURN_SENTINEL, reasoning: null };
  const text = fmt.render(req, probe, true, developerRole);
  const at = text.indexOf(TURN_SENTINEL);
  // The sampled turn ended on its stop token; the re-render closes that turn with the family's text for it.
  const endText = family.rerenderedEnd(tok.tokenText(lastId));
  const endAt = at < 0 ? -1 : text.indexOf(endText, at);
  if (endAt < 0) return null;
  const tail = tok.encode(text.slice(endAt + endText.length));
  const reused = prev.capture.promptIds.length + out.length;
  const all = new Int32Array(reused + tail.length);
  all.set(prev.capture.promptIds, 0);
  all.set(out, prev.capture.promptIds.length);
  all.set(tail, reused);
  return { promptIds: all, reusedIds: reused };
}

// Token mode (DESIGN §4): Rollgate builds the prompt ids itself. When a request extends the session's
// previous request, the previously sampled ids are reused verbatim so nothing is re-tokenized.
import { isDeepStrictEqual } from 'node:util';
import type { CanonicalRequest, ChatMessage, TokenCapture } from '../core/types.js';
import type { ChatTokenizer } from './tokenizer/index.js';

export interface TokenPrompt {
  promptIds: Int32Array;
  /** How many leading ids were copied from the previous turn's prompt + sampled output. */
  reusedIds: number;
}

type History = ReadonlyArray<{ request: CanonicalRequest; capture: TokenCapture }>;

function comparable(m: ChatMessage): unknown {
  const { dialect_extras: _x, ...rest } = m;
  return rest;
}

function render(tok: ChatTokenizer, req: CanonicalRequest, messages: ChatMessage[], addGenerationPrompt: boolean): string {
  return tok.renderChat(messages, { tools: req.tools, addGenerationPrompt, chatTemplateKwargs: req.chat_template_kwargs });
}

function extendsPrevious(req: CanonicalRequest, prev: CanonicalRequest): boolean {
  const n = prev.messages.length;
  if (req.messages.length <= n || req.messages[n]!.role !== 'assistant') return false;
  if (!isDeepStrictEqual(req.tools ?? [], prev.tools ?? [])) return false;
  if (!isDeepStrictEqual(req.chat_template_kwargs ?? {}, prev.chat_template_kwargs ?? {})) return false;
  for (let i = 0; i < n; i++) if (!isDeepStrictEqual(comparable(req.messages[i]!), comparable(prev.messages[i]!))) return false;
  return true;
}

/** Prefers the most recent earlier turn this request extends (siblings such as title calls are skipped). */
export function buildTokenPrompt(tok: ChatTokenizer, req: CanonicalRequest, history: History = []): TokenPrompt {
  const full = render(tok, req, req.messages, true);
  for (let h = history.length - 1; h >= 0; h--) {
    const reused = reusePrevious(tok, req, full, history[h]!);
    if (reused) return reused;
  }
  return { promptIds: Int32Array.from(tok.encode(full)), reusedIds: 0 };
}

function reusePrevious(tok: ChatTokenizer, req: CanonicalRequest, full: string, prev: History[number]): TokenPrompt | null {
  const out = prev.capture.outputIds;
  if (!out.length || out[out.length - 1] !== tok.eosTokenId || !extendsPrevious(req, prev.request)) return null;
  const n = prev.request.messages.length;
  const throughAssistant = render(tok, req, req.messages.slice(0, n + 1), false);
  const eosText = tok.tokenText(tok.eosTokenId);
  const eosAt = throughAssistant.lastIndexOf(eosText);
  if (eosAt < 0 || !full.startsWith(throughAssistant)) return null;
  // What the template puts after the assistant's end-of-turn (a newline for Qwen3), then the new turns.
  const interstitial = throughAssistant.slice(eosAt + eosText.length) + full.slice(throughAssistant.length);
  const reused = prev.capture.promptIds.length + out.length;
  const tail = tok.encode(interstitial);
  const all = new Int32Array(reused + tail.length);
  all.set(prev.capture.promptIds, 0);
  all.set(out, prev.capture.promptIds.length);
  all.set(tail, reused);
  return { promptIds: all, reusedIds: reused };
}

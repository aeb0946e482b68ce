// Which codec serves which agent-facing path, and what the URL tells the codec.
import type { FastifyRequest } from 'fastify';
import { DialectError, type DialectCodec, type ParseContext } from '../core/dialects/codec.js';
import { anthropicCodec } from '../core/dialects/anthropic.js';
import { geminiCodec } from '../core/dialects/gemini.js';
import { openAIChatCodec } from '../core/dialects/openai-chat.js';
import { responsesCodec } from '../core/dialects/responses.js';

export interface DialectRoute {
  codec: DialectCodec;
  /** Path below the session prefix (`/s/:key`) or the bare origin. */
  path: string;
  /** What the URL says that the body does not (Gemini's model and streaming). */
  parseContext?(req: FastifyRequest): ParseContext | { error: string };
}

const GEMINI_ACTIONS: Record<string, boolean> = { generateContent: false, streamGenerateContent: true };

function geminiContext(req: FastifyRequest): ParseContext | { error: string } {
  // A wildcard, not a segment: served model names often have a slash (`Qwen/Qwen3-8B`).
  const modelAction = (req.params as { '*': string })['*'];
  const at = modelAction.lastIndexOf(':');
  const action = at < 0 ? '' : modelAction.slice(at + 1);
  if (!(action in GEMINI_ACTIONS)) return { error: `unsupported method ${action || '(none)'}; use generateContent or streamGenerateContent` };
  return { urlModel: modelAction.slice(0, at), urlStream: GEMINI_ACTIONS[action]! };
}

/**
 * A conversation with nothing in it is the agent's mistake, not an engine error to record: answer it in
 * the dialect (naming the dialect's own field) before any engine is called.
 */
function nonEmpty(codec: DialectCodec, field: string, status?: string): DialectCodec {
  return {
    ...codec,
    parseRequest(body, ctx) {
      const parsed = codec.parseRequest(body, ctx);
      if (parsed.canonical.messages.length === 0) throw new DialectError(`${field}: at least one message is required`, 400, status);
      return parsed;
    },
  };
}

const geminiRouteCodec = nonEmpty(geminiCodec as DialectCodec, 'contents', 'INVALID_ARGUMENT');

export const dialectRoutes: DialectRoute[] = [
  { codec: nonEmpty(openAIChatCodec as DialectCodec, 'messages'), path: '/v1/chat/completions' },
  { codec: nonEmpty(responsesCodec as DialectCodec, 'input'), path: '/v1/responses' },
  { codec: nonEmpty(anthropicCodec as DialectCodec, 'messages'), path: '/v1/messages' },
  // Gemini CLI (genai SDK 1.x) calls v1beta; @google/genai 2+ defaults to v1; both are the same surface.
  ...['v1beta', 'v1', 'v1alpha'].map((version): DialectRoute => ({
    codec: geminiRouteCodec,
    path: `/${version}/models/*`,
    parseContext: geminiContext,
  })),
];

/**
 * The dialect a failed request should be answered in, judged from its URL and, for routes no dialect
 * owns (an unknown path under a session's base URL), from the headers each SDK sends: Gemini's
 * `x-goog-api-key` / `x-goog-api-client`, Anthropic's `anthropic-version` / `x-api-key`.
 */
export function codecForUrl(url: string, headers: Record<string, string | string[] | undefined> = {}): DialectCodec {
  const path = url.split('?')[0]!;
  if (/\/v1(beta|alpha)?\/models\/[^/]+:/.test(path) || /\/v1(beta|alpha)\//.test(path)) return geminiCodec as DialectCodec;
  if (/\/v1\/messages(\/|$)/.test(path) || path.endsWith('/v1/complete')) return anthropicCodec as DialectCodec;
  if (/\/v1\/responses(\/|$)/.test(path)) return responsesCodec as DialectCodec;
  if (headers['x-goog-api-key'] !== undefined || headers['x-goog-api-client'] !== undefined) return geminiCodec as DialectCodec;
  if (headers['anthropic-version'] !== undefined || headers['x-api-key'] !== undefined) return anthropicCodec as DialectCodec;
  return openAIChatCodec as DialectCodec;
}

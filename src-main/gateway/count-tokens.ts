// `/v1/messages/count_tokens`, counted with the served model's own tokenizer and chat template.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { anthropicCodec, encodeAnthropicCountTokens, parseAnthropicCountTokensRequest } from '../core/dialects/anthropic.js';
import { DialectError, type DialectCodec } from '../core/dialects/codec.js';
import type { SessionRecord } from '../core/types.js';
import { tokenizerSpecOf } from '../engines/token-format.js';
import { loadTokenizer } from '../engines/tokenizer/index.js';
import { DEFAULT_DEVELOPER_ROLE } from '../engines/types.js';
import type { GatewayDeps } from './deps.js';
import { sendDialectError } from './errors.js';

export async function countAnthropicTokens(deps: GatewayDeps, session: SessionRecord, req: FastifyRequest, reply: FastifyReply) {
  let canonical;
  try {
    canonical = parseAnthropicCountTokensRequest(req.body);
  } catch (err) {
    if (err instanceof DialectError) return sendDialectError(reply, anthropicCodec as DialectCodec, err.status, err.message, err.type);
    throw err;
  }
  const engine = deps.pool.get(session.engineId ?? deps.pool.defaultEngineId ?? '');
  const tok = await loadTokenizer(tokenizerSpecOf(engine?.config ?? {}));
  const text = tok.renderChat(canonical.messages, {
    tools: canonical.tools, addGenerationPrompt: true, chatTemplateKwargs: canonical.chat_template_kwargs,
    developerRole: engine?.config.developerRole ?? DEFAULT_DEVELOPER_ROLE,
  });
  return encodeAnthropicCountTokens(tok.encode(text).length);
}

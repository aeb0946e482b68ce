// Session creation and the JSON views of sessions and completions (control API, DESIGN §11).
import { randomBytes } from 'node:crypto';
import type { CompletionRecord, NewSession, SessionRecord } from '../core/types.js';
import { tokenizerSpecOf } from '../engines/token-format.js';
import { loadTokenizer } from '../engines/tokenizer/index.js';
import type { EnginePool } from '../engines/pool.js';

export interface SessionUrls { openai: string; anthropic: string; gemini: string }

export function newSession(fields: Partial<SessionRecord>): NewSession {
  return {
    id: `ses_${randomBytes(8).toString('hex')}`,
    key: randomBytes(16).toString('hex'),
    engineId: null, harness: null, taskId: null, batchId: null, metadata: {},
    status: 'active', reward: null, createdAt: Date.now(), finishedAt: null,
    ...fields,
  };
}

export function sessionUrls(baseUrl: string, key: string): SessionUrls {
  const root = `${baseUrl.replace(/\/$/, '')}/s/${key}`;
  return { openai: `${root}/v1`, anthropic: root, gemini: root };
}

export async function completionJson(rec: CompletionRecord, pool: EnginePool, withPieces: boolean) {
  const json = {
    ...rec,
    promptIds: Array.from(rec.promptIds),
    outputIds: Array.from(rec.outputIds),
    outputLogprobs: Array.from(rec.outputLogprobs),
  };
  if (!withPieces) return json;
  const tok = await loadTokenizer(tokenizerSpecOf(pool.get(rec.engineId)?.config ?? {}));
  return {
    ...json,
    promptPieces: json.promptIds.map((id) => tok.tokenText(id)),
    outputPieces: json.outputIds.map((id) => tok.tokenText(id)),
  };
}

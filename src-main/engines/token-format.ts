// What token mode renders and parses with: the engine's tokenizer and its model family (DESIGN §4).
// The family comes from the topology's `family`, else from what the tokenizer's template looks like; a
// tokenizer that lacks the family's markers is refused here, at load, with the field named.
import { detectFamily, getFamily, missingTokens, type ModelFamily } from '../core/families/index.js';
import type { CanonicalRequest, ChatMessage } from '../core/types.js';
import { loadTokenizer, type ChatTokenizer } from './tokenizer/index.js';
import { DEFAULT_DEVELOPER_ROLE, type DeveloperRole, type EngineConfig } from './types.js';

export interface TokenFormat {
  tok: ChatTokenizer;
  family: ModelFamily;
  /** Ids the engine stops on (the family's turn ends that this tokenizer has). */
  stopIds: number[];
  render(req: Pick<CanonicalRequest, 'tools' | 'chat_template_kwargs'>, messages: ChatMessage[], addGenerationPrompt: boolean, developerRole?: DeveloperRole): string;
}

type FormatSpec = Pick<EngineConfig, 'tokenizer' | 'family'>;

/** The tokenizer an engine uses: the topology's, else its family's default, else Qwen3's. */
export function tokenizerSpecOf(config: FormatSpec): string {
  return config.tokenizer ?? (config.family ? getFamily(config.family).defaultTokenizer : 'builtin:qwen3');
}

/**
 * Loads what a token-mode engine will render and parse with, so a topology with an unknown tokenizer or
 * one that does not match its family fails when it is loaded, not at the first agent call. Chat-mode
 * engines only need their tokenizer (token counts).
 */
export async function checkTokenFormat(config: EngineConfig): Promise<void> {
  if (config.mode === 'token') await loadTokenFormat(config);
  else await loadTokenizer(tokenizerSpecOf(config)).catch((err: Error) => { throw new Error(`tokenizer: ${err.message}`); });
}

const cache = new Map<string, Promise<TokenFormat>>();

export function loadTokenFormat(config: FormatSpec): Promise<TokenFormat> {
  const key = `${tokenizerSpecOf(config)}\u0000${config.family ?? ''}`;
  let p = cache.get(key);
  if (!p) {
    p = build(config);
    cache.set(key, p);
    p.catch(() => cache.delete(key));
  }
  return p;
}

async function build(config: FormatSpec): Promise<TokenFormat> {
  const spec = tokenizerSpecOf(config);
  let tok: ChatTokenizer;
  try {
    tok = await loadTokenizer(spec);
  } catch (err) {
    throw new Error(`tokenizer: ${(err as Error).message}`);
  }
  const hasToken = (t: string) => tok.singleTokenId(t) !== undefined;
  const family = config.family ? getFamily(config.family) : detectFamily({ templateSource: tok.templateSource, hasToken });
  const missing = missingTokens(family, hasToken);
  if (missing.length) {
    throw new Error(`family: tokenizer "${spec}" does not match family "${family.name}" (no single token for ${missing.join(' ')}); set tokenizer to that model's folder or family to the model's family`);
  }
  if (!family.render && !tok.templateSource) {
    throw new Error(`tokenizer: "${spec}" has no chat template and family "${family.name}" renders none; use the model's folder (tokenizer.json + chat template)`);
  }
  const stopIds = family.stopTokens.map((t) => tok.singleTokenId(t)).filter((id): id is number => id !== undefined);
  return {
    tok,
    family,
    stopIds,
    render(req, messages, addGenerationPrompt, developerRole = DEFAULT_DEVELOPER_ROLE) {
      if (family.render) return family.render({ messages, tools: req.tools, addGenerationPrompt, chatTemplateKwargs: req.chat_template_kwargs, developerRole });
      return tok.renderChat(messages, { tools: req.tools, addGenerationPrompt, chatTemplateKwargs: req.chat_template_kwargs, developerRole });
    },
  };
}

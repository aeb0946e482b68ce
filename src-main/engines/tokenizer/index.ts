// Tokenizer + chat template of the served model (DESIGN §4 token mode). Cached per spec.
import { TokenizerLoader } from '@lenml/tokenizers';
import type { ChatMessage, FunctionTool } from '../../core/types.js';
import { ChatTemplateRenderer, type RenderOptions } from './chat-render.js';
import { readTokenizerFiles } from './files.js';

export interface ChatTokenizer {
  readonly name: string;
  readonly eosTokenId: number;
  /** Special-token text maps to its id; no BOS is added. */
  encode(text: string): number[];
  decode(ids: ArrayLike<number>, opts?: { skipSpecialTokens?: boolean }): string;
  /** Decoded text of one id (a lone byte-fallback piece may decode to U+FFFD). */
  tokenText(id: number): string;
  /** Vocabulary pieces of ids (byte-level form, e.g. `Ġis`), as HF `convert_ids_to_tokens`. */
  pieces(ids: ArrayLike<number>): string[];
  /** True for added tokens flagged `special` (those skip_special_tokens removes). */
  isSpecial(id: number): boolean;
  /** The id a text encodes to when it is exactly one token (markers, role tokens), else undefined. */
  singleTokenId(text: string): number | undefined;
  /** The chat template's source, when the tokenizer has one (family detection reads it). */
  readonly templateSource: string | undefined;
  renderChat(messages: ChatMessage[], opts?: RenderOptions): string;
}

export { contentToText } from '../../core/content-text.js';

const cache = new Map<string, Promise<ChatTokenizer>>();

export function loadTokenizer(spec = 'builtin:qwen3'): Promise<ChatTokenizer> {
  let p = cache.get(spec);
  if (!p) {
    p = build(spec);
    cache.set(spec, p);
    p.catch(() => cache.delete(spec));
  }
  return p;
}

function tokenContent(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (v && typeof v === 'object' && typeof (v as { content?: unknown }).content === 'string') return (v as { content: string }).content;
  return undefined;
}

async function build(spec: string): Promise<ChatTokenizer> {
  const files = await readTokenizerFiles(spec);
  const tok: any = TokenizerLoader.fromPreTrained({ tokenizerJSON: files.tokenizerJSON as any, tokenizerConfig: files.tokenizerConfig as any });
  const cfg = files.tokenizerConfig;
  const added = (files.tokenizerJSON.added_tokens ?? []) as Array<{ id: number; content: string; special: boolean }>;
  const specialIds = new Set(added.filter((t) => t.special).map((t) => t.id));
  const addedById = new Map(added.map((t) => [t.id, t.content]));
  const idOf = new Map(added.map((t) => [t.content, t.id]));

  const eosText = tokenContent(cfg.eos_token);
  const eosTokenId = eosText !== undefined ? (idOf.get(eosText) ?? tok.model.tokens_to_ids.get(eosText)) : undefined;
  if (typeof eosTokenId !== 'number') throw new Error(`tokenizer ${spec}: cannot resolve eos_token`);

  const template = cfg.chat_template;
  const templateSource = typeof template === 'string'
    ? template
    : Array.isArray(template) ? (template as Array<{ name: string; template: string }>).find((t) => t.name === 'default')?.template : undefined;
  const specials: Record<string, unknown> = {};
  for (const k of ['bos_token', 'eos_token', 'pad_token', 'unk_token']) {
    const v = tokenContent(cfg[k]);
    if (v !== undefined) specials[k] = v;
  }
  const renderer = templateSource ? new ChatTemplateRenderer(templateSource, specials) : null;
  const textCache = new Map<number, string>();

  return {
    name: files.name,
    eosTokenId,
    encode: (text) => tok.encode(text, { add_special_tokens: false }),
    decode(ids, opts) {
      if (ids.length === 0) return ''; // lenml throws on an empty list
      return tok.decode(Array.from(ids), { skip_special_tokens: opts?.skipSpecialTokens ?? false });
    },
    tokenText(id) {
      let t = textCache.get(id);
      if (t === undefined) {
        t = addedById.get(id) ?? tok.decode([id], { skip_special_tokens: false });
        textCache.set(id, t!);
      }
      return t!;
    },
    isSpecial: (id) => specialIds.has(id),
    singleTokenId(text) {
      const ids: number[] = tok.encode(text, { add_special_tokens: false });
      return ids.length === 1 ? ids[0] : undefined;
    },
    templateSource,
    pieces: (ids) => tok.model.convert_ids_to_tokens(Array.from(ids)),
    renderChat(messages, opts) {
      if (!renderer) throw new Error(`tokenizer ${spec} has no chat_template`);
      return renderer.render(messages, opts);
    },
  };
}

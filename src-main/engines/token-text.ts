// The text of one token id for each engine, for trace building (chat-mode re-renders, core/trajectory/
// rerender.ts): the engine's configured tokenizer, else the built-in Qwen3 one for a Qwen3 model. An
// engine whose tokenizer cannot be loaded gets none (its traces then merge only on exact prompts).
import type { EngineConfig } from './types.js';
import { loadTokenizer } from './tokenizer/index.js';

export type TokenText = (id: number) => string;

export function tokenizerSpecOf(e: Pick<EngineConfig, 'tokenizer' | 'model'>): string | undefined {
  if (e.tokenizer) return e.tokenizer;
  return /qwen3/i.test(e.model) ? 'builtin:qwen3' : undefined;
}

export async function engineTokenText(engine: Pick<EngineConfig, 'tokenizer' | 'model'> | undefined): Promise<TokenText | undefined> {
  const spec = engine ? tokenizerSpecOf(engine) : undefined;
  if (!spec) return undefined;
  try {
    const tok = await loadTokenizer(spec);
    return (id) => tok.tokenText(id);
  } catch {
    return undefined; // no tokenizer files: exact merging only
  }
}

/**
 * Token texts of the engines Rollgate knows, loaded ahead (tokenizers load asynchronously) so trace
 * building stays synchronous: `get` answers for every engine passed to `load`.
 */
export class EngineTokenTexts {
  private readonly byId = new Map<string, TokenText>();
  private readonly infoById = new Map<string, { model: string; tokenizer: string | null }>();

  async load(engines: ReadonlyArray<Pick<EngineConfig, 'id' | 'tokenizer' | 'model'>>): Promise<void> {
    await Promise.all(engines.map(async (e) => {
      this.infoById.set(e.id, { model: e.model, tokenizer: tokenizerSpecOf(e) ?? null });
      const t = await engineTokenText(e);
      if (t) this.byId.set(e.id, t);
      else this.byId.delete(e.id);
    }));
  }

  get(engineId: string | null | undefined): TokenText | undefined {
    return engineId ? this.byId.get(engineId) : undefined;
  }

  /** The engine's model and tokenizer ids (export rows name them). */
  info(engineId: string | null | undefined): { model: string; tokenizer: string | null } | undefined {
    return engineId ? this.infoById.get(engineId) : undefined;
  }
}

// The text of one token id for each engine, for trace building (chat-mode re-renders, core/trajectory/
// rerender.ts): the engine's tokenizer (token-format.ts says which). An engine whose tokenizer cannot be
// loaded gets none (its traces then merge only on exact prompts).
import type { EngineConfig } from './types.js';
import { tokenizerSpecOf } from './token-format.js';
import { loadTokenizer } from './tokenizer/index.js';

export type TokenText = (id: number) => string;

export async function engineTokenText(engine: Pick<EngineConfig, 'tokenizer' | 'family' | 'model'> | undefined): Promise<TokenText | undefined> {
  if (!engine) return undefined;
  const spec = tokenizerSpecOf(engine);
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

  async load(engines: ReadonlyArray<Pick<EngineConfig, 'id' | 'tokenizer' | 'family' | 'model'> & { mode?: EngineConfig['mode'] }>): Promise<void> {
    await Promise.all(engines.map(async (e) => {
      this.infoById.set(e.id, { model: e.model, tokenizer: tokenizerSpecOf(e) });
      // Re-renders happen only where the engine templates (chat mode); token mode reuses the sampled ids.
      if (e.mode === 'token') return;
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

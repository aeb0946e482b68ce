// Token-mode prompts are built off the event loop (DESIGN §4): a first turn or a break at 128k tokens
// renders and encodes for ~180 ms, which on the main thread would stall every other session's stream.
// A small piscina pool of worker threads does it; where no worker can start (a bundle without the
// sources), the build runs on the calling thread and that is said once.
import { availableParallelism } from 'node:os';
import { Piscina } from 'piscina';
import type { CanonicalRequest } from '../core/types.js';
import { runPromptTask, type PromptTask } from './prompt-task.js';
import type { TokenFormat } from './token-format.js';
import { reusableTurns, type TokenHistory, type TokenPrompt } from './token-prompt.js';
import type { DeveloperRole, EngineConfig } from './types.js';

let pool: Piscina | null = null;
/** Whether a worker could start and load the sources: asked once with a ping, before the first real task. */
let ready: Promise<boolean> | null = null;

function workers(): Promise<Piscina | null> {
  if (!ready) {
    const p = new Piscina({
      filename: new URL('./prompt-worker.mjs', import.meta.url).href,
      minThreads: 0,
      // One core stays for the event loop and its streams.
      maxThreads: Math.max(1, Math.min(4, availableParallelism() - 1)),
      idleTimeout: 60_000,
    });
    pool = p;
    ready = p.run({ ping: true }).then(() => true, (err: Error) => {
      console.warn(`rollgate: prompt workers cannot start (${err.message}); building token-mode prompts on the main thread`);
      pool = null;
      void p.destroy();
      return false;
    });
  }
  return ready.then((ok) => (ok ? pool : null));
}

/** The prompt ids for a token-mode call, built in a worker thread. */
export async function buildPromptOffThread(
  fmt: TokenFormat, config: Pick<EngineConfig, 'tokenizer' | 'family'>, request: CanonicalRequest, history: TokenHistory | undefined, developerRole?: DeveloperRole,
): Promise<TokenPrompt> {
  // Only what the worker needs crosses the thread boundary: the request and the turns it may reuse.
  const task: PromptTask = {
    config: { tokenizer: config.tokenizer, family: config.family },
    request,
    candidates: reusableTurns(fmt, request, history).map((h) => ({ request: h.request, capture: { promptIds: h.capture.promptIds, outputIds: h.capture.outputIds } })),
    developerRole,
  };
  const p = await workers();
  return p ? await p.run(task) as TokenPrompt : runPromptTask(task);
}

/** Stops the workers; a later call starts a new pool (a failed start is not tried again). */
export async function closePromptPool(): Promise<void> {
  const p = pool;
  if (!p) return;
  pool = null;
  ready = null;
  await p.destroy();
}

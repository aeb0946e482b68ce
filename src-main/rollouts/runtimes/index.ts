// Runtime selection (DESIGN §7): `auto` = bwrap on Linux when it is installed and works, else `local`
// with a warning that the caller shows (CLI, API answer, UI). An explicit choice that cannot run here is
// an error, never a silent fallback.
import { bwrapAvailable, bwrapRuntime } from './bwrap/index.js';
import { dockerRuntime } from './docker/index.js';
import { localRuntime } from './local/index.js';
import type { Runtime, RuntimeChoice, RuntimeName } from './types.js';

export * from './types.js';
export { CHECK_FILES_DIR } from './types.js';

const RUNTIMES: Record<RuntimeName, Runtime> = { bwrap: bwrapRuntime, docker: dockerRuntime, local: localRuntime };

export function getRuntime(name: RuntimeName): Runtime {
  return RUNTIMES[name];
}

export const LOCAL_WARNING = 'runs are UNSANDBOXED (runtime local): agents can reach the control API, other sessions and your files, so their rewards are not protected';

export interface ResolvedRuntime { runtime: Runtime; warning: string | null }

/** The runtime for a choice, or why it cannot run here (docker is probed when its batch starts: async). */
export function resolveRuntime(choice: RuntimeChoice): ResolvedRuntime | { error: string } {
  if (choice === 'auto') {
    const b = bwrapAvailable();
    if (b.ok) return { runtime: bwrapRuntime, warning: null };
    return { runtime: localRuntime, warning: `${LOCAL_WARNING} (${b.reason}; install bubblewrap or choose runtime docker)` };
  }
  if (choice === 'bwrap') {
    const b = bwrapAvailable();
    if (!b.ok) return { error: `runtime bwrap is not available: ${b.reason}` };
  }
  return { runtime: RUNTIMES[choice], warning: choice === 'local' ? LOCAL_WARNING : null };
}

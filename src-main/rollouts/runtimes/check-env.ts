// The environment a grading command gets, whatever the runtime: built from nothing (no variable the agent
// or the user's shell set), a fresh HOME, no user site-packages, no shell rc files (BASH_ENV/ENV unset).
import { baseEnv } from './run-dirs.js';

export function checkEnv(
  dirs: { home: string; tmp: string; output: string; tests?: string },
  given: Record<string, string>,
  systemPath?: string,
  nodeDir?: string,
): Record<string, string> {
  const env: Record<string, string> = {
    ...baseEnv(dirs, [], systemPath, nodeDir),
    ...given,
    PYTHONNOUSERSITE: '1',
    PYTHONDONTWRITEBYTECODE: '1',
    // `python -c`/`-m` would otherwise put the work folder first on sys.path: a planted `json.py` runs.
    PYTHONSAFEPATH: '1',
    ROLLGATE_AGENT_OUTPUT: dirs.output,
    ...(dirs.tests ? { ROLLGATE_TESTS_DIR: dirs.tests } : {}),
  };
  for (const k of ['BASH_ENV', 'ENV', 'PYTHONPATH', 'PYTHONSTARTUP', 'NODE_OPTIONS', 'LD_PRELOAD', 'LD_LIBRARY_PATH']) delete env[k];
  return env;
}

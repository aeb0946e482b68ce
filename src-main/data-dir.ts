// Where data lives (DESIGN §11): --data-dir, else $ROLLGATE_DATA_DIR, else the platform's app-data folder.
import { homedir } from 'node:os';
import { join } from 'node:path';

export function defaultDataDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  if (env.ROLLGATE_DATA_DIR) return env.ROLLGATE_DATA_DIR;
  if (platform === 'darwin') return join(homedir(), 'Library', 'Application Support', 'Rollgate');
  if (platform === 'win32') return join(env.APPDATA ?? join(homedir(), 'AppData', 'Roaming'), 'Rollgate');
  return join(env.XDG_DATA_HOME ?? join(homedir(), '.local', 'share'), 'rollgate');
}

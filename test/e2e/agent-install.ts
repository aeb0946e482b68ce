// Installs a pinned agent CLI into a cache folder (never a project dependency), once per version.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../helpers/paths.js';

export const AGENT_CACHE = process.env.ROLLGATE_AGENT_CACHE ?? join(REPO_ROOT, '.cache', 'agents');

export function installAgent(pkg: string, version: string, binName: string): string {
  const dir = join(AGENT_CACHE, `${pkg.replace(/[@/]/g, '_')}-${version}`);
  const bin = join(dir, 'node_modules', '.bin', binName);
  const installed = join(dir, 'node_modules', ...pkg.split('/'), 'package.json');
  if (!existsSync(bin) || !existsSync(installed) || JSON.parse(readFileSync(installed, 'utf8')).version !== version) {
    mkdirSync(dir, { recursive: true });
    execFileSync('npm', ['install', '--no-audit', '--no-fund', '--no-save', '--prefix', dir, `${pkg}@${version}`], {
      stdio: 'inherit',
      timeout: 600_000,
      env: { ...process.env, ELECTRON_SKIP_BINARY_DOWNLOAD: '1' },
    });
  }
  return bin;
}

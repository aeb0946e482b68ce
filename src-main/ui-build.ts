// `rollgate serve` from a fresh clone: the renderer is built on first use, so the CLI works straight
// after `npm install` with no separate build step (DESIGN §11). Packaged apps ship dist-renderer.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

export async function ensureUiBuilt(uiDir: string, repoRoot: string): Promise<void> {
  if (existsSync(join(uiDir, 'index.html'))) return;
  const config = resolve(repoRoot, 'vite.config.ts');
  if (!existsSync(config)) return; // not a source checkout: the server says the UI is missing
  console.log('Building the workbench UI (first run)…');
  const t0 = Date.now();
  try {
    const vite = await import('vite');
    await vite.build({ configFile: config, logLevel: 'warn', build: { outDir: uiDir, emptyOutDir: true } });
    console.log(`UI built in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  } catch (err) {
    // No dev dependencies or a read-only folder: serve the API anyway; the root page says the UI is missing.
    console.warn(`rollgate: could not build the UI (${(err as Error).message.split('\n')[0]}); serving the API without it`);
  }
}

// `rollgate serve` on a fresh clone builds the renderer on first use (no separate build step).
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ensureUiBuilt } from '../../src-main/ui-build.js';
import { REPO_ROOT } from '../helpers/paths.js';

const dirs: string[] = [];
const tmp = () => { const d = mkdtempSync(join(tmpdir(), 'rollgate-ui-')); dirs.push(d); return d; };
afterAll(() => { for (const d of dirs) rmSync(d, { recursive: true, force: true }); });

describe('ensureUiBuilt', () => {
  it('builds the renderer into the UI folder when it has no index.html, and leaves a built one alone', async () => {
    const out = join(tmp(), 'dist-renderer');
    await ensureUiBuilt(out, REPO_ROOT);
    const html = readFileSync(join(out, 'index.html'), 'utf8');
    expect(html).toContain('Content-Security-Policy');
    expect(html).toMatch(/<script type="module"[^>]* src="\.\/assets\/[^"]+\.js"/);
    const built = statSync(join(out, 'index.html')).mtimeMs;
    await ensureUiBuilt(out, REPO_ROOT);
    expect(statSync(join(out, 'index.html')).mtimeMs).toBe(built);
  }, 120_000);

  it('outside a source checkout it does nothing (the server then says the UI is missing)', async () => {
    const out = join(tmp(), 'dist-renderer');
    await ensureUiBuilt(out, tmp());
    expect(existsSync(out)).toBe(false);
  });
});

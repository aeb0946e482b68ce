// electron-builder.yml validates against electron-builder's own schema, and ships what the app needs.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { parse } from 'yaml';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/paths.js';

const require = createRequire(import.meta.url);
const { validateConfiguration } = require('app-builder-lib/out/util/config/config.js');
const { DebugLogger } = require(require.resolve('builder-util', { paths: [require.resolve('app-builder-lib')] }));

const config = parse(readFileSync(join(REPO_ROOT, 'electron-builder.yml'), 'utf8'));

describe('electron-builder.yml', () => {
  it('passes electron-builder’s schema validation', async () => {
    await expect(validateConfiguration(config, new DebugLogger(false))).resolves.toBeUndefined();
  });

  it('rejects a broken config (the validation is real)', async () => {
    await expect(validateConfiguration({ ...config, linux: { target: 42, bogus: true } }, new DebugLogger(false))).rejects.toThrow();
  });

  it('packs the files the app loads at run time and unpacks what must be real files', () => {
    for (const f of ['dist-electron/**/*', 'dist-renderer/**/*', 'assets/datasets/**/*', 'src-main/rollouts/harnesses/builtin-agent.mjs']) expect(config.files).toContain(f);
    expect(config.asarUnpack).toEqual(expect.arrayContaining(['node_modules/better-sqlite3/**/*.node', 'src-main/rollouts/harnesses/builtin-agent.mjs']));
    expect(config.npmRebuild).toBe(false);
    expect(existsSync(join(REPO_ROOT, 'src-main/rollouts/harnesses/builtin-agent.mjs'))).toBe(true);
    expect(existsSync(join(REPO_ROOT, config.linux.icon))).toBe(true);
  });
});

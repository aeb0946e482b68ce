// `npm start` without an Electron runtime says how to get one (issue 19), and finds one it is pointed at.
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script of the package, no types
import { electronBinary, MISSING_ELECTRON } from '../../scripts/electron-runtime.mjs';
import { REPO_ROOT } from '../helpers/paths.js';

const dir = mkdtempSync(join(tmpdir(), 'rollgate-electron-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the Electron runtime for npm start', () => {
  it('is missing when ELECTRON_OVERRIDE_DIST_PATH holds none, found when it does', () => {
    expect(electronBinary({ ELECTRON_OVERRIDE_DIST_PATH: dir })).toBeNull();
    writeFileSync(join(dir, 'electron'), '');
    expect(electronBinary({ ELECTRON_OVERRIDE_DIST_PATH: dir })).toBe(join(dir, 'electron'));
  });

  it('the message names a command that exists in this install', () => {
    expect(MISSING_ELECTRON).toMatch(/npx install-electron/);
    expect(MISSING_ELECTRON).toMatch(/ELECTRON_OVERRIDE_DIST_PATH/);
    expect(existsSync(join(REPO_ROOT, 'node_modules', '.bin', 'install-electron'))).toBe(true);
  });
});

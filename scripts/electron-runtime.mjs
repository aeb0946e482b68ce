// Where `npm start` finds the Electron runtime, and what it says when there is none. The electron npm
// package downloads its binary in an install script; where that could not run (offline, scripts off) the
// package is there without a runtime.
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

export const MISSING_ELECTRON = 'No Electron runtime installed: serving the workbench headless; open the URL below in a browser.\n'
  + 'For the desktop window, get the runtime once with `npx install-electron` (downloads Electron for this\n'
  + 'platform), or set ELECTRON_OVERRIDE_DIST_PATH to a folder holding an unpacked Electron, then `npm start` again.';

/** The Electron executable, or null when no runtime is installed. */
export function electronBinary(env = process.env) {
  const override = env.ELECTRON_OVERRIDE_DIST_PATH;
  if (override) {
    const bin = join(override, process.platform === 'darwin' ? 'Electron.app/Contents/MacOS/Electron' : process.platform === 'win32' ? 'electron.exe' : 'electron');
    return existsSync(bin) ? bin : null;
  }
  try {
    const require = createRequire(import.meta.url);
    const dir = dirname(require.resolve('electron/package.json'));
    const pathFile = join(dir, 'path.txt');
    if (!existsSync(pathFile)) return null;
    const bin = join(dir, 'dist', readFileSync(pathFile, 'utf8').trim());
    return existsSync(bin) ? bin : null;
  } catch { return null; }
}

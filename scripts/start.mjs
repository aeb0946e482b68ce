// `npm start`: the desktop app where an Electron runtime and a display exist, otherwise the same UI
// served headless (`rollgate serve --open`), with a line saying where.
import { spawnSync, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { electronBinary, MISSING_ELECTRON } from './electron-runtime.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const run = (cmd, args) => {
  const r = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
};

run(process.execPath, [join(root, 'node_modules', 'vite', 'bin', 'vite.js'), 'build', '--logLevel', 'warn']);
const electron = electronBinary();
const hasDisplay = process.platform !== 'linux' || Boolean(process.env.DISPLAY || process.env.WAYLAND_DISPLAY);
if (electron && hasDisplay) {
  run(process.execPath, [join(root, 'scripts', 'build-electron.mjs')]);
  const child = spawn(electron, [root, ...process.argv.slice(2)], { cwd: root, stdio: 'inherit' });
  child.on('exit', (code) => process.exit(code ?? 0));
} else {
  console.log(electron ? 'No display found: serving the workbench headless instead of opening a window.'
    : MISSING_ELECTRON);
  const args = [join(root, 'bin', 'rollgate.mjs'), 'serve', '--open', ...process.argv.slice(2)];
  const child = spawn(process.execPath, args, { cwd: root, stdio: 'inherit' });
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => child.kill(sig));
  child.on('exit', (code) => process.exit(code ?? 0));
}

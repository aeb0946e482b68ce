#!/usr/bin/env node
// Bundles the Electron main process (src-main/electron/main.ts and everything it imports from
// src-main) into dist-electron/main.cjs. `electron` and all npm packages stay external: they are
// loaded from node_modules at run time (electron-builder ships the production dependencies), so
// packages that read their own files (tokenizer JSON, native .node prebuilds) keep working.
import { build, context } from 'esbuild';
import { rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const outdir = join(root, 'dist-electron');
const watch = process.argv.includes('--watch');

rmSync(outdir, { recursive: true, force: true });

const options = {
  absWorkingDir: root,
  entryPoints: { main: 'src-main/electron/main.ts' },
  outdir,
  outExtension: { '.js': '.cjs' },
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node22',
  packages: 'external',
  external: ['electron'],
  sourcemap: true,
  logLevel: 'info',
  plugins: [sourceLocationPlugin()],
  banner: {
    js: [
      '// Rollgate Electron main process (bundled by scripts/build-electron.mjs).',
      "const __rgFile = (rel) => require('node:path').join(__dirname, '..', rel);",
      "const __rgUrl = (rel) => require('node:url').pathToFileURL(__rgFile(rel)).href;",
    ].join('\n'),
  },
};

/**
 * The sources are ESM and locate files with import.meta (package.json, dist-renderer, tokenizer
 * packages). In a CommonJS bundle import.meta is empty, so each module's import.meta.url/dirname/
 * filename is rewritten to where that source file sits in the app (bundle dir/.., then its path
 * from the repo root): every relative lookup resolves exactly as it does under tsx.
 */
function sourceLocationPlugin() {
  return {
    name: 'rollgate-source-location',
    setup(b) {
      b.onLoad({ filter: /[\\/]src-main[\\/].*\.[cm]?tsx?$/ }, async (args) => {
        const text = await readFile(args.path, 'utf8');
        if (!text.includes('import.meta')) return undefined;
        const rel = JSON.stringify(relative(root, args.path).split(sep).join('/'));
        const relDir = JSON.stringify(dirname(relative(root, args.path)).split(sep).join('/'));
        const contents = text
          .replaceAll('import.meta.url', `__rgUrl(${rel})`)
          .replaceAll('import.meta.dirname', `__rgFile(${relDir})`)
          .replaceAll('import.meta.filename', `__rgFile(${rel})`);
        return { contents, loader: args.path.endsWith('x') ? 'tsx' : 'ts' };
      });
    },
  };
}

if (watch) {
  const ctx = await context(options);
  await ctx.watch();
  console.log('watching src-main for changes…');
} else {
  await build(options);
}

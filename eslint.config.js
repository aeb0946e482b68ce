// Layering (DESIGN §2), enforced like VS Code's code-layering rule: a wrong import fails `npm test`.
import tseslint from 'typescript-eslint';

const IO_MODULES = ['fastify', '@fastify/*', 'better-sqlite3', 'undici', 'electron', 'node:fs', 'node:fs/*', 'node:net', 'node:http', 'node:https', 'node:child_process', 'fs', 'net', 'http', 'child_process'];
const layer = (files, banned, why) => ({
  files,
  rules: {
    'no-restricted-imports': ['error', { patterns: [{ group: banned, message: why }] }],
  },
});
const above = (...folders) => folders.flatMap((f) => [`**/${f}/*`, `**/${f}/**`, `**/${f}.js`]);

export default [
  { ignores: ['node_modules/**', 'dist/**', 'dist-renderer/**', 'dist-electron/**', 'test-results/**', '.data/**'] },
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: { parser: tseslint.parser, parserOptions: { ecmaVersion: 'latest', sourceType: 'module' } },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: { 'no-restricted-imports': ['error', { paths: [{ name: 'electron', message: 'only src-main/electron/ may import electron' }] }] },
  },
  layer(['src-main/core/**/*.ts'], [...IO_MODULES, ...above('engines', 'store', 'cluster', 'gateway', 'api', 'rollouts', 'electron', 'app', 'cli')],
    'core is pure: no IO and no imports from higher layers'),
  layer(['src-main/engines/**/*.ts'], ['electron', ...above('store', 'cluster', 'gateway', 'api', 'rollouts', 'electron', 'app', 'cli')],
    'engines may import only core and engines'),
  layer(['src-main/store/**/*.ts'], ['electron', ...above('engines', 'cluster', 'gateway', 'api', 'rollouts', 'electron', 'app', 'cli')],
    'store may import only core and store'),
  layer(['src-main/cluster/**/*.ts'], ['electron', ...above('gateway', 'api', 'rollouts', 'electron', 'app', 'cli')],
    'cluster may import only core, engines, store and cluster'),
  { files: ['src-main/electron/**/*.ts'], rules: { 'no-restricted-imports': 'off' } },
  layer(['src-main/gateway/**/*.ts', 'src-main/rollouts/**/*.ts', 'src-main/api/**/*.ts'], ['electron', ...above('electron', 'app', 'cli')],
    'services may not import the shells'),
  layer(['src-renderer/**/*.ts', 'src-renderer/**/*.tsx'], [...IO_MODULES, '**/src-main/**', '!**/src-main/core/**'],
    'the renderer talks only to the control API'),
];

// Renderer build: src-renderer → dist-renderer, relative asset URLs (works under any path, and when
// served by Rollgate's own server or loaded by Electron). In dev, /api is proxied to a running
// `rollgate serve` (ROLLGATE_URL, default http://127.0.0.1:8321).
import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';
import { defineConfig, type Plugin } from 'vite';
import { CSP } from './src-main/electron/policy.js';

const root = fileURLToPath(new URL('./src-renderer', import.meta.url));
const outDir = fileURLToPath(new URL('./dist-renderer', import.meta.url));

/**
 * Strict CSP for the built page (no inline script or style, no eval, same origin only): the same
 * policy the Electron shell sets as a header, minus frame-ancestors, which a <meta> cannot carry.
 */
export const RENDERER_CSP = CSP.split('; ')
  .filter((d) => !d.startsWith('frame-ancestors'))
  .join('; ');

function cspMeta(): Plugin {
  return {
    name: 'rollgate-csp-meta',
    apply: 'build',
    transformIndexHtml: () => [
      { tag: 'meta', attrs: { 'http-equiv': 'Content-Security-Policy', content: RENDERER_CSP }, injectTo: 'head-prepend' },
    ],
  };
}

export default defineConfig({
  root,
  base: './',
  plugins: [react(), cspMeta()],
  build: {
    outDir,
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: true,
    modulePreload: { polyfill: false },
    // One bundle (React + recharts ≈ 800 kB) loaded from loopback or the app's own files: no need to split.
    chunkSizeWarningLimit: 1500,
  },
  server: {
    host: '127.0.0.1',
    proxy: { '/api': { target: process.env.ROLLGATE_URL ?? 'http://127.0.0.1:8321', changeOrigin: false } },
  },
  preview: { host: '127.0.0.1' },
});

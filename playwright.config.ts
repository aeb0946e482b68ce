// UI tests in the system Chromium (never `npx playwright install`). The mocked specs use the built
// renderer served by `vite preview`; ui-sessions.spec.ts starts a real `rollgate serve` itself.
import { defineConfig } from '@playwright/test';

// Chosen once in the runner process; workers inherit the environment.
process.env.UI_PREVIEW_PORT ??= String(41000 + (process.pid % 2000));
const previewPort = Number(process.env.UI_PREVIEW_PORT);
const bin = 'node_modules/.bin';

export default defineConfig({
  testDir: 'test/e2e',
  testMatch: 'ui-*.spec.ts',
  outputDir: 'test-results/ui',
  timeout: 60_000,
  expect: { timeout: 10_000 },
  fullyParallel: false,
  workers: 1,
  retries: 0,
  forbidOnly: !!process.env.CI,
  reporter: [['list']],
  use: {
    baseURL: `http://127.0.0.1:${previewPort}`,
    screenshot: 'on',
    trace: 'retain-on-failure',
    viewport: { width: 1440, height: 900 },
    // The app follows the OS theme: dark first; the specs switch to light for the light screenshots.
    colorScheme: 'dark',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    },
  },
  projects: [{ name: 'chromium', use: { browserName: 'chromium' } }],
  webServer: {
    command: `${bin}/vite build --logLevel warn && ${bin}/vite preview --port ${previewPort} --strictPort --host 127.0.0.1`,
    url: `http://127.0.0.1:${previewPort}/`,
    timeout: 60_000,
    reuseExistingServer: false,
    stdout: 'ignore',
    stderr: 'pipe',
  },
});

import { defineConfig } from 'vitest/config';

// Real agent CLIs against the gateway: slow (installs and runs whole agents), so one file at a time.
export default defineConfig({
  test: {
    include: ['test/e2e/**/*.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 600_000,
    pool: 'forks',
    maxWorkers: 1,
    fileParallelism: false,
  },
});

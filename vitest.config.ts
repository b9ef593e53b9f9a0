import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['{shared,api,ingest-worker,audit-worker,console}/{src,test}/**/*.test.{ts,tsx}'],
    exclude: ['**/node_modules/**', 'console/e2e/**'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ['default'],
  },
});

import { defineConfig } from '@playwright/test';

const port = Number(process.env.E2E_PORT ?? 8181);

/** End-to-end tests in Debian's Chromium against the product started by deploy/local/e2e-stack.mjs. */
export default defineConfig({
  testDir: './e2e',
  outputDir: '../test-results/e2e',
  timeout: 60_000,
  expect: { timeout: 10_000 },
  fullyParallel: false,
  workers: 1,
  retries: 0,
  reporter: [['list'], ['html', { outputFolder: '../test-results/e2e-report', open: 'never' }]],
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    screenshot: 'on',
    trace: 'retain-on-failure',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-quic',
        '--no-first-run', '--disable-component-update', '--disable-sync'],
    },
  },
  webServer: {
    command: 'node ../deploy/local/e2e-stack.mjs',
    url: `http://127.0.0.1:${port}/api/v1/health`,
    timeout: 240_000,
    reuseExistingServer: false,
    stdout: 'pipe',
    stderr: 'pipe',
    gracefulShutdown: { signal: 'SIGTERM', timeout: 20_000 },
  },
});

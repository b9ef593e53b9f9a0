/**
 * `npm test`: the one test command. Makes the services ready through the same code path as
 * `npm start`, installs Debian's Chromium when missing, then runs typecheck, lint, the server build,
 * the unit and integration tests (vitest, real PostgreSQL/Redis/ClickHouse) and the end-to-end tests
 * (Playwright, against the compiled server).
 */
import { spawnSync } from 'node:child_process';
import { ensureDependencies } from './deps.mjs';
import { ensureChromium, ensureServices, ROOT, stopStartedServices, writeDataReadme } from './services.mjs';
import { buildConsoleIfStale, buildServer } from './stack.mjs';

function step(name, command, args, env) {
  process.stdout.write(`\n[test] ${name}\n`);
  const started = Date.now();
  const result = spawnSync(command, args, { cwd: ROOT, stdio: 'inherit', env });
  process.stdout.write(`[test] ${name}: ${result.status === 0 ? 'passed' : 'FAILED'} in ${Math.round((Date.now() - started) / 1000)} s\n`);
  return result.status === 0;
}

// Ctrl-C or SIGTERM: the running step receives the signal too; the services this command started
// are stopped once it has returned.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    stopStartedServices();
    process.exit(signal === 'SIGINT' ? 130 : 143);
  });
}

async function main() {
  ensureDependencies();
  writeDataReadme();
  const services = await ensureServices();
  const chromium = ensureChromium();
  const env = { ...process.env, ...services, CHROMIUM_PATH: chromium };
  const only = process.argv[2];
  const results = [];
  if (!only || only === 'static') {
    results.push(step('typecheck', 'npm', ['run', '--silent', 'typecheck'], env));
    results.push(step('lint', 'npm', ['run', '--silent', 'lint'], env));
    results.push(step('build (the compiled server that the images and the end-to-end tests run)', 'npm', ['run', '--silent', 'build:server'], env));
  }
  if (!only || only === 'unit') {
    results.push(step('unit and integration tests (vitest)', 'npx', ['vitest', 'run'], env));
  }
  if (!only || only === 'e2e') {
    buildConsoleIfStale(env);
    // Built here rather than by the stack, within Playwright's start-up timeout (a no-op after the build step).
    buildServer(env);
    results.push(step('end-to-end tests (playwright, chromium)', 'npx', ['playwright', 'test', '-c', 'console/playwright.config.ts'], env));
  }
  stopStartedServices();
  const failed = results.filter((ok) => !ok).length;
  process.stdout.write(`\nsteps: ${results.length - failed} passed, ${failed} failed\n`);
  process.exit(failed ? 1 : 0);
}

main().catch((error) => {
  process.stderr.write(`npm test failed: ${error.message}\n`);
  stopStartedServices();
  process.exit(1);
});

/**
 * `npm run bench`: makes dependencies and services ready through the same code path as `npm test`,
 * then runs the time-series benchmark (deploy/bench/time-series.ts), which prints one JSON line per
 * figure: { name, value, unit, baseline, ratio, target, pass }. BENCH_SCALE (default 1) shrinks or
 * grows every data size for a quick run, e.g. BENCH_SCALE=0.1.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ensureDependencies } from './deps.mjs';
import { ensureServices, ROOT, stopStartedServices, writeDataReadme } from './services.mjs';
import { buildServer } from './stack.mjs';

async function main() {
  ensureDependencies();
  writeDataReadme();
  // The product's processes run as they ship: compiled (deploy/local/stack.mjs, nodeArguments).
  buildServer();
  const services = await ensureServices();
  const result = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'deploy', 'bench', 'time-series.ts')], {
    cwd: ROOT, stdio: 'inherit', env: { ...process.env, ...services },
  });
  stopStartedServices();
  process.exit(result.status ?? 1);
}

main().catch((error) => {
  process.stderr.write(`npm run bench failed: ${error.message}\n`);
  stopStartedServices();
  process.exit(1);
});

/**
 * `npm run soak`: makes PostgreSQL and ClickHouse ready through the same code path as `npm test`, then
 * runs the soak (deploy/soak/soak.ts) with a Redis of its own, which it kills and flushes. SOAK_MINUTES
 * (default 10) sets its length; it prints one JSON line per invariant and exits non-zero if one fails.
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
  const services = await ensureServices(['DATABASE_URL', 'CLICKHOUSE_URL']);
  const result = spawnSync(process.execPath, ['--import', 'tsx', path.join(ROOT, 'deploy', 'soak', 'soak.ts')], {
    cwd: ROOT, stdio: 'inherit', env: { ...process.env, DATABASE_URL: services.DATABASE_URL, CLICKHOUSE_URL: services.CLICKHOUSE_URL },
  });
  stopStartedServices();
  process.exit(result.status ?? 1);
}

main().catch((error) => {
  process.stderr.write(`npm run soak failed: ${error.message}\n`);
  stopStartedServices();
  process.exit(1);
});

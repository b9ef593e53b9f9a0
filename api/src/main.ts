/** The api process: configuration, migrations, start-up tasks, then listen; ordered shutdown. */
import v8 from 'node:v8';
import { apiEnvSchema, loadEnvOrExit } from '@bioprocess/shared/server/config';
import { createLogger } from '@bioprocess/shared/server/logger';
import { closeOnSignals } from '@bioprocess/shared/server/shutdown';
import { buildApp } from './app.ts';
import { migrateAll } from './db/migrate.ts';
import { closeDeps, createDeps } from './platform/deps.ts';
import { runStartupTasks, StartupRefused } from './startup.ts';
import { PublishedPasswordError } from './auth/superuser-bootstrap.ts';
import { seedDemo } from './demo/seed.ts';

// Requests hold their objects while they wait for their job, so some survive into the old generation,
// whose next collection V8 schedules only ~10 MB above the ~37 MB live heap: on a stream of bulk posts
// that was a full mark-compact for about every post, a third of the api's CPU. A larger growing factor
// halves them for a few tens of MB more heap (measured with `npm run bench` and --trace-gc).
v8.setFlagsFromString('--heap-growing-percent=150');

/**
 * Connections the kernel may hold until the api accepts them. Node's 511 overflowed when a thousand
 * feeds posting every second connected in the same moment (the api busy for a few tens of ms):
 * dropped handshakes are retried by clients after 1 s, then 3 s, and some ended reset. Linux caps it
 * at net.core.somaxconn.
 */
const LISTEN_BACKLOG = 4096;

const env = loadEnvOrExit(apiEnvSchema);
const logger = createLogger('api', env.LOG_LEVEL);

await migrateAll(env, logger);
const deps = createDeps(env, logger);
try {
  await runStartupTasks(deps);
} catch (error) {
  if (!(error instanceof PublishedPasswordError) && !(error instanceof StartupRefused)) throw error;
  logger.fatal(error.message);
  process.stderr.write(`${error.message}\n`);
  await closeDeps(deps);
  process.exit(78);
}
const app = await buildApp(deps);
await app.ready();
if (env.SEED_DEMO) await seedDemo(app, deps);
await app.listen({ port: env.PORT, host: env.HOST, backlog: LISTEN_BACKLOG });

closeOnSignals('api', logger, async () => {
  await app.close();
  await closeDeps(deps);
}, 10_000);

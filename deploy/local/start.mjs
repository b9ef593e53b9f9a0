/** `npm start`: the whole product on one origin, with every dependency made ready first. */
import { ensureDependencies } from './deps.mjs';
import { ensureServices, stopStartedServices, writeDataReadme, DATA_DIR } from './services.mjs';
import { buildConsoleIfStale, runMigrations, startProcesses } from './stack.mjs';
import path from 'node:path';

const DEMO = {
  SUPERUSER_EMAIL: 'admin@bioprocess.local',
  SUPERUSER_PASSWORD: 'Admin-Bioprocess1!',
  DEMO_EMAIL: 'scientist@demo.bioprocess.local',
  DEMO_PASSWORD: 'Demo-Bioprocess1!',
};

async function main() {
  ensureDependencies();
  writeDataReadme();
  const services = await ensureServices();
  const env = {
    SUPERUSER_EMAIL: DEMO.SUPERUSER_EMAIL,
    SUPERUSER_PASSWORD: DEMO.SUPERUSER_PASSWORD,
    DEMO_EMAIL: DEMO.DEMO_EMAIL,
    DEMO_PASSWORD: DEMO.DEMO_PASSWORD,
    SEED_DEMO: 'true',
    UPLOAD_DIR: path.join(DATA_DIR, 'uploads'),
    ...process.env,
    ...services,
  };
  const port = env.PORT ?? '8080';
  runMigrations(env);
  buildConsoleIfStale(env);
  const stack = startProcesses(env);
  const shutdown = async () => {
    await stack.stop();
    stopStartedServices();
    process.exit(0);
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
  process.stdout.write([
    '',
    `  Bioprocess platform: http://localhost:${port}`,
    `  Demo sign-in (admin of the demo organisation): ${env.DEMO_EMAIL} / ${env.DEMO_PASSWORD}`,
    `  Superuser: ${env.SUPERUSER_EMAIL} / ${env.SUPERUSER_PASSWORD}`,
    '  Stop with Ctrl-C.',
    '',
  ].join('\n') + '\n');
  const code = await stack.exited;
  stopStartedServices();
  process.exit(code);
}

main().catch((error) => {
  process.stderr.write(`npm start failed: ${error.message}\n`);
  stopStartedServices();
  process.exit(1);
});

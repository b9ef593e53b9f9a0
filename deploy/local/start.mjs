/** `npm start`: the whole product on one origin, with every dependency made ready first. */
import { ensureDependencies } from './deps.mjs';
import { ensureServices, stopStartedServices, tcpReachable, writeDataReadme, DATA_DIR } from './services.mjs';
import { buildConsoleIfStale, runMigrations, startProcesses } from './stack.mjs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';

/** `npm run dev`: the same stack plus Vite's dev server (hot reload), proxying /api to the api. */
const DEV = process.argv.includes('--dev');
let devServer = null;

const DEMO = {
  SUPERUSER_EMAIL: 'admin@bioprocess.local',
  SUPERUSER_PASSWORD: 'Admin-Bioprocess1!',
  DEMO_EMAIL: 'scientist@demo.bioprocess.local',
  DEMO_PASSWORD: 'Demo-Bioprocess1!',
};

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

let stack = null;
let stopping = false;

/**
 * Ctrl-C or SIGTERM at any moment (even while services start or the console builds) stops the
 * api and workers first, then the services this command started. A second signal stops at once.
 */
async function shutdown(code) {
  if (stopping) {
    stopStartedServices();
    process.exit(code);
  }
  stopping = true;
  process.stdout.write('\n[start] stopping\n');
  devServer?.kill('SIGTERM');
  if (stack) await stack.stop();
  stopStartedServices();
  process.exit(code);
}
process.on('SIGINT', () => void shutdown(130));
process.on('SIGTERM', () => void shutdown(143));

/** Lets pending signal handlers run (they end the process) between blocking steps. */
function signalsHandled() {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Resolves once the api answers its health route (any status: it is listening). */
async function waitUntilListening(port, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && !stopping) {
    try {
      await fetch(`http://127.0.0.1:${port}/api/v1/health`, { signal: AbortSignal.timeout(2_000) });
      return true;
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
  }
  return false;
}

/** A key kept in .data (readable by this user only), made once by `make`, so what it protects still reads after a restart. */
function keptKey(name, make) {
  const file = path.join(DATA_DIR, name);
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(DATA_DIR, { recursive: true });
  const key = make();
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  return key;
}

/** The key that encrypts integration secrets, when INTEGRATIONS_SECRET_KEY is not set. */
function integrationsSecretKey() {
  return keptKey('integrations-secret-key', () => randomBytes(32).toString('hex'));
}

/**
 * The Ed25519 key that signs the audit chain's checkpoints, when AUDIT_CHECKPOINT_KEY is not set: a
 * fresh start checkpoints its trail like a deployment does (an auditor verifies with the public key in
 * each checkpoint file; a deployment keeps its key outside the machine).
 */
function auditCheckpointKey() {
  return keptKey('audit-checkpoint-key.pem', () => generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString().trim());
}

async function main() {
  ensureDependencies();
  writeDataReadme();
  const port = process.env.PORT || '8080';
  if (await tcpReachable('127.0.0.1', Number(port))) {
    throw new Error(`port ${port} is already in use (another npm start?). Stop that process or choose another port: PORT=8090 npm start`);
  }
  const services = await ensureServices();
  // Only this machine can reach the api unless HOST says otherwise. The published demo passwords are
  // a convenience on loopback; on a network address the api generates the superuser's password (and
  // refuses the published ones), and the demo accounts need a DEMO_PASSWORD of your own.
  const host = process.env.HOST || '127.0.0.1';
  const onLoopback = LOOPBACK_HOSTS.has(host) || host.startsWith('127.');
  const env = {
    HOST: host,
    SUPERUSER_EMAIL: DEMO.SUPERUSER_EMAIL,
    ...(onLoopback ? { SUPERUSER_PASSWORD: DEMO.SUPERUSER_PASSWORD, DEMO_PASSWORD: DEMO.DEMO_PASSWORD } : {}),
    DEMO_EMAIL: DEMO.DEMO_EMAIL,
    SEED_DEMO: 'true',
    DEMO_INTEGRATIONS: 'true',
    // Mail stays in the dev outbox (readable by the superuser) unless an SMTP server is configured.
    ...(process.env.SMTP_URL ? {} : { DEV_OUTBOX: 'true' }),
    UPLOAD_DIR: path.join(DATA_DIR, 'uploads'),
    EXPORT_DIR: path.join(DATA_DIR, 'exports'),
    INTEGRATIONS_SECRET_KEY: process.env.INTEGRATIONS_SECRET_KEY || integrationsSecretKey(),
    AUDIT_CHECKPOINT_KEY: process.env.AUDIT_CHECKPOINT_KEY || auditCheckpointKey(),
    CONNECTOR_API_URL: `http://127.0.0.1:${port}`,
    CONNECTOR_DATA_DIR: path.join(DATA_DIR, 'connector'),
    ...process.env,
    ...services,
  };
  // The steps below block the event loop; a signal received meanwhile is handled at these points.
  await signalsHandled();
  runMigrations(env);
  await signalsHandled();
  if (!DEV) buildConsoleIfStale(env);
  await signalsHandled();
  stack = startProcesses(env);
  const ready = await Promise.race([waitUntilListening(port, 120_000), stack.exited.then(() => false)]);
  if (ready && DEV) {
    devServer = spawn('npm', ['run', 'dev', '-w', 'console'], { stdio: 'inherit', env: { ...env, CONSOLE_API_URL: `http://127.0.0.1:${port}` } });
  }
  if (ready) {
    const consoleUrl = DEV ? `http://localhost:${process.env.CONSOLE_DEV_PORT ?? 5173} (hot reload; api on ${port})` : `http://localhost:${port}`;
    process.stdout.write([
      '',
      `  Bioprocess platform: ${consoleUrl}`,
      `  Demo sign-in (admin of the demo organisation): ${env.DEMO_EMAIL} / ${env.DEMO_PASSWORD ?? '(your DEMO_PASSWORD)'}`,
      `  Superuser: ${env.SUPERUSER_EMAIL} / ${env.SUPERUSER_PASSWORD ?? '(generated at the first start and printed once above)'}`,
      '  Stop with Ctrl-C.',
      '',
    ].join('\n') + '\n');
  } else if (!stopping) {
    process.stderr.write(`[start] the api did not start listening on port ${port}; see its log above\n`);
  }
  const code = await stack.exited;
  devServer?.kill('SIGTERM');
  stopStartedServices();
  process.exit(code);
}

main().catch((error) => {
  process.stderr.write(`npm start failed: ${error.message}\n`);
  void shutdown(1);
});

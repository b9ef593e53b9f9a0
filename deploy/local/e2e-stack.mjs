/**
 * The product as the end-to-end tests see it: a private PostgreSQL database, ClickHouse database and
 * queue prefix (never the demo data), the demo organisation seeded into them, on E2E_PORT. Dropped
 * again when Playwright stops this process. It runs as it ships: the console built, the server
 * compiled to JavaScript and run with plain node, as in the images.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createClient } from '@clickhouse/client';
import { buildConsoleIfStale, buildServer, runMigrations, startProcesses } from './stack.mjs';

const id = randomBytes(4).toString('hex');
const database = new URL(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
database.pathname = `/bp_e2e_${id}`;
const env = {
  ...process.env,
  NODE_ENV: 'test',
  PORT: process.env.E2E_PORT ?? '8181',
  HOST: '127.0.0.1',
  PUBLIC_URL: `http://127.0.0.1:${process.env.E2E_PORT ?? '8181'}`,
  DATABASE_URL: database.toString(),
  CLICKHOUSE_DATABASE: `bp_e2e_${id}`,
  QUEUE_PREFIX: `bp-e2e-${id}`,
  UPLOAD_DIR: mkdtempSync(path.join(os.tmpdir(), 'bp-e2e-uploads-')),
  EXPORT_DIR: mkdtempSync(path.join(os.tmpdir(), 'bp-e2e-exports-')),
  // Small, so the export walk meets both paths: a whole test unit operation (578 points) becomes an
  // export job, one instrument of it (289) streams.
  EXPORT_STREAM_MAX_POINTS: process.env.EXPORT_STREAM_MAX_POINTS ?? '500',
  SEED_DEMO: 'true',
  // Integrations: a key for the connections' secrets, and the connector posting to this stack's api
  // with a store-and-forward folder of its own.
  INTEGRATIONS_SECRET_KEY: randomBytes(32).toString('hex'),
  // The audit trail is checkpointed as on a deployment, with a key of this run's own.
  AUDIT_CHECKPOINT_KEY: generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  CONNECTOR_API_URL: `http://127.0.0.1:${process.env.E2E_PORT ?? '8181'}`,
  CONNECTOR_DATA_DIR: mkdtempSync(path.join(os.tmpdir(), 'bp-e2e-connector-')),
  // The demo OPC UA server and MQTT publisher, on a port and topics of this stack's own.
  DEMO_INTEGRATIONS: 'true',
  DEMO_OPCUA_PORT: process.env.DEMO_OPCUA_PORT ?? String(40000 + Number(process.env.E2E_PORT ?? '8181')),
  DEMO_MQTT_TOPIC_ROOT: `bp-e2e-${id}`,
  DEMO_SPARKPLUG_GROUP: `bp-e2e-${id}`,
  SUPERUSER_EMAIL: 'admin@bioprocess.local',
  SUPERUSER_PASSWORD: 'Admin-Bioprocess1!',
  DEMO_EMAIL: 'scientist@demo.bioprocess.local',
  DEMO_PASSWORD: 'Demo-Bioprocess1!',
  // Keeps the lockout test from waiting 15 minutes while keeping the 5-attempt threshold.
  LOGIN_WINDOW_MINUTES: process.env.LOGIN_WINDOW_MINUTES ?? '15',
  // The tests read invitation and reset links from the dev outbox (as the superuser).
  DEV_OUTBOX: 'true',
  // Every test signs in and up from 127.0.0.1, far more often than people behind one address.
  RATE_LIMIT_SIGN_IN_PER_ADDRESS: process.env.RATE_LIMIT_SIGN_IN_PER_ADDRESS ?? '100000',
  RATE_LIMIT_SIGNUP_PER_ADDRESS: process.env.RATE_LIMIT_SIGNUP_PER_ADDRESS ?? '100000',
  RATE_LIMIT_PASSWORD_RESET_PER_ADDRESS: process.env.RATE_LIMIT_PASSWORD_RESET_PER_ADDRESS ?? '100000',
  RATE_LIMIT_BAD_TOKENS_PER_ADDRESS: process.env.RATE_LIMIT_BAD_TOKENS_PER_ADDRESS ?? '100000',
  UPLOAD_RATE_LIMIT_PER_MINUTE: process.env.UPLOAD_RATE_LIMIT_PER_MINUTE ?? '1000',
  LOG_LEVEL: process.env.E2E_LOG_LEVEL ?? 'warn',
};

/** Drops this run's databases and uploads; through the drivers, as psql may not be installed. */
async function dropDatabases() {
  const admin = new URL(env.DATABASE_URL);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  const clickhouse = createClient({ url: env.CLICKHOUSE_URL ?? 'http://127.0.0.1:8123', request_timeout: 30_000 });
  await Promise.allSettled([
    client.connect()
      .then(() => client.query(`DROP DATABASE IF EXISTS "bp_e2e_${id}" WITH (FORCE)`))
      .finally(() => client.end()),
    clickhouse.command({ query: `DROP DATABASE IF EXISTS bp_e2e_${id}` }).finally(() => clickhouse.close()),
  ]);
  rmSync(env.UPLOAD_DIR, { recursive: true, force: true });
  rmSync(env.EXPORT_DIR, { recursive: true, force: true });
  rmSync(env.CONNECTOR_DATA_DIR, { recursive: true, force: true });
}

let stack = null;
let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  if (stack) await stack.stop();
  await dropDatabases();
  process.exit(0);
};
// Registered first: Playwright may stop this process while migrations or the console build run.
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
const signalsHandled = () => new Promise((resolve) => setImmediate(resolve));

buildServer(env);
await signalsHandled();
runMigrations(env, { compiled: true });
await signalsHandled();
buildConsoleIfStale(env);
await signalsHandled();
if (!stopping) {
  stack = startProcesses(env, { compiled: true });
  const code = await stack.exited;
  await dropDatabases();
  process.exit(code);
}

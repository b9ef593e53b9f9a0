/**
 * Per-test-file isolation against the real services: a fresh PostgreSQL database, a fresh ClickHouse
 * database and a private BullMQ prefix, migrated and dropped again in close().
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import type { DestinationStream } from 'pino';
import type { App } from '../../src/platform/app-type.ts';
import { apiEnvSchema, parseEnv, type ApiEnv } from '@bioprocess/shared/server/config';
import { createLogger } from '@bioprocess/shared/server/logger';
import { createClickHouseAdmin } from '@bioprocess/shared/server/clickhouse';
import type { Role } from '@bioprocess/shared/enums';
import { buildApp } from '../../src/app.ts';
import { migrateAll } from '../../src/db/migrate.ts';
import { closeDeps, createDeps, type AppDeps } from '../../src/platform/deps.ts';
import { hashToken, SESSION_TOKEN_PREFIX } from '../../src/auth/principal.ts';

export interface TestUser {
  id: number;
  email: string;
  name: string;
  organizationId: number;
  role: Role;
  superuser: boolean;
  token: string;
}

export interface TestContext {
  env: ApiEnv;
  deps: AppDeps;
  app: App;
  /** app.inject with an optional bearer token; JSON bodies pass through `payload`. */
  request(options: InjectOptions & { token?: string }): Promise<LightMyRequestResponse>;
  createOrganization(name?: string): Promise<number>;
  createUser(options: { organizationId: number; role?: Role; superuser?: boolean; email?: string; password?: string }): Promise<TestUser>;
  close(): Promise<void>;
}

function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${database}`;
  return parsed.toString();
}

export function testEnv(overrides: Record<string, string> = {}): ApiEnv {
  const id = randomBytes(5).toString('hex');
  const uploadDir = mkdtempSync(path.join(os.tmpdir(), `bp-uploads-${id}-`));
  const exportDir = mkdtempSync(path.join(os.tmpdir(), `bp-exports-${id}-`));
  return parseEnv(apiEnvSchema, {
    ...process.env,
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    DATABASE_URL: withDatabase(process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres', `bp_test_${id}`),
    CLICKHOUSE_DATABASE: `bp_test_${id}`,
    QUEUE_PREFIX: `bp-test-${id}`,
    UPLOAD_DIR: uploadDir,
    EXPORT_DIR: exportDir,
    SEED_DEMO: 'false',
    // Suites sign in and sign up far more often than a person; the security tests set their own limits.
    RATE_LIMIT_SIGN_IN_PER_ADDRESS: '100000',
    RATE_LIMIT_SIGNUP_PER_ADDRESS: '100000',
    RATE_LIMIT_PASSWORD_RESET_PER_ADDRESS: '100000',
    RATE_LIMIT_BAD_TOKENS_PER_ADDRESS: '100000',
    FORGOT_PASSWORD_MAILS_PER_HOUR: '100',
    ...overrides,
  });
}

export async function dropTestDatabases(env: ApiEnv): Promise<void> {
  const admin = new URL(env.DATABASE_URL);
  const database = admin.pathname.slice(1);
  admin.pathname = '/postgres';
  const client = new pg.Client({ connectionString: admin.toString() });
  await client.connect();
  await client.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`).finally(() => client.end());
  const clickhouse = createClickHouseAdmin(env.CLICKHOUSE_URL);
  // On a cluster (CLICKHOUSE_CLUSTER) from every server, with the replicated tables' ZooKeeper entries.
  const onCluster = env.CLICKHOUSE_CLUSTER ? ` ON CLUSTER ${env.CLICKHOUSE_CLUSTER}` : '';
  await clickhouse.command({ query: `DROP DATABASE IF EXISTS ${env.CLICKHOUSE_DATABASE}${onCluster}` }).finally(() => clickhouse.close());
  rmSync(env.UPLOAD_DIR, { recursive: true, force: true });
  rmSync(env.EXPORT_DIR, { recursive: true, force: true });
}

let userCounter = 0;

export interface TestContextOptions {
  /** Receives the api's log lines (at LOG_LEVEL) instead of stdout. */
  logDestination?: DestinationStream;
}

export async function createTestContext(overrides: Record<string, string> = {}, options: TestContextOptions = {}): Promise<TestContext> {
  const env = testEnv(overrides);
  const logger = createLogger('test', env.LOG_LEVEL, options.logDestination);
  await migrateAll(env, logger);
  const deps = createDeps(env, logger);
  const app = await buildApp(deps);
  await app.ready();

  const context: TestContext = {
    env,
    deps,
    app,
    request({ token, headers, ...options }) {
      return app.inject({
        ...options,
        headers: { ...(headers ?? {}), ...(token ? { authorization: `Bearer ${token}` } : {}) },
      });
    },
    async createOrganization(name = `Org ${randomBytes(3).toString('hex')}`) {
      const { rows } = await deps.pg.query('INSERT INTO organizations (name) VALUES ($1) RETURNING id', [name]);
      return rows[0].id as number;
    },
    async createUser({ organizationId, role = 'admin', superuser = false, email, password }) {
      userCounter += 1;
      const address = email ?? `user${userCounter}-${randomBytes(3).toString('hex')}@example.test`;
      let passwordHash: string | null = null;
      if (password) {
        const argon2 = await import('argon2');
        passwordHash = await argon2.hash(password, { type: argon2.argon2id });
      }
      const { rows } = await deps.pg.query(
        `INSERT INTO users (email, name, password_hash, organization_id, role, superuser)
         VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
        [address, `Test ${role}`, passwordHash, organizationId, role, superuser],
      );
      const token = `${SESSION_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
      await deps.pg.query(
        `INSERT INTO sessions (token_hash, user_id, expires_at) VALUES ($1, $2, now() + interval '1 hour')`,
        [hashToken(token), rows[0].id],
      );
      return { id: rows[0].id, email: address, name: `Test ${role}`, organizationId, role, superuser, token };
    },
    async close() {
      await app.close();
      await Promise.allSettled(Object.values(deps.queues).map((queue) => queue.obliterate({ force: true })));
      await closeDeps(deps);
      await dropTestDatabases(env);
    },
  };
  return context;
}

/**
 * Account takeover through the dev outbox: forgot-password for any address, read the link from the
 * public outbox, set a new password. And the superuser of a networked server signing in with the
 * password published in this repository.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUTH_MESSAGES } from '@bioprocess/shared/errors';
import { apiEnvSchema, ConfigError, parseEnv } from '@bioprocess/shared/server/config';
import { createTestContext, dropTestDatabases, testEnv, type TestContext } from '../support/test-context.ts';
import { ensureSuperuser, PublishedPasswordError } from '../../src/auth/superuser-bootstrap.ts';
import { migrateAll } from '../../src/db/migrate.ts';
import { createLogger } from '@bioprocess/shared/server/logger';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const PUBLISHED_SUPERUSER_PASSWORD = 'Admin-Bioprocess1!';

async function takeOver(ctx: TestContext, email: string): Promise<number[]> {
  await ctx.request({ method: 'POST', url: '/api/v1/auth/forgot-password', payload: { email } });
  const outbox = await ctx.request({ method: 'GET', url: `/api/v1/dev/outbox?email=${encodeURIComponent(email)}` });
  return [outbox.statusCode];
}

describe('the dev outbox', () => {
  let withoutSwitch: TestContext;
  let withSwitch: TestContext;
  beforeAll(async () => {
    // No SMTP server and no switch: the outbox does not exist, as under a plain production-like start.
    withoutSwitch = await createTestContext({ NODE_ENV: 'development' });
    withSwitch = await createTestContext({ NODE_ENV: 'development', DEV_OUTBOX: 'true' });
  });
  afterAll(async () => { await Promise.all([withoutSwitch.close(), withSwitch.close()]); });

  it('does not exist unless DEV_OUTBOX is switched on, even without an SMTP server', async () => {
    const organizationId = await withoutSwitch.createOrganization();
    const victim = await withoutSwitch.createUser({ organizationId, role: 'admin', password: 'Victim-Pass1!' });
    expect(await takeOver(withoutSwitch, victim.email)).toEqual([404]);
    const { rows } = await withoutSwitch.deps.pg.query('SELECT count(*)::int AS n FROM dev_outbox');
    expect(rows[0].n).toBe(0);
  });

  it('answers only a superuser when switched on: anonymous callers and organisation admins cannot read links', async () => {
    const organizationId = await withSwitch.createOrganization();
    const victim = await withSwitch.createUser({ organizationId, role: 'admin', password: 'Victim-Pass1!', superuser: true });
    const admin = await withSwitch.createUser({ organizationId, role: 'admin' });
    expect(await takeOver(withSwitch, victim.email)).toEqual([401]);
    const asAdmin = await withSwitch.request({ method: 'GET', url: `/api/v1/dev/outbox?email=${encodeURIComponent(victim.email)}`, token: admin.token });
    expect(asAdmin.statusCode).toBe(403);
    expect(asAdmin.json()).toEqual({ error: AUTH_MESSAGES.forbidden });
    const asSuperuser = await withSwitch.request({ method: 'GET', url: `/api/v1/dev/outbox?email=${encodeURIComponent(victim.email)}`, token: victim.token });
    expect(asSuperuser.statusCode).toBe(200);
    expect(asSuperuser.json()[0].link).toContain('/reset-password?token=');
  });

  it('refuses to be on under NODE_ENV=production, and the api does not start with it', async () => {
    expect(() => parseEnv(apiEnvSchema, { NODE_ENV: 'production', DEV_OUTBOX: 'true' })).toThrow(ConfigError);
    expect(() => parseEnv(apiEnvSchema, { NODE_ENV: 'production', DEV_OUTBOX: 'true' })).toThrow(/DEV_OUTBOX/);
    const started = await runApi({ NODE_ENV: 'production', DEV_OUTBOX: 'true' });
    expect(started.code).toBe(78);
    expect(started.output).toContain('DEV_OUTBOX');
  });
});

/** Starts the real api process (api/src/main.ts) and answers how it ended and what it printed. */
function runApi(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(ROOT, 'api/src/main.ts')], {
      cwd: ROOT, env: { ...process.env, LOG_LEVEL: 'info', ...env }, stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => { output += String(chunk); });
    child.stderr.on('data', (chunk) => { output += String(chunk); });
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`the api kept running:\n${output}`)); }, 60_000);
    child.once('exit', (code) => { clearTimeout(timer); resolve({ code, output }); });
  });
}

describe('the superuser password of a server reachable from the network', () => {
  const networked = testEnv({ HOST: '0.0.0.0', PORT: '1', SUPERUSER_EMAIL: 'root@example.test' });
  beforeAll(async () => { await migrateAll(networked, createLogger('test', 'silent')); });
  afterAll(async () => { await dropTestDatabases(networked); });

  const processEnv = (overrides: Record<string, string>) => ({
    DATABASE_URL: networked.DATABASE_URL, CLICKHOUSE_DATABASE: networked.CLICKHOUSE_DATABASE, QUEUE_PREFIX: networked.QUEUE_PREFIX,
    UPLOAD_DIR: networked.UPLOAD_DIR, HOST: '0.0.0.0', SUPERUSER_EMAIL: 'root@example.test', SEED_DEMO: 'false', ...overrides,
  });

  it('does not start on 0.0.0.0 with the published superuser password', async () => {
    const started = await runApi(processEnv({ SUPERUSER_PASSWORD: PUBLISHED_SUPERUSER_PASSWORD, PORT: process.env.E2E_PORT ?? '8201' }));
    expect(started.code).toBe(78);
    expect(started.output).toContain('published demo password');
    const client = new pg.Client({ connectionString: networked.DATABASE_URL });
    await client.connect();
    try {
      const { rows } = await client.query(`SELECT count(*)::int AS n FROM users WHERE email = 'root@example.test'`);
      expect(rows[0].n).toBe(0);
    } finally {
      await client.end();
    }
  });

  it('generates a password on first start, stores only its hash, shows it once, and refuses a superuser left with a published one', async () => {
    const ctx = await createTestContext({ HOST: '0.0.0.0', SUPERUSER_EMAIL: 'root@example.test' });
    try {
      const shown: string[] = [];
      await ensureSuperuser(ctx.deps, { announce: (_email, password) => shown.push(password) });
      await ensureSuperuser(ctx.deps, { announce: (_email, password) => shown.push(password) });
      expect(shown).toHaveLength(1);
      const { rows } = await ctx.deps.pg.query(`SELECT password_hash FROM users WHERE email = 'root@example.test'`);
      expect(rows[0].password_hash).toMatch(/^\$argon2id\$/);
      expect(rows[0].password_hash).not.toContain(shown[0]);
      const login = await ctx.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'root@example.test', password: shown[0] } });
      expect(login.statusCode).toBe(200);
      expect(login.json().user.superuser).toBe(true);

      // A database first served on loopback with the demo password, then put on the network.
      const organizationId = await ctx.createOrganization();
      await ctx.createUser({ organizationId, role: 'admin', superuser: true, email: 'demo-root@example.test', password: PUBLISHED_SUPERUSER_PASSWORD });
      await expect(ensureSuperuser(ctx.deps)).rejects.toThrow(PublishedPasswordError);
      // On loopback the demo password stays a convenience.
      await expect(ensureSuperuser({ ...ctx.deps, env: { ...ctx.env, HOST: '127.0.0.1', SUPERUSER_PASSWORD: PUBLISHED_SUPERUSER_PASSWORD } })).resolves.toBeUndefined();
    } finally {
      await ctx.close();
    }
  });
});

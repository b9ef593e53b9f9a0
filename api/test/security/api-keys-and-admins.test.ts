/**
 * API keys as a way into administration: a key with the admin role minted more keys (with no
 * recorded creator), invited users, read the audit log and deleted every admin; keys never expired.
 * Keys are now for feeds only, and no one can remove an organisation's last admin.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { readdirSync } from 'node:fs';
import pg from 'pg';
import { runner } from 'node-pg-migrate';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_KEY_ROLE_MESSAGE } from '@bioprocess/shared/auth-contracts';
import { AUTH_MESSAGES } from '@bioprocess/shared/errors';
import { createTestContext, dropTestDatabases, testEnv, type TestContext, type TestUser } from '../support/test-context.ts';
import { waitFor } from '../support/audit-drain.ts';
import { ensurePostgresDatabase, migratePostgres } from '../../src/db/migrate.ts';
import { API_KEY_NOT_ALLOWED_MESSAGE } from '../../src/auth/authenticate.ts';
import { USER_MESSAGES } from '../../src/users/routes.ts';
import { createLogger } from '@bioprocess/shared/server/logger';

const POSTGRES_MIGRATIONS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../migrations/postgres');

describe('API keys are for feeds, and an organisation keeps an admin', () => {
  let ctx: TestContext;
  let organizationId: number;
  let admin: TestUser;
  beforeAll(async () => {
    ctx = await createTestContext();
    organizationId = await ctx.createOrganization('Keyed');
    admin = await ctx.createUser({ organizationId, role: 'admin' });
  });
  afterAll(async () => { await ctx.close(); });

  const createKey = (token: string, payload: Record<string, unknown>) => ctx.request({ method: 'POST', url: '/api/v1/api-keys', token, payload });

  it('refuses to create a key with the admin role', async () => {
    const response = await createKey(admin.token, { name: 'Escalation', role: 'admin' });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ error: `role: ${API_KEY_ROLE_MESSAGE}` });
    const { rows } = await ctx.deps.pg.query(`SELECT count(*)::int AS n FROM api_keys WHERE name = 'Escalation'`);
    expect(rows[0].n).toBe(0);
  });

  it('keeps keys out of key, user, organisation and audit administration, and records who made each key', async () => {
    const created = await createKey(admin.token, { name: 'Feed', role: 'editor' });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({ role: 'editor', created_by: admin.id, expires_at: null });
    const key = created.json().key as string;
    const attempts = [
      { method: 'GET', url: '/api/v1/api-keys' },
      { method: 'POST', url: '/api/v1/api-keys', payload: { name: 'Minted by a key' } },
      { method: 'DELETE', url: `/api/v1/api-keys/${created.json().id}` },
      { method: 'GET', url: '/api/v1/auth/users' },
      { method: 'POST', url: '/api/v1/auth/users/invite', payload: { email: 'planted@example.test', name: 'Planted', roleName: 'admin' } },
      { method: 'DELETE', url: `/api/v1/auth/users/${admin.id}` },
      { method: 'GET', url: '/api/v1/audit/logs' },
      { method: 'GET', url: '/api/v1/audit/logs/export' },
      { method: 'GET', url: '/api/v1/organizations' },
    ] as const;
    for (const attempt of attempts) {
      const response = await ctx.request({ ...attempt, token: key });
      expect(response.statusCode, `${attempt.method} ${attempt.url}`).toBe(403);
      expect(response.json()).toEqual({ error: API_KEY_NOT_ALLOWED_MESSAGE });
    }
    // The key still does what feeds do.
    expect((await ctx.request({ method: 'GET', url: `/api/v1/organizations/${organizationId}`, token: key })).statusCode).toBe(200);
  });

  it('refuses an expired key with 401, and a past expiry at creation with 400', async () => {
    const expiresAt = new Date(Date.now() + 60 * 60_000).toISOString();
    const created = await createKey(admin.token, { name: 'Short-lived', role: 'viewer', expires_at: expiresAt });
    expect(created.statusCode).toBe(201);
    expect(created.json().expires_at).toBe(expiresAt);
    const key = created.json().key as string;
    const read = () => ctx.request({ method: 'GET', url: `/api/v1/organizations/${organizationId}`, token: key });
    expect((await read()).statusCode).toBe(200);
    // Changed in the database, not through the api: refused once the change's notification arrives.
    await ctx.deps.pg.query(`UPDATE api_keys SET expires_at = now() - interval '1 second' WHERE id = $1`, [created.json().id]);
    const expired = await waitFor(async () => { const response = await read(); return response.statusCode === 401 && response; }, 'the expired key refused', 5_000);
    expect(expired.json()).toEqual({ error: AUTH_MESSAGES.authenticationRequired });

    const past = await createKey(admin.token, { name: 'Born dead', expires_at: '2001-01-01T00:00:00Z' });
    expect(past.statusCode).toBe(400);
  });

  it('never deletes or demotes the last admin of an organisation, not even as a superuser', async () => {
    const lonelyOrganization = await ctx.createOrganization('One admin');
    const lonelyAdmin = await ctx.createUser({ organizationId: lonelyOrganization, role: 'admin' });
    const superuser = await ctx.createUser({ organizationId, role: 'admin', superuser: true });
    const deleted = await ctx.request({ method: 'DELETE', url: `/api/v1/auth/users/${lonelyAdmin.id}`, token: superuser.token });
    expect(deleted.statusCode).toBe(409);
    expect(deleted.json()).toEqual({ error: USER_MESSAGES.lastAdmin });
    const demoted = await ctx.request({ method: 'POST', url: `/api/v1/auth/users/${lonelyAdmin.id}/roles`, token: superuser.token, payload: { roleName: 'viewer' } });
    expect(demoted.statusCode).toBe(409);

    // Both admins of an organisation deleted at once: one deletion succeeds, the other is refused.
    const pairOrganization = await ctx.createOrganization('Two admins');
    const first = await ctx.createUser({ organizationId: pairOrganization, role: 'admin' });
    const second = await ctx.createUser({ organizationId: pairOrganization, role: 'admin' });
    const answers = await Promise.all([first, second].map((user) =>
      ctx.request({ method: 'DELETE', url: `/api/v1/auth/users/${user.id}`, token: superuser.token })));
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([204, 409]);
    const { rows } = await ctx.deps.pg.query(`SELECT count(*)::int AS admins FROM users WHERE organization_id = $1 AND role = 'admin'`, [pairOrganization]);
    expect(rows[0].admins).toBe(1);
  });
});

describe('the migration that takes the admin role from existing API keys', () => {
  const env = testEnv();
  afterAll(async () => { await dropTestDatabases(env); });

  it('demotes admin keys to editor and keeps other keys as they were', async () => {
    const files = readdirSync(POSTGRES_MIGRATIONS).filter((file) => file.endsWith('.sql')).sort();
    const before = files.findIndex((file) => file.startsWith('3110_'));
    expect(before).toBeGreaterThan(0);
    await ensurePostgresDatabase(env.DATABASE_URL);
    // Migrated up to the migration, as a database of the previous release would be.
    const client = new pg.Client({ connectionString: env.DATABASE_URL });
    await client.connect();
    try {
      await runner({ databaseUrl: env.DATABASE_URL, dir: POSTGRES_MIGRATIONS, migrationsTable: 'pgmigrations', direction: 'up', count: before, checkOrder: true, log: () => undefined });
      const org = await client.query(`INSERT INTO organizations (name) VALUES ('Old release') RETURNING id`);
      await client.query(
        `INSERT INTO api_keys (organization_id, name, key_hash, key_prefix, role) VALUES
           ($1, 'old admin key', 'hash-a', 'bpk_a', 'admin'), ($1, 'old viewer key', 'hash-v', 'bpk_v', 'viewer')`,
        [org.rows[0].id],
      );
      await migratePostgres(env.DATABASE_URL, createLogger('test', 'silent'));
      const { rows } = await client.query('SELECT name, role FROM api_keys ORDER BY name');
      expect(rows).toEqual([{ name: 'old admin key', role: 'editor' }, { name: 'old viewer key', role: 'viewer' }]);
      await expect(client.query(`UPDATE api_keys SET role = 'admin'`)).rejects.toThrow(/api_keys_role_check/);
    } finally {
      await client.end();
    }
  });
});

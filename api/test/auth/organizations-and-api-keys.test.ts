import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUTH_MESSAGES } from '@bioprocess/shared/errors';
import { ORGANIZATION_NAME_REQUIRED_MESSAGE } from '@bioprocess/shared/auth-contracts';
import { createTestContext, type TestContext, type TestUser } from '../support/test-context.ts';
import { ORGANIZATION_MESSAGES } from '../../src/organizations/routes.ts';
import { hashToken } from '../../src/auth/principal.ts';

describe('organisations', () => {
  let ctx: TestContext;
  let orgA: number;
  let orgB: number;
  let viewerA: TestUser;
  let adminA: TestUser;
  let superuser: TestUser;

  beforeAll(async () => {
    ctx = await createTestContext();
    orgA = await ctx.createOrganization('Org A');
    orgB = await ctx.createOrganization('Org B');
    viewerA = await ctx.createUser({ organizationId: orgA, role: 'viewer' });
    adminA = await ctx.createUser({ organizationId: orgA, role: 'admin' });
    superuser = await ctx.createUser({ organizationId: orgA, role: 'admin', superuser: true });
  });
  afterAll(async () => { await ctx.close(); });

  it('lets any member read their own organisation and nobody but a superuser read another', async () => {
    const own = await ctx.request({ method: 'GET', url: `/api/v1/organizations/${orgA}`, token: viewerA.token });
    expect(own.statusCode).toBe(200);
    expect(own.json()).toMatchObject({ id: orgA, name: 'Org A', description: null, user_count: 3 });
    const other = await ctx.request({ method: 'GET', url: `/api/v1/organizations/${orgB}`, token: adminA.token });
    expect(other.statusCode).toBe(404);
    expect(other.json()).toEqual({ error: ORGANIZATION_MESSAGES.notFound });
    const bySuper = await ctx.request({ method: 'GET', url: `/api/v1/organizations/${orgB}`, token: superuser.token });
    expect(bySuper.statusCode).toBe(200);
    const badId = await ctx.request({ method: 'GET', url: '/api/v1/organizations/abc', token: superuser.token });
    expect(badId.statusCode).toBe(400);
  });

  it('lists, creates, updates and deletes organisations for superusers only', async () => {
    expect((await ctx.request({ method: 'GET', url: '/api/v1/organizations', token: adminA.token })).statusCode).toBe(403);
    const list = await ctx.request({ method: 'GET', url: '/api/v1/organizations', token: superuser.token });
    expect(list.statusCode).toBe(200);
    expect(list.json().map((org: { name: string; user_count: number }) => [org.name, org.user_count])).toEqual([['Org A', 3], ['Org B', 0]]);

    const noName = await ctx.request({ method: 'POST', url: '/api/v1/organizations', token: superuser.token, payload: { name: '  ', description: '' } });
    expect(noName.statusCode).toBe(400);
    expect(noName.json()).toEqual({ error: `name: ${ORGANIZATION_NAME_REQUIRED_MESSAGE}` });
    const forbidden = await ctx.request({ method: 'POST', url: '/api/v1/organizations', token: adminA.token, payload: { name: 'Nope' } });
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json()).toEqual({ error: AUTH_MESSAGES.forbidden });

    const created = await ctx.request({ method: 'POST', url: '/api/v1/organizations', token: superuser.token, payload: { name: 'Org C', description: '' } });
    expect(created.statusCode).toBe(201);
    expect(created.json()).toMatchObject({ name: 'Org C', description: null, user_count: 0 });
    const id = created.json().id as number;

    const updated = await ctx.request({ method: 'PUT', url: `/api/v1/organizations/${id}`, token: superuser.token, payload: { name: 'Org C2', description: 'Pilot plant partner' } });
    expect(updated.statusCode).toBe(200);
    expect(updated.json()).toMatchObject({ id, name: 'Org C2', description: 'Pilot plant partner' });
    const missing = await ctx.request({ method: 'PUT', url: '/api/v1/organizations/987654', token: superuser.token, payload: { name: 'X' } });
    expect(missing.statusCode).toBe(404);

    const current = await ctx.request({ method: 'DELETE', url: `/api/v1/organizations/${orgA}`, token: superuser.token });
    expect(current.statusCode).toBe(409);
    expect(current.json()).toEqual({ error: ORGANIZATION_MESSAGES.deleteCurrent });

    await ctx.createUser({ organizationId: id, role: 'editor' });
    const deleted = await ctx.request({ method: 'DELETE', url: `/api/v1/organizations/${id}`, token: superuser.token });
    expect(deleted.statusCode).toBe(204);
    const { rowCount } = await ctx.deps.pg.query('SELECT 1 FROM users WHERE organization_id = $1', [id]);
    expect(rowCount).toBe(0);
    expect((await ctx.request({ method: 'DELETE', url: `/api/v1/organizations/${id}`, token: superuser.token })).statusCode).toBe(404);
  });

  it('deletes an organisation together with its facilities, equipment and instruments', async () => {
    const id = (await ctx.request({ method: 'POST', url: '/api/v1/organizations', token: superuser.token, payload: { name: 'With data' } })).json().id as number;
    const facility = await ctx.deps.pg.query(`INSERT INTO facilities (organization_id, name, type) VALUES ($1, 'Lab', 'lab') RETURNING id`, [id]);
    const equipment = await ctx.deps.pg.query(`INSERT INTO equipment (organization_id, facility_id, name, type) VALUES ($1, $2, 'F1', 'fermenter') RETURNING id`, [id, facility.rows[0].id]);
    await ctx.deps.pg.query(`INSERT INTO instruments (organization_id, equipment_id, name, type) VALUES ($1, $2, 'T', 'temperature')`, [id, equipment.rows[0].id]);
    const run = await ctx.deps.pg.query(`INSERT INTO runs (organization_id, facility_id, name, target) VALUES ($1, $2, 'R1', 'protein') RETURNING id`, [id, facility.rows[0].id]);
    await ctx.deps.pg.query(`INSERT INTO unit_operations (organization_id, run_id, type, equipment_id) VALUES ($1, $2, 'fermentation', $3)`, [id, run.rows[0].id, equipment.rows[0].id]);
    const deleted = await ctx.request({ method: 'DELETE', url: `/api/v1/organizations/${id}`, token: superuser.token });
    expect(deleted.statusCode).toBe(204);
    for (const table of ['facilities', 'equipment', 'instruments', 'runs', 'unit_operations']) {
      const { rowCount } = await ctx.deps.pg.query(`SELECT 1 FROM ${table} WHERE organization_id = $1`, [id]);
      expect(rowCount, table).toBe(0);
    }
  });
});

describe('API keys', () => {
  let ctx: TestContext;
  let orgA: number;
  let orgB: number;
  let adminA: TestUser;
  let adminB: TestUser;
  let editorA: TestUser;

  beforeAll(async () => {
    ctx = await createTestContext();
    orgA = await ctx.createOrganization('Org A');
    orgB = await ctx.createOrganization('Org B');
    adminA = await ctx.createUser({ organizationId: orgA, role: 'admin' });
    adminB = await ctx.createUser({ organizationId: orgB, role: 'admin' });
    editorA = await ctx.createUser({ organizationId: orgA, role: 'editor' });
  });
  afterAll(async () => { await ctx.close(); });

  it('creates a key shown once and stored hashed, which then authenticates with its role', async () => {
    const created = await ctx.request({ method: 'POST', url: '/api/v1/api-keys', token: adminA.token, payload: { name: 'Feed 1', role: 'viewer' } });
    expect(created.statusCode).toBe(201);
    const body = created.json();
    expect(body).toMatchObject({ name: 'Feed 1', role: 'viewer', created_by: adminA.id, last_used_at: null, revoked_at: null });
    expect(body.key).toMatch(/^bpk_[A-Za-z0-9_-]{43}$/);
    expect(body.key.startsWith(body.key_prefix)).toBe(true);
    const stored = await ctx.deps.pg.query('SELECT key_hash FROM api_keys WHERE id = $1', [body.id]);
    expect(stored.rows[0].key_hash).toBe(hashToken(body.key));

    const read = await ctx.request({ method: 'GET', url: `/api/v1/organizations/${orgA}`, token: body.key });
    expect(read.statusCode).toBe(200);
    const write = await ctx.request({ method: 'POST', url: '/api/v1/api-keys', token: body.key, payload: { name: 'escalate' } });
    expect(write.statusCode).toBe(403);

    const list = await ctx.request({ method: 'GET', url: '/api/v1/api-keys', token: adminA.token });
    expect(list.statusCode).toBe(200);
    const listed = list.json().find((key: { id: number }) => key.id === body.id);
    expect(listed).not.toHaveProperty('key');
    expect(listed.last_used_at).not.toBeNull();
  });

  it('records when a key was last used to the minute, without writing its row on every request', async () => {
    const { id, key } = (await ctx.request({ method: 'POST', url: '/api/v1/api-keys', token: adminA.token, payload: { name: 'Busy feed' } })).json();
    const lastUsed = async () => (await ctx.deps.pg.query('SELECT last_used_at, xmin::text AS row_version FROM api_keys WHERE id = $1', [id])).rows[0];
    const get = () => ctx.request({ method: 'GET', url: `/api/v1/organizations/${orgA}`, token: key });
    expect((await get()).statusCode).toBe(200);
    const first = await lastUsed();
    expect(first.last_used_at).not.toBeNull();
    for (let request = 0; request < 5; request += 1) expect((await get()).statusCode).toBe(200);
    expect(await lastUsed()).toEqual(first); // the same row version: not written again
    // A minute later (the api's entry for the key has expired too) the next request records the new use.
    await ctx.deps.pg.query("UPDATE api_keys SET last_used_at = now() - interval '2 minutes' WHERE id = $1", [id]);
    ctx.deps.accessCaches.forgetAll();
    expect((await get()).statusCode).toBe(200);
    expect(Date.now() - (await lastUsed()).last_used_at.getTime()).toBeLessThan(30_000);
  });

  it('revokes a key so it stops working at once; other organisations cannot see or revoke it', async () => {
    const { id, key } = (await ctx.request({ method: 'POST', url: '/api/v1/api-keys', token: adminA.token, payload: { name: 'Feed 2' } })).json();
    expect((await ctx.request({ method: 'GET', url: `/api/v1/organizations/${orgA}`, token: key })).statusCode).toBe(200);

    const otherList = await ctx.request({ method: 'GET', url: '/api/v1/api-keys', token: adminB.token });
    expect(otherList.json().some((row: { id: number }) => row.id === id)).toBe(false);
    const otherRevoke = await ctx.request({ method: 'DELETE', url: `/api/v1/api-keys/${id}`, token: adminB.token });
    expect(otherRevoke.statusCode).toBe(404);
    const editorRevoke = await ctx.request({ method: 'DELETE', url: `/api/v1/api-keys/${id}`, token: editorA.token });
    expect(editorRevoke.statusCode).toBe(403);

    const revoke = await ctx.request({ method: 'DELETE', url: `/api/v1/api-keys/${id}`, token: adminA.token });
    expect(revoke.statusCode).toBe(204);
    const after = await ctx.request({ method: 'GET', url: `/api/v1/organizations/${orgA}`, token: key });
    expect(after.statusCode).toBe(401);
    expect(after.json()).toEqual({ error: AUTH_MESSAGES.authenticationRequired });
    const listed = (await ctx.request({ method: 'GET', url: '/api/v1/api-keys', token: adminA.token })).json().find((row: { id: number }) => row.id === id);
    expect(listed.revoked_at).not.toBeNull();
  });

  it('validates the key name and role', async () => {
    const noName = await ctx.request({ method: 'POST', url: '/api/v1/api-keys', token: adminA.token, payload: { role: 'editor' } });
    expect(noName.statusCode).toBe(400);
    expect(noName.json()).toEqual({ error: 'name: Key name is required' });
    const badRole = await ctx.request({ method: 'POST', url: '/api/v1/api-keys', token: adminA.token, payload: { name: 'k', role: 'root' } });
    expect(badRole.statusCode).toBe(400);
  });

  it('gives API keys no user profile', async () => {
    const { key } = (await ctx.request({ method: 'POST', url: '/api/v1/api-keys', token: adminA.token, payload: { name: 'Feed 3', role: 'editor' } })).json();
    const profile = await ctx.request({ method: 'GET', url: '/api/v1/auth/profile', token: key });
    expect(profile.statusCode).toBe(403);
  });
});

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import { AUDIT_EXPORT_COLUMNS } from '@bioprocess/shared/auth-contracts';
import { createTestContext, type TestContext, type TestUser } from '../support/test-context.ts';
import { outboxCount, queuedAuditJobs, queuedEventFor, startWorkerFor, waitFor, waitForAuditRows } from '../support/audit-drain.ts';
import type { AuditWorkerHandle } from '@bioprocess/audit-worker';

const PASSWORD = 'Strong-Pass1!';

describe('audit trail: queue, worker, log and export', () => {
  let ctx: TestContext;
  let worker: AuditWorkerHandle | null = null;
  let orgA: number;
  let orgB: number;
  let adminA: TestUser;
  let adminB: TestUser;
  let viewerA: TestUser;
  let superuser: TestUser;

  beforeAll(async () => {
    ctx = await createTestContext();
    orgA = await ctx.createOrganization('Org A');
    orgB = await ctx.createOrganization('Org B');
    adminA = await ctx.createUser({ organizationId: orgA, role: 'admin' });
    adminB = await ctx.createUser({ organizationId: orgB, role: 'admin' });
    viewerA = await ctx.createUser({ organizationId: orgA, role: 'viewer' });
    superuser = await ctx.createUser({ organizationId: orgA, role: 'admin', superuser: true });
  });
  afterAll(async () => {
    await worker?.close();
    await ctx.close();
  });

  it('keeps events in the queue while no worker runs and stores each exactly once when it starts', async () => {
    const signup = await ctx.request({ method: 'POST', url: '/api/v1/auth/signup', payload: { email: 'audited@example.test', password: PASSWORD, name: 'Audited' } });
    const { token } = signup.json();
    await ctx.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'audited@example.test', password: 'Wrong-Pass1!' } });
    await ctx.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email: 'audited@example.test', password: PASSWORD } });
    await ctx.request({ method: 'PUT', url: '/api/v1/auth/profile', token, payload: { name: 'Audited Again' } });
    await ctx.request({ method: 'POST', url: '/api/v1/auth/users/invite', token, payload: { email: 'invitee@example.test', name: 'Invitee', roleName: 'editor' } });
    await ctx.request({ method: 'POST', url: '/api/v1/auth/forgot-password', payload: { email: 'audited@example.test' } });
    await ctx.request({ method: 'POST', url: '/api/v1/auth/logout', token });
    const expected = 7;

    const queued = await waitFor(async () => ((await queuedAuditJobs(ctx)) >= expected ? queuedAuditJobs(ctx) : null), 'events to be queued');
    expect(queued).toBe(expected);
    // Queued, and still in the outbox: a row leaves only once its audit row exists.
    expect(await outboxCount(ctx)).toBe(expected);
    const before = await ctx.deps.pg.query('SELECT count(*)::int AS n FROM audit_logs');
    expect(before.rows[0].n).toBe(0);

    // A replayed job (same event id, as after a crash between insert and acknowledgement) must not duplicate.
    const replayed = queuedEventFor({ event_type: 'test.replayed', action: 'create' });
    await ctx.deps.queues.audit.add('audit-event', replayed);
    await ctx.deps.queues.audit.add('audit-event', replayed);

    worker = startWorkerFor(ctx);
    await waitFor(async () => (await queuedAuditJobs(ctx)) === 0, 'the queue to drain');
    await waitFor(async () => (await outboxCount(ctx)) === 0, 'the outbox to empty');
    const { rows } = await ctx.deps.pg.query(`SELECT event_type, success, event_id FROM audit_logs WHERE event_type <> 'test.replayed' ORDER BY created_at, id`);
    expect(rows.map((row) => `${row.event_type}:${row.success}`).sort()).toEqual([
      'auth.login:false', 'auth.login:true', 'auth.logout:true', 'auth.password_reset_requested:true', 'auth.signup:true',
      'user.invited:true', 'user.profile_updated:true',
    ]);
    expect(new Set(rows.map((row) => row.event_id)).size).toBe(expected);
    const replays = await ctx.deps.pg.query(`SELECT count(*)::int AS n FROM audit_logs WHERE event_type = 'test.replayed'`);
    expect(replays.rows[0].n).toBe(1);
  });

  it('records who, where and what changed, without password hashes or tokens', async () => {
    const response = await ctx.request({ method: 'POST', url: '/api/v1/organizations', token: superuser.token, payload: { name: 'Audited Org', description: 'before' } });
    const id = response.json().id as number;
    await ctx.request({ method: 'PUT', url: `/api/v1/organizations/${id}`, token: superuser.token, payload: { name: 'Audited Org', description: 'after' } });
    const [updated] = await waitForAuditRows(ctx, `event_type = 'organization.updated' AND resource_id = $1`, [String(id)]);
    expect(updated).toMatchObject({
      action: 'update', resource_type: 'organization', success: true, user_id: superuser.id, user_email: superuser.email,
      organization_id: orgA, changes: { before: { name: 'Audited Org', description: 'before' }, after: { name: 'Audited Org', description: 'after' } },
    });
    expect(updated!.ip).toBeTruthy();

    const key = await ctx.request({ method: 'POST', url: '/api/v1/api-keys', token: adminA.token, payload: { name: 'Audited key' } });
    await waitForAuditRows(ctx, `event_type = 'api_key.created'`, []);
    const everything = await ctx.deps.pg.query('SELECT changes::text AS changes FROM audit_logs');
    const text = everything.rows.map((row) => row.changes ?? '').join('\n');
    expect(text).not.toContain('argon2');
    expect(text).not.toContain(key.json().key);
    expect(text).not.toContain(PASSWORD);
  });

  it('records failed logins and the lockout', async () => {
    for (let attempt = 0; attempt < ctx.env.LOGIN_MAX_FAILURES; attempt += 1) {
      await ctx.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email: viewerA.email, password: 'Wrong-Pass1!' } });
    }
    const failures = await waitForAuditRows(ctx, `event_type = 'auth.login' AND NOT success AND user_email = $1`, [viewerA.email], ctx.env.LOGIN_MAX_FAILURES);
    expect(failures[0]).toMatchObject({ user_id: viewerA.id, organization_id: orgA });
    const [lockout] = await waitForAuditRows(ctx, `event_type = 'auth.lockout' AND user_email = $1`, [viewerA.email]);
    expect(lockout).toMatchObject({ success: false, organization_id: orgA });
  });

  it('lists the own organisation\'s events for admins, every event for superusers, and refuses others', async () => {
    await ctx.request({ method: 'POST', url: '/api/v1/api-keys', token: adminB.token, payload: { name: 'B key' } });
    await waitForAuditRows(ctx, `event_type = 'api_key.created' AND organization_id = $1`, [orgB]);

    const own = await ctx.request({ method: 'GET', url: '/api/v1/audit/logs?limit=500', token: adminA.token });
    expect(own.statusCode).toBe(200);
    expect(own.json().length).toBeGreaterThan(0);
    expect(own.json().every((row: { organization_id: number }) => row.organization_id === orgA)).toBe(true);
    const b = await ctx.request({ method: 'GET', url: '/api/v1/audit/logs', token: adminB.token });
    expect(b.json().every((row: { organization_id: number }) => row.organization_id === orgB)).toBe(true);

    const all = await ctx.request({ method: 'GET', url: '/api/v1/audit/logs?limit=1000', token: superuser.token });
    const orgs = new Set(all.json().map((row: { organization_id: number | null }) => row.organization_id));
    expect(orgs.has(orgA) && orgs.has(orgB)).toBe(true);

    const limited = await ctx.request({ method: 'GET', url: '/api/v1/audit/logs?limit=2', token: superuser.token });
    expect(limited.json()).toHaveLength(2);
    const times = all.json().map((row: { created_at: string }) => Date.parse(row.created_at));
    expect([...times].sort((x, y) => y - x)).toEqual(times);

    const future = new Date(Date.now() + 86_400_000).toISOString();
    const none = await ctx.request({ method: 'GET', url: `/api/v1/audit/logs?start_date=${encodeURIComponent(future)}`, token: superuser.token });
    expect(none.json()).toEqual([]);
    const badDate = await ctx.request({ method: 'GET', url: '/api/v1/audit/logs?start_date=yesterday', token: adminA.token });
    expect(badDate.statusCode).toBe(400);
    expect(badDate.json()).toEqual({ error: 'querystring.start_date: start_date must be a valid date' });
    const badLimit = await ctx.request({ method: 'GET', url: '/api/v1/audit/logs?limit=0', token: adminA.token });
    expect(badLimit.statusCode).toBe(400);

    expect((await ctx.request({ method: 'GET', url: '/api/v1/audit/logs', token: viewerA.token })).statusCode).toBe(403);
    expect((await ctx.request({ method: 'GET', url: '/api/v1/audit/logs/export?format=csv', token: viewerA.token })).statusCode).toBe(403);
  });

  it('exports CSV as an attachment with a header row, RFC 4180 quoting and organisation scoping', async () => {
    // Awkward characters in a stored field: comma, double quote and a line break.
    const awkward = 'Lab "North", Bay 2\nsecond line';
    await ctx.request({ method: 'PUT', url: '/api/v1/auth/profile', token: adminA.token, payload: { name: awkward } });
    await waitForAuditRows(ctx, `event_type = 'user.profile_updated' AND user_id = $1`, [adminA.id]);

    const response = await ctx.request({ method: 'GET', url: '/api/v1/audit/logs/export?format=csv', token: adminA.token });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(response.headers['content-disposition']).toMatch(/^attachment; filename="audit-logs-\d{4}-\d{2}-\d{2}\.csv"$/);
    expect(response.body.split('\r\n')[0]).toBe(AUDIT_EXPORT_COLUMNS.join(','));
    const records = parse(response.body, { columns: true }) as Record<string, string>[];
    expect(records.length).toBeGreaterThan(1);
    expect(records.every((record) => record.organization_id === String(orgA))).toBe(true);
    const profile = records.find((record) => record.event_type === 'user.profile_updated' && record.user_id === String(adminA.id));
    expect(JSON.parse(profile!.changes!).after.name).toBe(awkward);
    expect(response.body).toContain('""');

    const superExport = await ctx.request({ method: 'GET', url: `/api/v1/audit/logs/export?format=csv&organization_id=${orgB}`, token: superuser.token });
    const bRecords = parse(superExport.body, { columns: true }) as Record<string, string>[];
    expect(bRecords.length).toBeGreaterThan(0);
    expect(bRecords.every((record) => record.organization_id === String(orgB))).toBe(true);

    const badFormat = await ctx.request({ method: 'GET', url: '/api/v1/audit/logs/export?format=xlsx', token: adminA.token });
    expect(badFormat.statusCode).toBe(400);
    expect(badFormat.json()).toEqual({ error: 'querystring.format: format must be csv' });
  });

  it('streams an export larger than one cursor batch in order', async () => {
    await ctx.deps.pg.query(
      `INSERT INTO audit_logs (event_id, event_type, action, success, organization_id, created_at, changes)
       SELECT gen_random_uuid(), 'bulk.test', 'create', true, $1, now() - make_interval(secs => 100000 - g), jsonb_build_object('n', g)
         FROM generate_series(1, 2500) AS g`,
      [orgB],
    );
    const response = await ctx.request({ method: 'GET', url: `/api/v1/audit/logs/export?format=csv&organization_id=${orgB}`, token: superuser.token });
    const records = (parse(response.body, { columns: true }) as Record<string, string>[]).filter((record) => record.event_type === 'bulk.test');
    expect(records).toHaveLength(2500);
    expect(records.map((record) => JSON.parse(record.changes!).n)).toEqual(Array.from({ length: 2500 }, (_, index) => index + 1));
  });

  it('refuses changes to stored audit rows (append-only)', async () => {
    await expect(ctx.deps.pg.query(`UPDATE audit_logs SET success = false`)).rejects.toThrow(/append-only/);
    await expect(ctx.deps.pg.query(`DELETE FROM audit_logs`)).rejects.toThrow(/append-only/);
  });
});

/**
 * Spreadsheet formula injection through the audit export: an unauthenticated caller controls the
 * sign-in email and, through X-Forwarded-For, what could be recorded as its address. Neither may reach
 * the admin's CSV as a live formula: a forged header is not believed unless TRUST_PROXY names the
 * proxy, an email that is no address is refused before it is recorded, and any text cell that starts
 * like a formula is neutralised while numbers stay numbers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import { AUDIT_EXPORT_COLUMNS, EMAIL_MESSAGE } from '@bioprocess/shared/auth-contracts';
import { createTestContext, type TestContext, type TestUser } from '../support/test-context.ts';
import { startWorkerFor, waitForAuditRows } from '../support/audit-drain.ts';
import type { AuditWorkerHandle } from '@bioprocess/audit-worker';

const FORMULA = "=cmd|' /C calc'!A0";
/** A well-formed address that a spreadsheet would still read as a formula. */
const FORMULA_LIKE_EMAIL = '-2+3+cmd@example.test';
const LIVE_FORMULA = /^[=+\-@\t\r]/;

async function exportRows(ctx: TestContext, token: string): Promise<Record<string, string>[]> {
  const response = await ctx.request({ method: 'GET', url: '/api/v1/audit/logs/export', token });
  expect(response.statusCode).toBe(200);
  const rows = parse(response.body, { columns: true }) as Record<string, string>[];
  expect(Object.keys(rows[0] ?? {})).toEqual([...AUDIT_EXPORT_COLUMNS]);
  return rows;
}

function expectNoLiveFormula(rows: Record<string, string>[]): void {
  for (const row of rows) {
    for (const [column, cell] of Object.entries(row)) {
      expect(LIVE_FORMULA.test(cell), `${column}: ${cell}`).toBe(false);
    }
  }
}

describe('audit export against formula injection', () => {
  let ctx: TestContext;
  let worker: AuditWorkerHandle;
  let organizationId: number;
  let admin: TestUser;
  let superuser: TestUser;
  let member: TestUser;

  beforeAll(async () => {
    ctx = await createTestContext();
    worker = startWorkerFor(ctx);
    organizationId = await ctx.createOrganization();
    admin = await ctx.createUser({ organizationId, role: 'admin' });
    member = await ctx.createUser({ organizationId, role: 'viewer', password: 'Member-Pass1!' });
    superuser = await ctx.createUser({ organizationId: await ctx.createOrganization(), role: 'admin', superuser: true });
  });
  afterAll(async () => {
    await worker?.close();
    await ctx.close();
  });

  it('refuses a formula as the sign-in email before it is recorded', async () => {
    const response = await ctx.request({
      method: 'POST', url: '/api/v1/auth/login', headers: { 'x-forwarded-for': FORMULA },
      payload: { email: FORMULA, password: 'whatever' },
    });
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({ error: `email: ${EMAIL_MESSAGE}` });
    const tooLong = await ctx.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email: `${'a'.repeat(300)}@example.test`, password: 'x' } });
    expect(tooLong.statusCode).toBe(400);
  });

  it('records the connection address, not a forged X-Forwarded-For, and neutralises formula-like cells', async () => {
    const forged = await ctx.request({
      method: 'POST', url: '/api/v1/auth/login', headers: { 'x-forwarded-for': FORMULA },
      payload: { email: member.email, password: 'Wrong-Pass1!' },
    });
    expect(forged.statusCode).toBe(401);
    const formulaLike = await ctx.request({
      method: 'POST', url: '/api/v1/auth/login', headers: { 'x-forwarded-for': FORMULA },
      payload: { email: FORMULA_LIKE_EMAIL, password: 'Wrong-Pass1!' },
    });
    expect(formulaLike.statusCode).toBe(401);
    await waitForAuditRows(ctx, `event_type = 'auth.login' AND success = false`, [], 2);
    const { rows: stored } = await ctx.deps.pg.query(`SELECT ip, user_email FROM audit_logs WHERE event_type = 'auth.login'`);
    for (const row of stored) expect(row.ip).toBe('127.0.0.1');
    expect(stored.some((row) => row.user_email === FORMULA)).toBe(false);

    const everything = await exportRows(ctx, superuser.token);
    expectNoLiveFormula(everything);
    expect(everything.map((row) => row.user_email)).toContain(`'${FORMULA_LIKE_EMAIL}`);
    expect(everything.some((row) => Object.values(row).some((cell) => cell.includes('cmd|')))).toBe(false);

    const own = await exportRows(ctx, admin.token);
    expectNoLiveFormula(own);
    const failed = own.find((row) => row.user_email === member.email && row.event_type === 'auth.login');
    expect(failed).toMatchObject({ ip: '127.0.0.1', organization_id: String(organizationId), user_id: String(member.id), success: 'false' });
  });
});

describe('audit addresses behind a named proxy', () => {
  let ctx: TestContext;
  let worker: AuditWorkerHandle;
  let superuser: TestUser;

  beforeAll(async () => {
    // app.inject connects from 127.0.0.1: the loopback proxy is trusted here.
    ctx = await createTestContext({ TRUST_PROXY: 'loopback' });
    worker = startWorkerFor(ctx);
    superuser = await ctx.createUser({ organizationId: await ctx.createOrganization(), role: 'admin', superuser: true });
  });
  afterAll(async () => {
    await worker?.close();
    await ctx.close();
  });

  it('records the forwarded client address, and nothing when the proxy forwards something else', async () => {
    for (const forwardedFor of ['203.0.113.9', FORMULA]) {
      const response = await ctx.request({
        method: 'POST', url: '/api/v1/auth/login', headers: { 'x-forwarded-for': forwardedFor },
        payload: { email: 'nobody@example.test', password: 'Wrong-Pass1!' },
      });
      expect(response.statusCode).toBe(401);
    }
    const rows = await waitForAuditRows(ctx, `event_type = 'auth.login'`, [], 2);
    expect(rows.map((row) => row.ip)).toEqual(['203.0.113.9', null]);
    expectNoLiveFormula(await exportRows(ctx, superuser.token));
  });
});

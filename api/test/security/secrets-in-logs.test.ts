/**
 * Reset links read from the logs: the request logger wrote whole URLs (`/reset-password?token=…`),
 * and the dev outbox logged every link it stored. Whoever reads the logs must not be able to take
 * over the accounts in them.
 */
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { latestOutboxLink } from '../auth/outbox.ts';

describe('no secret in the logs', () => {
  let ctx: TestContext;
  const lines: string[] = [];
  beforeAll(async () => {
    const destination = new Writable({ write(chunk, _encoding, done) { lines.push(String(chunk)); done(); } });
    ctx = await createTestContext({ LOG_LEVEL: 'info', DEV_OUTBOX: 'true' }, { logDestination: destination });
  });
  afterAll(async () => { await ctx.close(); });

  it('logs the mail the dev outbox stored without its link, and request URLs without their token', async () => {
    const signup = await ctx.request({ method: 'POST', url: '/api/v1/auth/signup', payload: { email: 'logged@example.test', password: 'Logged-Pass1!', name: 'Logged' } });
    expect(signup.statusCode).toBe(201);
    await ctx.request({ method: 'POST', url: '/api/v1/auth/forgot-password', payload: { email: 'logged@example.test' } });
    const { token } = await latestOutboxLink(ctx, 'logged@example.test');
    expect(lines.some((line) => line.includes('dev outbox') && line.includes('logged@example.test'))).toBe(true);

    // The link opened in a browser (the console route) and a token passed to an api URL.
    await ctx.request({ method: 'GET', url: `/reset-password?token=${token}` });
    await ctx.request({ method: 'GET', url: `/api/v1/health?token=${token}&api_key=bpk_${token}` });
    const requestLines = lines.filter((line) => line.includes('incoming request'));
    expect(requestLines.some((line) => line.includes('/reset-password?token=[redacted]'))).toBe(true);
    expect(requestLines.some((line) => line.includes('/api/v1/health?token=[redacted]&api_key=[redacted]'))).toBe(true);

    const leaks = lines.filter((line) => line.includes(token));
    expect(leaks).toEqual([]);
  });
});

/**
 * Feeds' keys and instruments served from memory: a key revoked and an instrument deleted behind the
 * api's back (in the database, or by another api process) stop working once the change is heard, and
 * while the api cannot hear changes it looks both up for every request.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AUTH_MESSAGES } from '@bioprocess/shared/errors';
import { TIME_SERIES_MESSAGES } from '@bioprocess/shared/timeseries';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { addInstruments, createApiKey, createPlant, type Plant } from '../support/fixtures.ts';
import { waitFor } from '../support/audit-drain.ts';
import { hashToken } from '../../src/auth/principal.ts';
import { ACCESS_CHANGES_APPLICATION } from '../../src/platform/access-caches.ts';

describe('keys and instruments held in memory', () => {
  let ctx: TestContext;
  let plant: Plant;
  let second = 0;

  beforeAll(async () => {
    ctx = await createTestContext();
    plant = await createPlant(ctx, 1);
  });
  afterAll(async () => {
    await ctx.close();
  });

  /** A post of one reading (its own second) to `instrumentId` with `token`. */
  const post = (token: string, instrumentId: number) => {
    second += 1;
    return ctx.request({
      method: 'POST', url: '/api/v1/time-series-data/bulk', token,
      payload: { data: [{ instrument_id: instrumentId, measured_at: Date.UTC(2024, 0, 1) + second * 1000, float_value: second }] },
    });
  };
  const revokeInDatabase = (token: string) => ctx.deps.pg.query('UPDATE api_keys SET revoked_at = now() WHERE key_hash = $1', [hashToken(token)]);
  const refused = async (token: string) => {
    const response = await post(token, plant.instrumentIds[0]!);
    return response.statusCode === 401 && response;
  };

  it('refuses a key revoked in the database once the change is heard', async () => {
    const token = await createApiKey(ctx, plant.organizationId, 'editor');
    await waitFor(async () => ctx.deps.accessCaches.listening, 'the api listening for changes', 10_000);
    expect((await post(token, plant.instrumentIds[0]!)).statusCode).toBe(202);
    expect((await post(token, plant.instrumentIds[0]!)).statusCode).toBe(202);
    await revokeInDatabase(token);
    const response = await waitFor(() => refused(token), 'the revoked key refused', 5_000);
    expect(response.json()).toEqual({ error: AUTH_MESSAGES.authenticationRequired });
  });

  it('refuses posts to an instrument deleted in the database once the deletion is heard', async () => {
    const token = await createApiKey(ctx, plant.organizationId, 'editor');
    const [instrumentId] = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 1);
    expect((await post(token, instrumentId!)).statusCode).toBe(202);
    expect((await post(token, instrumentId!)).statusCode).toBe(202);
    await ctx.deps.pg.query('DELETE FROM instruments WHERE id = $1', [instrumentId]);
    const response = await waitFor(async () => {
      const answer = await post(token, instrumentId!);
      return answer.statusCode === 400 && answer;
    }, 'the deleted instrument refused', 5_000);
    expect(response.json()).toEqual({ error: TIME_SERIES_MESSAGES.instrumentNotFound(0) });
  });

  it('looks keys up for every request while it cannot hear changes, and holds them again once it can', async () => {
    const token = await createApiKey(ctx, plant.organizationId, 'editor');
    await waitFor(async () => ctx.deps.accessCaches.listening, 'the api listening for changes', 10_000);
    expect((await post(token, plant.instrumentIds[0]!)).statusCode).toBe(202);
    // The listening connection dies: a change made now is announced to nobody.
    await ctx.deps.pg.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()', [ACCESS_CHANGES_APPLICATION]);
    await waitFor(async () => !ctx.deps.accessCaches.listening, 'the api noticing the lost connection', 10_000);
    await revokeInDatabase(token);
    expect(await refused(token)).not.toBe(false);

    // Back: a new key is held, and its revocation heard again.
    await waitFor(async () => ctx.deps.accessCaches.listening, 'the api listening again', 10_000);
    const next = await createApiKey(ctx, plant.organizationId, 'editor');
    expect((await post(next, plant.instrumentIds[0]!)).statusCode).toBe(202);
    expect(ctx.deps.accessCaches.apiKeys.get(hashToken(next))).toBeDefined();
    await revokeInDatabase(next);
    await waitFor(() => refused(next), 'the revoked key refused', 5_000);
  });
});

import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DATE_RANGE_MESSAGES } from '@bioprocess/shared/date-range';
import { LIST_LIMIT_DEFAULT } from '@bioprocess/shared/pagination';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { createComment, createEquipment, createFacility, createRun, createUnitOperation, pendingAuditEvents } from './fixtures.ts';
import { createOrganisationWithUsers, type Organisation } from '../support/fixtures.ts';

const HOUR = 3_600_000;
const iso = (offsetMs: number) => new Date(Date.now() + offsetMs).toISOString();

describe('runs', () => {
  let ctx: TestContext;
  let org: Organisation;
  let other: Organisation;
  let facilityId: number;
  let foreignFacilityId: number;

  beforeAll(async () => {
    ctx = await createTestContext();
    org = await createOrganisationWithUsers(ctx);
    other = await createOrganisationWithUsers(ctx);
    facilityId = (await createFacility(ctx, org.admin.token)).id;
    foreignFacilityId = (await createFacility(ctx, other.admin.token)).id;
  });
  afterAll(async () => { await ctx?.close(); });

  it('creates, reads, updates and deletes a run with every field', async () => {
    const created = await createRun(ctx, org.editor.token, facilityId, {
      name: 'Fed-batch 12', target: 'GFP', strain: 'E. coli BL21', description: 'Glucose-limited feed',
      start_time: '2024-03-01T08:00:00Z', end_time: '2024-03-03T08:00:00Z', scale_liters: 5.5, scale_grams: 0,
    });
    expect(created).toMatchObject({
      facility_id: facilityId, name: 'Fed-batch 12', target: 'GFP', strain: 'E. coli BL21', description: 'Glucose-limited feed',
      start_time: '2024-03-01T08:00:00.000Z', end_time: '2024-03-03T08:00:00.000Z', scale_liters: 5.5, scale_grams: 0,
      status: 'Completed', organization_id: org.id,
    });
    const read = await ctx.request({ method: 'GET', url: `/api/v1/runs/${created.id}`, token: org.viewer.token });
    expect(read.json()).toEqual(created);

    const updated = await ctx.request({
      method: 'PUT', url: `/api/v1/runs/${created.id}`, token: org.editor.token,
      payload: { end_time: null, strain: '', scale_liters: 10 },
    });
    expect(updated.statusCode).toBe(200);
    expect(updated.json()).toMatchObject({ end_time: null, strain: null, scale_liters: 10, name: 'Fed-batch 12', status: 'Active' });

    expect((await ctx.request({ method: 'DELETE', url: `/api/v1/runs/${created.id}`, token: org.editor.token })).statusCode).toBe(204);
    const gone = await ctx.request({ method: 'GET', url: `/api/v1/runs/${created.id}`, token: org.viewer.token });
    expect(gone.statusCode).toBe(404);
    expect(gone.json()).toEqual({ error: 'Run not found' });
  });

  it('derives Pending, Active and Completed from the times', async () => {
    const pendingNoStart = await createRun(ctx, org.admin.token, facilityId);
    const pendingFuture = await createRun(ctx, org.admin.token, facilityId, { start_time: iso(HOUR) });
    const activeOpen = await createRun(ctx, org.admin.token, facilityId, { start_time: iso(-HOUR) });
    const activeFutureEnd = await createRun(ctx, org.admin.token, facilityId, { start_time: iso(-HOUR), end_time: iso(HOUR) });
    const completed = await createRun(ctx, org.admin.token, facilityId, { start_time: iso(-2 * HOUR), end_time: iso(-HOUR) });
    expect([pendingNoStart, pendingFuture, activeOpen, activeFutureEnd, completed].map((run) => run.status))
      .toEqual(['Pending', 'Pending', 'Active', 'Active', 'Completed']);
    const list = await ctx.request({ method: 'GET', url: '/api/v1/runs', token: org.viewer.token });
    const byId = new Map(list.json().map((run: { id: number; status: string }) => [run.id, run.status]));
    expect(byId.get(completed.id)).toBe('Completed');
    expect(byId.get(pendingFuture.id)).toBe('Pending');
  });

  it('validates required fields, scales and the date range with the shared messages', async () => {
    const base = { facility_id: facilityId, name: 'R', target: 'T' };
    const cases: Array<[Record<string, unknown>, number, string]> = [
      [{ ...base, name: undefined }, 400, 'name: Name is required.'],
      [{ ...base, target: ' ' }, 400, 'target: Target is required.'],
      [{ name: 'R', target: 'T' }, 400, 'facility_id: Facility is required.'],
      [{ ...base, facility_id: 'abc' }, 400, 'facility_id: Facility must be a numeric id.'],
      [{ ...base, scale_liters: -0.1 }, 400, 'scale_liters: Must be 0 or more.'],
      [{ ...base, scale_grams: -1 }, 400, 'scale_grams: Must be 0 or more.'],
      [{ ...base, start_time: 'yesterday-ish' }, 400, DATE_RANGE_MESSAGES.invalidFormat],
      [{ ...base, start_time: '2024-01-01T00:00:00Z', end_time: 'not a date' }, 400, DATE_RANGE_MESSAGES.invalidFormat],
      [{ ...base, start_time: '2024-01-02T00:00:00Z', end_time: '2024-01-01T00:00:00Z' }, 400, DATE_RANGE_MESSAGES.endBeforeStart],
      [{ ...base, start_time: '2024-01-01T00:00:00Z', end_time: '2024-01-01T00:00:00Z' }, 400, DATE_RANGE_MESSAGES.endBeforeStart],
      [{ ...base, facility_id: foreignFacilityId }, 404, 'Facility not found'],
    ];
    for (const [payload, status, error] of cases) {
      const response = await ctx.request({ method: 'POST', url: '/api/v1/runs', token: org.admin.token, payload });
      expect(response.statusCode, JSON.stringify(payload)).toBe(status);
      expect(response.json()).toEqual({ error });
    }
    // Only the end given: checked against the stored start.
    const run = await createRun(ctx, org.admin.token, facilityId, { start_time: '2024-05-01T00:00:00Z', end_time: '' });
    expect(run.end_time).toBeNull();
    const before = await ctx.request({ method: 'PUT', url: `/api/v1/runs/${run.id}`, token: org.admin.token, payload: { end_time: '2024-04-01T00:00:00Z' } });
    expect(before.statusCode).toBe(400);
    expect(before.json()).toEqual({ error: DATE_RANGE_MESSAGES.endBeforeStart });
    const move = await ctx.request({ method: 'PUT', url: `/api/v1/runs/${run.id}`, token: org.admin.token, payload: { facility_id: foreignFacilityId } });
    expect(move.statusCode).toBe(404);
    expect(move.json()).toEqual({ error: 'Facility not found' });
    const unchanged = await ctx.request({ method: 'GET', url: `/api/v1/runs/${run.id}`, token: org.admin.token });
    expect(unchanged.json()).toMatchObject({ facility_id: facilityId, end_time: null });
  });

  it('enforces roles and organisations', async () => {
    const run = await createRun(ctx, org.admin.token, facilityId);
    const viewer = await Promise.all([
      ctx.request({ method: 'POST', url: '/api/v1/runs', token: org.viewer.token, payload: { facility_id: facilityId, name: 'V', target: 'T' } }),
      ctx.request({ method: 'PUT', url: `/api/v1/runs/${run.id}`, token: org.viewer.token, payload: { name: 'V' } }),
      ctx.request({ method: 'DELETE', url: `/api/v1/runs/${run.id}`, token: org.viewer.token }),
    ]);
    expect(viewer.map((response) => response.statusCode)).toEqual([403, 403, 403]);
    const editor = await ctx.request({ method: 'PUT', url: `/api/v1/runs/${run.id}`, token: org.editor.token, payload: { name: 'Renamed' } });
    expect(editor.statusCode).toBe(200);
    for (const [method, url] of [['GET', `/api/v1/runs/${run.id}`], ['PUT', `/api/v1/runs/${run.id}`], ['DELETE', `/api/v1/runs/${run.id}`],
      ['GET', `/api/v1/runs/${run.id}/unit-operations`]] as const) {
      const response = await ctx.request({ method, url, token: other.admin.token, ...(method === 'PUT' ? { payload: { name: 'X' } } : {}) });
      expect(response.statusCode, `${method} ${url}`).toBe(404);
      expect(response.json()).toEqual({ error: 'Run not found' });
    }
    const foreignList = await ctx.request({ method: 'GET', url: '/api/v1/runs', token: other.admin.token });
    expect(foreignList.json()).toEqual([]);
    expect(foreignList.headers['x-total-count']).toBe('0');
  });

  it('deletes its unit operations and their comments with the run', async () => {
    const equipment = await createEquipment(ctx, org.admin.token, facilityId);
    const run = await createRun(ctx, org.admin.token, facilityId);
    const keep = await createRun(ctx, org.admin.token, facilityId);
    const first = await createUnitOperation(ctx, org.admin.token, run.id, equipment.id);
    const second = await createUnitOperation(ctx, org.admin.token, run.id, equipment.id, { type: 'centrifugation' });
    const kept = await createUnitOperation(ctx, org.admin.token, keep.id, equipment.id);
    await createComment(ctx, org.admin.token, first.id);
    await createComment(ctx, org.admin.token, second.id);
    const keptComment = await createComment(ctx, org.admin.token, kept.id);

    expect((await ctx.request({ method: 'DELETE', url: `/api/v1/runs/${run.id}`, token: org.admin.token })).statusCode).toBe(204);
    for (const id of [first.id, second.id]) {
      expect((await ctx.request({ method: 'GET', url: `/api/v1/unit-operations/${id}`, token: org.admin.token })).statusCode).toBe(404);
    }
    const { rows } = await ctx.deps.pg.query(
      'SELECT count(*) AS total FROM comments WHERE unit_operations_id = ANY($1)', [[first.id, second.id]],
    );
    expect(rows[0].total).toBe(0);
    expect((await ctx.request({ method: 'GET', url: `/api/v1/unit-operations/${kept.id}`, token: org.admin.token })).statusCode).toBe(200);
    // The run's delete and each cascaded unit operation's delete are audited with what was removed.
    await vi.waitFor(async () => {
      const deletes = (await pendingAuditEvents(ctx)).filter((event) => event.action === 'delete');
      expect(deletes).toContainEqual(expect.objectContaining({
        event_type: 'data', resource_type: 'run', resource_id: String(run.id), changes: { before: expect.objectContaining({ id: run.id }), after: null },
      }));
      for (const unitOperation of [first, second]) {
        expect(deletes).toContainEqual(expect.objectContaining({
          resource_type: 'unit_operation', resource_id: String(unitOperation.id),
          changes: { before: expect.objectContaining({ run_id: run.id }), after: null },
        }));
      }
    });
    expect((await ctx.request({ method: 'GET', url: `/api/v1/comments/${keptComment.id}`, token: org.admin.token })).statusCode).toBe(200);
  });

  it('pages newest first with limit, offset and X-Total-Count', async () => {
    const pagingOrg = await createOrganisationWithUsers(ctx);
    const facility = await createFacility(ctx, pagingOrg.admin.token);
    const ids: number[] = [];
    for (let i = 0; i < 7; i += 1) ids.push((await createRun(ctx, pagingOrg.admin.token, facility.id, { name: `Run ${i}` })).id);
    const newestFirst = [...ids].reverse();

    const all = await ctx.request({ method: 'GET', url: '/api/v1/runs', token: pagingOrg.viewer.token });
    expect(all.json().map((run: { id: number }) => run.id)).toEqual(newestFirst);
    expect(all.headers['x-total-count']).toBe('7');

    const page = await ctx.request({ method: 'GET', url: '/api/v1/runs?limit=3&offset=2', token: pagingOrg.viewer.token });
    expect(page.statusCode).toBe(200);
    expect(page.json().map((run: { id: number }) => run.id)).toEqual(newestFirst.slice(2, 5));
    expect(page.headers['x-total-count']).toBe('7');

    const past = await ctx.request({ method: 'GET', url: '/api/v1/runs?offset=50', token: pagingOrg.viewer.token });
    expect(past.json()).toEqual([]);
    expect(past.headers['x-total-count']).toBe('7');

    for (const query of ['limit=0', 'limit=10001', 'limit=abc', 'offset=-1']) {
      const response = await ctx.request({ method: 'GET', url: `/api/v1/runs?${query}`, token: pagingOrg.viewer.token });
      expect(response.statusCode, query).toBe(400);
      expect(response.json().error).toMatch(/^querystring\.(limit|offset): /);
    }
    const max = await ctx.request({ method: 'GET', url: '/api/v1/runs?limit=10000', token: pagingOrg.viewer.token });
    expect(max.statusCode).toBe(200);
    expect(LIST_LIMIT_DEFAULT).toBe(1000);
  });

  it('pages 100,000 runs from the (organization_id, id DESC) index without sorting them', async () => {
    const big = await createOrganisationWithUsers(ctx);
    const facility = await createFacility(ctx, big.admin.token);
    await ctx.deps.pg.query(
      `INSERT INTO runs (organization_id, facility_id, name, target)
       SELECT $1, $2, 'Run ' || n, 'Target' FROM generate_series(1, 100000) AS n`,
      [big.id, facility.id],
    );
    await ctx.deps.pg.query('ANALYZE runs');
    // The plan is what keeps the list fast at this size: an ordered walk of an index, stopped at the
    // limit, never a sort of every run. The big organisation may walk the primary key (nearly every
    // row is its own); a small one among 100,000 rows must use (organization_id, id DESC).
    const planOf = async (organizationId: number) => {
      const { rows } = await ctx.deps.pg.query(
        'EXPLAIN (FORMAT JSON) SELECT * FROM runs WHERE organization_id = $1 ORDER BY id DESC LIMIT 1000 OFFSET 2000', [organizationId],
      );
      return JSON.stringify(rows[0]['QUERY PLAN']);
    };
    const bigPlan = await planOf(big.id);
    expect(bigPlan).toContain('"Node Type":"Index Scan"');
    expect(bigPlan).not.toContain('"Node Type":"Sort"');
    const smallPlan = await planOf(org.id);
    expect(smallPlan).toContain('"Index Name":"runs_organization"');
    expect(smallPlan).not.toContain('"Node Type":"Sort"');

    const page = await ctx.request({ method: 'GET', url: '/api/v1/runs?offset=2000', token: big.viewer.token });
    expect(page.statusCode).toBe(200);
    expect(page.json()).toHaveLength(1000);
    expect(page.headers['x-total-count']).toBe('100000');
    const ids = page.json().map((run: { id: number }) => run.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
  });
});

/**
 * The reads that span a run's records, each answered by the repositories of its tables, through the
 * real PostgreSQL and HTTP server: which jobs a run's signed content names (uploads into its unit
 * operations, range deletions overlapping their windows on their equipment's instruments, with the
 * windows rounded to milliseconds by PostgreSQL), which jobs its review report lists, which range
 * deletions the review lock refuses, and the instrument names of alert firings.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertIngestJobs, recordDeletion, type NewIngestJob } from '@bioprocess/shared/server/ingest-jobs';
import { runContentDocument } from '../../src/signatures/run-content.ts';
import { createTestContext, type TestContext, type TestUser } from '../support/test-context.ts';
import { createEquipment, createFacility, createInstrument, createRun, createUnitOperation } from '../metadata/fixtures.ts';

const T0 = Date.UTC(2024, 2, 1);
const HOUR = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();

describe('reads across a run\'s records', () => {
  let ctx: TestContext;
  let organizationId: number;
  let editor: TestUser;
  let instruments: { firstA: { id: number; name: string }; firstB: { id: number }; second: { id: number } };
  let run: { id: number };
  let otherRun: { id: number };
  let unitOperations: { closed: { id: number }; open: { id: number }; withoutEquipment: { id: number }; ofOtherRun: { id: number } };

  beforeAll(async () => {
    ctx = await createTestContext();
    organizationId = await ctx.createOrganization();
    editor = await ctx.createUser({ organizationId, role: 'editor' });
    const facilityId = (await createFacility(ctx, editor.token)).id;
    const first = (await createEquipment(ctx, editor.token, facilityId)).id;
    const second = (await createEquipment(ctx, editor.token, facilityId)).id;
    instruments = {
      firstA: await createInstrument(ctx, editor.token, first) as unknown as { id: number; name: string },
      firstB: await createInstrument(ctx, editor.token, first),
      second: await createInstrument(ctx, editor.token, second),
    };
    run = await createRun(ctx, editor.token, facilityId, { name: 'Signed run' });
    otherRun = await createRun(ctx, editor.token, facilityId, { name: 'Other run' });
    unitOperations = {
      closed: await createUnitOperation(ctx, editor.token, run.id, first, { start_time: iso(T0), end_time: iso(T0 + HOUR) }),
      open: await createUnitOperation(ctx, editor.token, run.id, second, { start_time: iso(T0 + 2 * HOUR) }),
      withoutEquipment: await createUnitOperation(ctx, editor.token, run.id, first),
      ofOtherRun: await createUnitOperation(ctx, editor.token, otherRun.id, first, { start_time: iso(T0 + 3 * HOUR), end_time: iso(T0 + 4 * HOUR) }),
    };
    // A start 0.6 ms past T0: PostgreSQL rounds it to T0 + 1 ms, where truncation would give T0.
    await ctx.deps.pg.query(`UPDATE unit_operations SET start_time = start_time + interval '600 microseconds' WHERE id = $1`, [unitOperations.closed.id]);
    // Older records may have no equipment (the api now requires it): such a one owns no readings.
    await ctx.deps.pg.query('UPDATE unit_operations SET equipment_id = NULL WHERE id = $1', [unitOperations.withoutEquipment.id]);
  });
  afterAll(async () => { await ctx?.close(); });

  const principal = () => ({ organizationId, userId: editor.id, apiKeyId: null });
  async function job(kind: NewIngestJob['kind'], request: Record<string, unknown>): Promise<{ id: string; version: string }> {
    const [inserted] = await insertIngestJobs(ctx.deps.pg, [{ principal: principal(), job: { kind, request } }]);
    return { id: inserted!.job.id, version: String(inserted!.job.version_seq) };
  }
  async function deletion(instrumentIds: number[], startMs: number, endMs: number, request: Record<string, unknown> = {}) {
    const recorded = await job('deletion', { instrument_ids: instrumentIds, start_ms: startMs, end_ms: endMs, ...request });
    await recordDeletion(ctx.deps.pg, { organizationId, jobId: recorded.id, versionSeq: Number(recorded.version), instrumentIds, startMs, endMs });
    return recorded;
  }

  it('names the uploads into the run and the deletions overlapping its windows in the signed content, and lists the exceptional ones in the report', async () => {
    const upload = await job('csv', { unit_operation_id: unitOperations.closed.id, file_name: 'plain.csv', mapping: {} });
    const replacing = await job('csv', {
      unit_operation_id: '', created_unit_operation_id: unitOperations.withoutEquipment.id, file_name: 'replacing.csv', mapping: { replace_existing: true },
    });
    const failed = await job('csv', { unit_operation_id: unitOperations.closed.id, file_name: 'broken.csv', mapping: {} });
    await ctx.deps.pg.query(`UPDATE ingest_jobs SET state = 'failed', error = 'bad file' WHERE id = $1`, [failed.id]);
    await job('csv', { unit_operation_id: unitOperations.ofOtherRun.id, file_name: 'other.csv', mapping: {} });
    // Touches the closed window at its end (ends count), and names the unit operation too: listed once.
    const atClosedEnd = await deletion([instruments.firstB.id], T0 + HOUR, T0 + 5 * HOUR, { unit_operation_id: unitOperations.closed.id });
    // Ends at T0: before the closed window's start as PostgreSQL rounds it.
    await deletion([instruments.firstA.id], T0 - HOUR, T0);
    const inOpenWindow = await deletion([instruments.second.id], T0 + 10 * HOUR, T0 + 11 * HOUR);
    await deletion([instruments.second.id], T0, T0 + 2 * HOUR - 1);
    await deletion([instruments.firstA.id], T0 + 3 * HOUR, T0 + 4 * HOUR);

    const document = await runContentDocument(ctx.deps.pg, organizationId, run.id) as { unit_operations: Array<{ id: number }>; ingest_jobs: unknown[] };
    expect(document.unit_operations.map((row) => row.id))
      .toEqual([unitOperations.closed.id, unitOperations.open.id, unitOperations.withoutEquipment.id].sort((a, b) => a - b));
    const expected = [
      { id: upload.id, kind: 'csv', version: upload.version }, { id: replacing.id, kind: 'csv', version: replacing.version },
      { id: failed.id, kind: 'csv', version: failed.version }, { id: atClosedEnd.id, kind: 'deletion', version: atClosedEnd.version },
      { id: inOpenWindow.id, kind: 'deletion', version: inOpenWindow.version },
    ].sort((a, b) => (a.id < b.id ? -1 : 1));
    expect(document.ingest_jobs).toEqual(expected);

    const report = await ctx.request({ method: 'GET', url: `/api/v1/runs/${run.id}/review-report`, token: editor.token });
    expect(report.statusCode, report.body).toBe(200);
    const jobEntries = report.json().entries.filter((entry: { detail: string | null }) => entry.detail?.includes('(job '))
      .map((entry: { kind: string; detail: string }) => [entry.kind, entry.detail]);
    expect(jobEntries.sort()).toEqual([
      ['deletion', `deleted readings (queued) (job ${atClosedEnd.id})`],
      ['upload', `failed: bad file (job ${failed.id})`],
      ['upload', `replaced the readings of its instruments in the window (job ${replacing.id})`],
    ].sort());
  });

  it('refuses a range deletion overlapping a unit operation of the locked run on the instruments\' equipment, and only that', async () => {
    const submitted = await ctx.request({ method: 'POST', url: `/api/v1/runs/${run.id}/review`, token: editor.token, payload: { action: 'submit' } });
    expect(submitted.statusCode, submitted.body).toBe(200);
    const locked = `Run "Signed run" is In review: it cannot be changed until it is reopened with a reason`;
    const deleteRange = (instrumentIds: number[], startMs: number, endMs: number) => ctx.request({
      method: 'DELETE', url: '/api/v1/time-series-data', token: editor.token, payload: { instrument_ids: instrumentIds, start_time: iso(startMs), end_time: iso(endMs) },
    });
    for (const [instrumentIds, startMs, endMs] of [
      [[instruments.firstB.id], T0 + HOUR, T0 + HOUR],
      [[instruments.second.id], T0 + 20 * HOUR, T0 + 21 * HOUR],
      [[instruments.firstA.id, instruments.second.id], T0 + 20 * HOUR, T0 + 21 * HOUR],
    ] as const) {
      const response = await deleteRange([...instrumentIds], startMs, endMs);
      expect({ instrumentIds, status: response.statusCode, body: response.json() }).toEqual({ instrumentIds, status: 409, body: { error: locked } });
    }
    for (const [instrumentIds, startMs, endMs] of [
      [[instruments.firstA.id], T0 - HOUR, T0],
      [[instruments.firstA.id], T0 + 3 * HOUR, T0 + 4 * HOUR],
    ] as const) {
      const response = await deleteRange([...instrumentIds], startMs, endMs);
      expect({ instrumentIds, startMs, status: response.statusCode }).toEqual({ instrumentIds, startMs, status: 202 });
    }
  });

  it('gives alert firings the name of their instrument, in the list and one by one', async () => {
    const { rows: [rule] } = await ctx.deps.pg.query<{ id: number }>(
      `INSERT INTO alert_rules (organization_id, name, condition) VALUES ($1, 'Hot', '{"kind":"threshold","direction":"above","value":40,"hold_seconds":0}') RETURNING id`,
      [organizationId]);
    const { rows: [event] } = await ctx.deps.pg.query<{ id: number }>(
      `INSERT INTO alert_events (organization_id, rule_id, instrument_id, unit_operation_id, run_id, started_at, fired_at, value, message)
       VALUES ($1, $2, $3, $4, $5, now(), now(), 41, 'above 40') RETURNING id`,
      [organizationId, rule!.id, instruments.firstA.id, unitOperations.closed.id, run.id]);
    const list = await ctx.request({ method: 'GET', url: `/api/v1/alert-events?run_id=${run.id}`, token: editor.token });
    expect(list.statusCode, list.body).toBe(200);
    expect(list.json().map((row: { id: number; instrument_name: string }) => [row.id, row.instrument_name])).toEqual([[event!.id, instruments.firstA.name]]);
    const one = await ctx.request({ method: 'GET', url: `/api/v1/alert-events/${event!.id}`, token: editor.token });
    expect(one.json()).toMatchObject({ id: event!.id, instrument_id: instruments.firstA.id, instrument_name: instruments.firstA.name, run_name: 'Signed run' });
  });
});

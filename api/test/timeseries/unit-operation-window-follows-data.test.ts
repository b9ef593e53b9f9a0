/**
 * A unit operation's window follows its data: an upload into an open-ended unit operation
 * closes it at the file's last reading when asked (in the job's completing transaction, audited as an
 * update by the uploader), keeps it open when not; the wizard's window check names the other unit
 * operation a file would overlap before anything is sent; and a unit operation lists only the
 * instruments holding readings in its window, not every instrument its equipment ever had.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { startWorkerFor, waitForAuditRows } from '../support/audit-drain.ts';
import type { AuditWorkerHandle } from '@bioprocess/audit-worker';
import type { IngestWorker } from '@bioprocess/ingest-worker';
import { multipartBody, startWorker } from '../support/ingest.ts';
import { createPlant, type Plant } from '../support/fixtures.ts';

const T0 = Date.UTC(2021, 4, 12, 2, 40);
const MINUTE = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();

/** A CSV of `rows` readings a minute apart from `fromMs`, in column `v`. */
const csvOf = (fromMs: number, rows: number) => `t,v\n${Array.from({ length: rows }, (_, i) => `${iso(fromMs + i * MINUTE)},${i}`).join('\n')}\n`;

interface UnitOperationBody { id: number; start_time: string | null; end_time: string | null; status: string }

describe("a unit operation's window follows its data", () => {
  let ctx: TestContext;
  let worker: IngestWorker;
  let auditWorker: AuditWorkerHandle;

  beforeAll(async () => {
    ctx = await createTestContext({ UPLOAD_RATE_LIMIT_PER_MINUTE: '1000' });
    worker = startWorker(ctx);
    auditWorker = startWorkerFor(ctx);
  });
  afterAll(async () => {
    await worker?.close();
    await auditWorker?.close();
    await ctx?.close();
  });

  async function plantWithRun(instruments: number): Promise<Plant & { runId: number }> {
    const plant = await createPlant(ctx, instruments);
    const run = await ctx.deps.pg.query(
      `INSERT INTO runs (organization_id, facility_id, name, target) SELECT $1, f.id, 'Pioreactor 3', 'OD' FROM facilities f WHERE f.organization_id = $1 LIMIT 1 RETURNING id`,
      [plant.organizationId]);
    return { ...plant, runId: run.rows[0].id as number };
  }

  async function created(plant: Plant & { runId: number }, window: { start_time?: string | null; end_time?: string | null }): Promise<UnitOperationBody> {
    const response = await ctx.request({
      method: 'POST', url: '/api/v1/unit-operations', token: plant.editor.token,
      payload: { run_id: plant.runId, type: 'fermentation', equipment_id: plant.equipmentId, ...window },
    });
    expect(response.statusCode, response.body).toBe(201);
    return response.json() as UnitOperationBody;
  }

  async function upload(plant: Plant, unitOperationId: number, instrumentId: number, csv: string, extra: Record<string, unknown> = {}) {
    const mapping = { timestamp_column: 't', columns: [{ column: 'v', instrument_id: instrumentId }], ...extra };
    const { body, contentType } = multipartBody({ mapping: JSON.stringify(mapping) }, { name: 'od.csv', content: csv });
    return ctx.request({
      method: 'POST', url: `/api/v1/unit-operations/${unitOperationId}/csv-uploads?wait=true`, token: plant.editor.token,
      headers: { 'content-type': contentType }, payload: body,
    });
  }

  const fetchUnitOperation = async (plant: Plant, id: number) =>
    (await ctx.request({ method: 'GET', url: `/api/v1/unit-operations/${id}`, token: plant.viewer.token })).json() as UnitOperationBody;

  it('closes an open-ended unit operation at the last reading when the upload asks, audited as an update by the uploader', async () => {
    const plant = await plantWithRun(1);
    const open = await created(plant, { start_time: iso(T0) });
    const response = await upload(plant, open.id, plant.instrumentIds[0]!, csvOf(T0, 61), { close_open_end: true });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json().result.message).toBe('Wrote 61 points to 1 instrument; aliases saved.');

    const after = await fetchUnitOperation(plant, open.id);
    expect(after.end_time).toBe(iso(T0 + 60 * MINUTE));
    expect(after.status).toBe('Completed');
    const [event] = await waitForAuditRows(ctx, "organization_id = $1 AND action = 'update' AND resource_type = 'unit_operation'", [plant.organizationId]);
    expect(event!.user_id).toBe(plant.editor.id);
    expect(event!.resource_id).toBe(String(open.id));
    expect((event!.changes as { before: { end_time: string | null }; after: { end_time: string } })).toMatchObject({
      before: { end_time: null }, after: { end_time: iso(T0 + 60 * MINUTE) },
    });

    // Closed, the equipment is free after it: a next unit operation starting later is accepted.
    await created(plant, { start_time: iso(T0 + 61 * MINUTE) });
  });

  it('keeps the unit operation open when the upload does not ask', async () => {
    const plant = await plantWithRun(1);
    const open = await created(plant, { start_time: iso(T0) });
    expect((await upload(plant, open.id, plant.instrumentIds[0]!, csvOf(T0, 10))).statusCode).toBe(200);
    expect((await upload(plant, open.id, plant.instrumentIds[0]!, csvOf(T0, 10), { close_open_end: false })).statusCode).toBe(200);
    const after = await fetchUnitOperation(plant, open.id);
    expect(after.end_time).toBeNull();
    expect(after.status).toBe('Active');
    const { rows } = await ctx.deps.pg.query(
      "SELECT count(*)::int AS n FROM audit_outbox WHERE (event->>'organization_id')::bigint = $1 AND event->>'action' = 'update'", [plant.organizationId]);
    const logged = await ctx.deps.pg.query("SELECT count(*)::int AS n FROM audit_logs WHERE organization_id = $1 AND action = 'update'", [plant.organizationId]);
    expect(rows[0].n + logged.rows[0].n).toBe(0);
  });

  it("names the other unit operation a file's range would overlap, before anything is sent", async () => {
    const plant = await plantWithRun(1);
    const first = await created(plant, { start_time: iso(T0), end_time: iso(T0 + 60 * MINUTE) });
    const second = await created(plant, { start_time: null });
    const check = (query: string) => ctx.request({ method: 'GET', url: `/api/v1/unit-operations/window-check?${query}`, token: plant.viewer.token });

    const overlapping = await check(`unit_operation_id=${second.id}&first_reading=${iso(T0 + 30 * MINUTE)}&last_reading=${iso(T0 + 90 * MINUTE)}`);
    expect(overlapping.statusCode, overlapping.body).toBe(200);
    expect(overlapping.json().conflict.unit_operation_id).toBe(first.id);
    expect(overlapping.json().conflict.message).toBe(
      `The file's time range overlaps another unit operation: The equipment is in use by unit operation ${first.id} `
      + `(Fermentation of run 'Pioreactor 3') from ${iso(T0)} to ${iso(T0 + 60 * MINUTE)}; one piece of equipment runs one unit operation at a time.`);

    // A new unit operation (no id yet) on the equipment, with an open start in the form: the same answer.
    const fresh = await check(`equipment_id=${plant.equipmentId}&first_reading=${iso(T0 + 59 * MINUTE)}&last_reading=${iso(T0 + 70 * MINUTE)}`);
    expect(fresh.json().conflict.unit_operation_id).toBe(first.id);

    const fits = await check(`unit_operation_id=${second.id}&first_reading=${iso(T0 + 61 * MINUTE)}&last_reading=${iso(T0 + 90 * MINUTE)}`);
    expect(fits.json()).toEqual({ window: { start_time: iso(T0 + 61 * MINUTE), end_time: iso(T0 + 90 * MINUTE) }, conflict: null });

    expect((await check(`unit_operation_id=${second.id}&first_reading=yesterday&last_reading=${iso(T0)}`)).json().error).toMatch(/first_reading/);
    expect((await check(`first_reading=${iso(T0)}&last_reading=${iso(T0)}`)).statusCode).toBe(400);
  });

  it('lists only the instruments holding readings in the window, with their counts and the first and last reading', async () => {
    const plant = await plantWithRun(4);
    const [withData, , , elsewhere] = plant.instrumentIds as [number, number, number, number];
    const earlier = await created(plant, { start_time: iso(T0 - 600 * MINUTE), end_time: iso(T0 - 300 * MINUTE) });
    expect((await upload(plant, earlier.id, elsewhere, csvOf(T0 - 500 * MINUTE, 30))).statusCode).toBe(200);
    const open = await created(plant, { start_time: iso(T0) });
    // 150 readings: whole hours, whole minutes and partial ones, counted from the rollups and the points.
    expect((await upload(plant, open.id, withData, csvOf(T0 + 30_000, 150), { close_open_end: true })).statusCode).toBe(200);

    const response = await ctx.request({ method: 'GET', url: `/api/v1/unit-operations/${open.id}/instruments-with-data`, token: plant.viewer.token });
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json() as { first_reading: string; last_reading: string; instruments: Array<{ instrument_id: number; readings: number }> };
    expect(body.instruments.map((entry) => [entry.instrument_id, entry.readings])).toEqual([[withData, 150]]);
    expect(body.first_reading).toBe(iso(T0 + 30_000));
    expect(body.last_reading).toBe(iso(T0 + 30_000 + 149 * MINUTE));

    const earlierList = await ctx.request({ method: 'GET', url: `/api/v1/unit-operations/${earlier.id}/instruments-with-data`, token: plant.viewer.token });
    expect(earlierList.json().instruments.map((entry: { instrument_id: number }) => entry.instrument_id)).toEqual([elsewhere]);
    expect((await ctx.request({ method: 'GET', url: '/api/v1/unit-operations/999999/instruments-with-data', token: plant.viewer.token })).statusCode).toBe(404);
  });
});

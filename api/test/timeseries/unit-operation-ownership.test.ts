/**
 * Unit operations own their readings: one unit operation at a time per equipment (create, edit,
 * upload, open-ended, concurrent creates), the dry run of a delete or replace, deletion scoped to the
 * unit operation's own window, replace inside the window only, create-with-upload as one act, any
 * multipart order, and the audit events of imports and deletions with resource names.
 */
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { startWorkerFor, waitFor, waitForAuditRows } from '../support/audit-drain.ts';
import type { AuditWorkerHandle } from '@bioprocess/audit-worker';
import type { IngestWorker } from '@bioprocess/ingest-worker';
import { DATASETS_DIR } from '../../src/demo/seed.ts';
import { multipartBody, readSeries, startWorker, waitForJobState, type JobStatus } from '../support/ingest.ts';
import { addInstruments, createPlant, type Plant } from '../support/fixtures.ts';

const DASWARE = 'CTPC06603.20200714 - 5GB1 - KDB.Control.csv';
const T0 = Date.UTC(2024, 8, 1);
const MINUTE = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();

interface UnitOperationBody { id: number; start_time: string | null; end_time: string | null }
interface Preview { ranges: Array<{ start_time: string; end_time: string }>; instruments: Array<{ instrument_id: number; name: string; readings: number }>; total_readings: number }

describe('unit operations own their readings', () => {
  let ctx: TestContext;
  let worker: IngestWorker;
  let auditWorker: AuditWorkerHandle;
  let runId: number;

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

  /** A plant (organisation, equipment, instruments) with a run to hang unit operations on. */
  async function plantWithRun(instruments = 2): Promise<Plant> {
    const plant = await createPlant(ctx, instruments);
    const run = await ctx.deps.pg.query(
      `INSERT INTO runs (organization_id, facility_id, name, target) SELECT $1, f.id, 'Batch 7', 'titer' FROM facilities f WHERE f.organization_id = $1 LIMIT 1 RETURNING id`,
      [plant.organizationId]);
    runId = run.rows[0].id as number;
    return plant;
  }

  function create(plant: Plant, window: { start_time?: string | null; end_time?: string | null } = {}) {
    return ctx.request({
      method: 'POST', url: '/api/v1/unit-operations', token: plant.editor.token,
      payload: { run_id: runId, type: 'fermentation', equipment_id: plant.equipmentId, ...window },
    });
  }

  async function created(plant: Plant, window: { start_time?: string | null; end_time?: string | null } = {}): Promise<UnitOperationBody> {
    const response = await create(plant, window);
    expect(response.statusCode, response.body).toBe(201);
    return response.json() as UnitOperationBody;
  }

  async function upload(plant: Plant, unitOperationId: number, mapping: unknown, file: { name: string; content: Buffer | string }) {
    const { body, contentType } = multipartBody({ mapping: JSON.stringify(mapping) }, file);
    return ctx.request({
      method: 'POST', url: `/api/v1/unit-operations/${unitOperationId}/csv-uploads?wait=true`, token: plant.editor.token,
      headers: { 'content-type': contentType }, payload: body,
    });
  }

  async function writePoints(plant: Plant, instrumentIds: number[], fromMs: number, count: number) {
    const data = instrumentIds.flatMap((instrument_id) => Array.from({ length: count }, (_, index) => ({ measured_at: fromMs + index * MINUTE, instrument_id, value: index })));
    const response = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk?wait=true', token: plant.editor.token, payload: { data } });
    expect(response.statusCode).toBe(200);
  }

  async function preview(plant: Plant, unitOperationId: number, instrumentIds?: number[]): Promise<Preview> {
    const query = instrumentIds ? `?instrument_ids=${instrumentIds.join(',')}` : '';
    const response = await ctx.request({ method: 'GET', url: `/api/v1/unit-operations/${unitOperationId}/deletion-preview${query}`, token: plant.viewer.token });
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as Preview;
  }

  async function deleteAndWait(plant: Plant, unitOperationId: number): Promise<void> {
    const before = await ctx.deps.pg.query<{ id: string }>(`SELECT id FROM ingest_jobs WHERE organization_id = $1 AND kind = 'deletion'`, [plant.organizationId]);
    const response = await ctx.request({ method: 'DELETE', url: `/api/v1/unit-operations/${unitOperationId}`, token: plant.editor.token });
    expect(response.statusCode).toBe(204);
    const known = new Set(before.rows.map((row) => row.id));
    const { rows } = await ctx.deps.pg.query<{ id: string }>(`SELECT id FROM ingest_jobs WHERE organization_id = $1 AND kind = 'deletion'`, [plant.organizationId]);
    for (const row of rows.filter((job) => !known.has(job.id))) expect((await waitForJobState(ctx, plant.editor.token, row.id)).state).toBe('completed');
  }

  const counts = async (plant: Plant, instrumentIds: number[]) =>
    Promise.all(instrumentIds.map(async (instrument_id) => (await readSeries(ctx, plant.viewer.token, { instrument_id, limit: 100_000 })).length));

  describe('one piece of equipment runs one unit operation at a time', () => {
    it('refuses an overlapping create and edit with 409 naming the other unit operation and its window', async () => {
      const plant = await plantWithRun();
      const first = await created(plant, { start_time: iso(T0), end_time: iso(T0 + 60 * MINUTE) });
      const overlapping = await create(plant, { start_time: iso(T0 + 30 * MINUTE), end_time: iso(T0 + 90 * MINUTE) });
      expect(overlapping.statusCode).toBe(409);
      expect(overlapping.json().error).toBe(
        `The equipment is in use by unit operation ${first.id} (Fermentation of run 'Batch 7') from ${iso(T0)} to ${iso(T0 + 60 * MINUTE)}; `
        + 'one piece of equipment runs one unit operation at a time.');
      // Sharing an instant is overlapping too: a reading at that instant would belong to both.
      expect((await create(plant, { start_time: iso(T0 + 60 * MINUTE), end_time: iso(T0 + 90 * MINUTE) })).statusCode).toBe(409);
      const second = await created(plant, { start_time: iso(T0 + 61 * MINUTE), end_time: iso(T0 + 90 * MINUTE) });
      const edit = await ctx.request({ method: 'PUT', url: `/api/v1/unit-operations/${second.id}`, token: plant.editor.token, payload: { start_time: iso(T0 + 50 * MINUTE) } });
      expect(edit.statusCode).toBe(409);
      expect(edit.json().error).toContain(`unit operation ${first.id}`);
      // Editing a unit operation's own window is no conflict with itself.
      const own = await ctx.request({ method: 'PUT', url: `/api/v1/unit-operations/${first.id}`, token: plant.editor.token, payload: { end_time: iso(T0 + 55 * MINUTE) } });
      expect(own.statusCode).toBe(200);
      // Without a start there is no window, so nothing to overlap.
      expect((await create(plant)).statusCode).toBe(201);
    });

    it('runs an open-ended unit operation until now', async () => {
      const plant = await plantWithRun();
      const running = await created(plant, { start_time: iso(Date.now() - 24 * 3_600_000) });
      const earlierToday = await create(plant, { start_time: iso(Date.now() - 3_600_000), end_time: iso(Date.now() - 1_800_000) });
      expect(earlierToday.statusCode).toBe(409);
      expect(earlierToday.json().error).toContain(`unit operation ${running.id}`);
      expect(earlierToday.json().error).toContain('open-ended, running until now');
      // Planned after now: the running one has not reached it.
      expect((await create(plant, { start_time: iso(Date.now() + 24 * 3_600_000), end_time: iso(Date.now() + 48 * 3_600_000) })).statusCode).toBe(201);
      // An open-ended one starting before the running one's start overlaps it.
      expect((await create(plant, { start_time: iso(Date.now() - 48 * 3_600_000) })).statusCode).toBe(409);
    });

    it('lets exactly one of concurrent overlapping creates through', async () => {
      const plant = await plantWithRun();
      const responses = await Promise.all(Array.from({ length: 6 }, (_, index) =>
        create(plant, { start_time: iso(T0 + index * MINUTE), end_time: iso(T0 + (index + 30) * MINUTE) })));
      expect(responses.map((response) => response.statusCode).sort()).toEqual([201, 409, 409, 409, 409, 409]);
      const { rows } = await ctx.deps.pg.query('SELECT count(*)::int AS n FROM unit_operations WHERE equipment_id = $1', [plant.equipmentId]);
      expect(rows[0].n).toBe(1);
    });

    it("repeats finding 1: the same DASware file uploaded twice gives the first unit operation the file's window and refuses the second", async () => {
      const plant = await plantWithRun(0);
      const [ph, dissolvedOxygen] = await addInstruments(ctx, plant.organizationId, plant.equipmentId, 2);
      const mapping = { timestamp_column: 'Timestamp', columns: [{ column: 'Unit 1.pH1.PV [pH]', instrument_id: ph }, { column: 'Unit 1.DO1.PV [%DO]', instrument_id: dissolvedOxygen }] };
      const file = { name: DASWARE, content: await readFile(path.join(DATASETS_DIR, DASWARE)) };
      const first = await created(plant);
      const accepted = await upload(plant, first.id, mapping, file);
      expect(accepted.statusCode, accepted.body).toBe(200);
      const result = (accepted.json() as JobStatus).result!;
      const window = (await ctx.request({ method: 'GET', url: `/api/v1/unit-operations/${first.id}`, token: plant.viewer.token })).json() as UnitOperationBody;
      expect(window.start_time).toBe(result.start_time);
      expect(window.end_time).toBe(result.end_time);
      const readingsBefore = await counts(plant, [ph!, dissolvedOxygen!]);
      expect(readingsBefore.every((n) => n > 100)).toBe(true);

      const second = await created(plant);
      const refused = await upload(plant, second.id, mapping, file);
      expect(refused.statusCode).toBe(409);
      expect(refused.json().error).toContain(`The file's time range overlaps another unit operation: The equipment is in use by unit operation ${first.id}`);
      const secondAfter = (await ctx.request({ method: 'GET', url: `/api/v1/unit-operations/${second.id}`, token: plant.viewer.token })).json() as UnitOperationBody;
      expect(secondAfter.start_time).toBeNull();
      // Its series is empty (no window), and deleting it leaves the first one's readings alone.
      expect((await ctx.request({ method: 'GET', url: `/api/v1/unit-operations/${second.id}/time-series-data`, token: plant.viewer.token })).json()).toEqual([]);
      expect((await preview(plant, second.id)).total_readings).toBe(0);
      await deleteAndWait(plant, second.id);
      expect(await counts(plant, [ph!, dissolvedOxygen!])).toEqual(readingsBefore);
      const series = (await ctx.request({ method: 'GET', url: `/api/v1/unit-operations/${first.id}/time-series-data?limit=100000`, token: plant.viewer.token })).json() as unknown[];
      expect(series).toHaveLength(readingsBefore[0]! + readingsBefore[1]!);
    });
  });

  describe('deletes and replaces say what they touch, and touch only their own window', () => {
    it('answers the dry-run counts per instrument, then deletes exactly those, never another unit operation\'s readings', async () => {
      const plant = await plantWithRun(2);
      const [a, b] = plant.instrumentIds as [number, number];
      await writePoints(plant, [a, b], T0, 100); // minutes 0..99
      const mine = await created(plant, { start_time: iso(T0 + 10 * MINUTE), end_time: iso(T0 + 59 * MINUTE) });
      // A window saved before the one-at-a-time rule, overlapping minutes 50..69: not mine to delete.
      const { rows } = await ctx.deps.pg.query(
        `INSERT INTO unit_operations (organization_id, run_id, type, equipment_id, start_time, end_time) VALUES ($1, $2, 'centrifugation', $3, $4, $5) RETURNING id`,
        [plant.organizationId, runId, plant.equipmentId, new Date(T0 + 50 * MINUTE), new Date(T0 + 69 * MINUTE)]);
      const legacy = rows[0].id as number;
      const overlaps = await ctx.deps.pg.query('SELECT unit_operation_id, other_unit_operation_id FROM unit_operation_overlaps WHERE equipment_id = $1', [plant.equipmentId]);
      expect(overlaps.rows).toEqual([{ unit_operation_id: mine.id, other_unit_operation_id: legacy }]);

      const dryRun = await preview(plant, mine.id);
      expect(dryRun.ranges).toEqual([{ start_time: iso(T0 + 10 * MINUTE), end_time: iso(T0 + 50 * MINUTE - 1) }]);
      expect(dryRun.instruments.map((instrument) => [instrument.instrument_id, instrument.readings])).toEqual([[a, 40], [b, 40]]);
      expect(dryRun.total_readings).toBe(80);
      expect((await preview(plant, mine.id, [b])).instruments.map((instrument) => instrument.instrument_id)).toEqual([b]);
      const foreign = await ctx.request({ method: 'GET', url: `/api/v1/unit-operations/${mine.id}/deletion-preview?instrument_ids=99999999`, token: plant.viewer.token });
      expect(foreign.statusCode).toBe(400);
      // An upload into a unit operation whose window overlaps another waits until that is resolved.
      const intoOverlap = await upload(plant, mine.id, { timestamp_column: 't', columns: [{ column: 'v', instrument_id: a }] },
        { name: 'x.csv', content: `t,v\n${iso(T0 + 20 * MINUTE)},1\n` });
      expect(intoOverlap.statusCode).toBe(409);

      await deleteAndWait(plant, mine.id);
      expect(await counts(plant, [a, b])).toEqual([60, 60]);
      const legacySeries = (await ctx.request({ method: 'GET', url: `/api/v1/unit-operations/${legacy}/time-series-data?limit=1000`, token: plant.viewer.token })).json() as unknown[];
      expect(legacySeries).toHaveLength(40);
      const { rows: jobs } = await ctx.deps.pg.query(`SELECT result FROM ingest_jobs WHERE organization_id = $1 AND kind = 'deletion'`, [plant.organizationId]);
      expect(jobs.map((job) => job.result.points_removed)).toEqual([80]);

      // Audited with who, the instruments by name, the range and the points removed.
      const [event] = await waitForAuditRows(ctx, "organization_id = $1 AND action = 'delete_readings'", [plant.organizationId]);
      expect(event).toMatchObject({ event_type: 'data', resource_type: 'unit_operation', resource_id: String(mine.id), user_email: plant.editor.email, success: true });
      const names = await ctx.deps.pg.query('SELECT id, name FROM instruments WHERE id = ANY($1::bigint[]) ORDER BY id', [[a, b]]);
      expect((event!.changes as { before: unknown }).before).toEqual({
        instruments: names.rows.map((row) => ({ id: row.id, name: row.name })),
        start_time: iso(T0 + 10 * MINUTE), end_time: iso(T0 + 50 * MINUTE - 1), points_removed: 80, unit_operation_id: mine.id,
      });
    });

    it('replaces only when asked, only the mapped instruments, only inside the window, and audits the import', async () => {
      const plant = await plantWithRun(2);
      const [replacedInstrument, other] = plant.instrumentIds as [number, number];
      await writePoints(plant, [replacedInstrument, other], T0, 30); // minutes 0..29
      const unitOperation = await created(plant, { start_time: iso(T0 + 5 * MINUTE), end_time: iso(T0 + 14 * MINUTE) });
      const csv = `t,v\n${iso(T0 + 6 * MINUTE + 30_000)},100\n${iso(T0 + 7 * MINUTE + 30_000)},101\n`;
      const mapping = { timestamp_column: 't', columns: [{ column: 'v', instrument_id: replacedInstrument }] };
      // The default keeps every existing reading.
      const kept = await upload(plant, unitOperation.id, mapping, { name: 'keep.csv', content: csv });
      expect((kept.json() as JobStatus).result).toMatchObject({ replaced: false, points_removed: 0, points_written: 2 });
      expect(await counts(plant, [replacedInstrument, other])).toEqual([32, 30]);

      const dryRun = await preview(plant, unitOperation.id, [replacedInstrument]);
      expect(dryRun.total_readings).toBe(12);
      const replaced = await upload(plant, unitOperation.id, { ...mapping, replace_existing: true }, { name: 'replace.csv', content: csv });
      expect(replaced.statusCode).toBe(200);
      expect((replaced.json() as JobStatus).result).toMatchObject({
        replaced: true, points_removed: dryRun.total_readings, points_written: 2,
        replaced_range: { start_time: iso(T0 + 5 * MINUTE), end_time: iso(T0 + 14 * MINUTE) },
      });
      // Minutes 5..14 of the replaced instrument now hold only the file's two readings; nothing else moved.
      expect(await counts(plant, [replacedInstrument, other])).toEqual([20 + 2, 30]);

      const events = await waitForAuditRows(ctx, "organization_id = $1 AND action = 'import'", [plant.organizationId], 2);
      const names = await ctx.deps.pg.query('SELECT name FROM instruments WHERE id = $1', [replacedInstrument]);
      expect(events.at(-1)).toMatchObject({ event_type: 'data', resource_type: 'unit_operation', resource_id: String(unitOperation.id), user_email: plant.editor.email, success: true });
      expect((events.at(-1)!.changes as { after: unknown }).after).toMatchObject({
        unit_operation: "fermentation of run 'Batch 7'", file_name: 'replace.csv', file_bytes: Buffer.byteLength(csv),
        instruments: [{ id: replacedInstrument, name: names.rows[0].name, column: 'v' }], points_written: 2, points_removed: 12,
        replaced_range: { start_time: iso(T0 + 5 * MINUTE), end_time: iso(T0 + 14 * MINUTE) },
      });
      // The audit list names the resource.
      const list = await ctx.request({ method: 'GET', url: '/api/v1/audit/logs?limit=1000', token: (await ctx.createUser({ organizationId: plant.organizationId, role: 'admin' })).token });
      const entry = (list.json() as Array<{ event_id: string; resource_name: string | null }>).find((row) => row.event_id === events.at(-1)!.event_id);
      expect(entry?.resource_name).toBe("fermentation of run 'Batch 7'");
    });
  });

  describe('creating a unit operation with a file is one act', () => {
    function createWithUpload(plant: Plant, fields: { unit_operation: unknown; mapping: unknown }, file: { name: string; content: string }, wait = true) {
      const { body, contentType } = multipartBody({ unit_operation: JSON.stringify(fields.unit_operation), mapping: JSON.stringify(fields.mapping) }, file);
      return ctx.request({
        method: 'POST', url: `/api/v1/unit-operations/csv-uploads${wait ? '?wait=true' : ''}`, token: plant.editor.token,
        headers: { 'content-type': contentType }, payload: body,
      });
    }
    const unitOperationsOf = async (plant: Plant) =>
      (await ctx.deps.pg.query('SELECT id FROM unit_operations WHERE equipment_id = $1 ORDER BY id', [plant.equipmentId])).rows.map((row) => row.id as number);

    it('creates the unit operation with the file\'s window when the upload succeeds', async () => {
      const plant = await plantWithRun(1);
      const response = await createWithUpload(plant, {
        unit_operation: { run_id: runId, type: 'fermentation', equipment_id: plant.equipmentId },
        mapping: { timestamp_column: 't', columns: [{ column: 'v', instrument_id: plant.instrumentIds[0] }] },
      }, { name: 'ok.csv', content: `t,v\n${iso(T0)},1\n${iso(T0 + MINUTE)},2\n` });
      expect(response.statusCode, response.body).toBe(200);
      const { unit_operation: unitOperation, job } = response.json() as { unit_operation: UnitOperationBody; job: JobStatus };
      expect(job.state).toBe('completed');
      expect(await unitOperationsOf(plant)).toEqual([unitOperation.id]);
      const stored = (await ctx.request({ method: 'GET', url: `/api/v1/unit-operations/${unitOperation.id}`, token: plant.viewer.token })).json() as UnitOperationBody;
      expect([stored.start_time, stored.end_time]).toEqual([iso(T0), iso(T0 + MINUTE)]);
    });

    it('creates nothing when the request is refused, and removes the unit operation when the worker rejects the file', async () => {
      const plant = await plantWithRun(1);
      const base = { run_id: runId, type: 'fermentation', equipment_id: plant.equipmentId };
      const mapping = { timestamp_column: 't', columns: [{ column: 'v', instrument_id: plant.instrumentIds[0] }] };
      const good = { name: 'ok.csv', content: `t,v\n${iso(T0)},1\n` };
      const other = await createPlant(ctx, 1);
      const foreign = await createWithUpload(plant, { unit_operation: base, mapping: { ...mapping, columns: [{ column: 'v', instrument_id: other.instrumentIds[0] }] } }, good);
      expect(foreign.statusCode).toBe(400);
      const badWindow = await createWithUpload(plant, { unit_operation: { ...base, start_time: iso(T0 + MINUTE), end_time: iso(T0) }, mapping }, good);
      expect(badWindow.statusCode).toBe(400);
      await created(plant, { start_time: iso(T0 - MINUTE), end_time: iso(T0 + MINUTE) });
      const overlapping = await createWithUpload(plant, { unit_operation: { ...base, start_time: iso(T0), end_time: iso(T0 + 2 * MINUTE) }, mapping }, good);
      expect(overlapping.statusCode).toBe(409);
      const before = await unitOperationsOf(plant);
      expect(before).toHaveLength(1);
      const files = await readdir(ctx.env.UPLOAD_DIR).catch(() => [] as string[]);

      const nonNumeric = await createWithUpload(plant, { unit_operation: base, mapping }, { name: 'bad.csv', content: `t,v\n${iso(T0 + 10 * MINUTE)},1\n${iso(T0 + 11 * MINUTE)},abc\n` });
      expect(nonNumeric.statusCode).toBe(422);
      expect(nonNumeric.json().error).toBe("Column 'v' has non-numeric values: abc");
      expect(await unitOperationsOf(plant)).toEqual(before);
      // Without waiting: accepted (the unit operation exists meanwhile), then removed when the job fails.
      const accepted = await createWithUpload(plant, { unit_operation: base, mapping }, { name: 'bad.csv', content: `t,v\n${iso(T0 + 10 * MINUTE)},x\n` }, false);
      expect(accepted.statusCode).toBe(202);
      const { job } = accepted.json() as { job: JobStatus };
      expect((await waitForJobState(ctx, plant.editor.token, job.id)).state).toBe('failed');
      expect(await unitOperationsOf(plant)).toEqual(before);
      // The spooled file goes once the failure has committed.
      const spoolIs = async (expected: string[]) => JSON.stringify(await readdir(ctx.env.UPLOAD_DIR).catch(() => [] as string[])) === JSON.stringify(expected);
      await waitFor(() => spoolIs(files), 'the rejected file removed');
      // The failed import is audited, saying the unit operation went with it.
      const [event] = await waitForAuditRows(ctx, "organization_id = $1 AND action = 'import' AND success = false AND changes->'after'->>'file_name' = 'bad.csv'", [plant.organizationId]);
      expect((event!.changes as { after: Record<string, unknown> }).after).toMatchObject({ unit_operation_removed: true, points_written: 0 });
    });
  });

  describe('multipart parts in any order', () => {
    it('takes the file before the mapping, and removes the spooled file when the mapping is missing or bad', async () => {
      const plant = await plantWithRun(1);
      const unitOperation = await created(plant);
      const mapping = { timestamp_column: 't', columns: [{ column: 'v', instrument_id: plant.instrumentIds[0] }] };
      const boundary = '----bpFileFirst';
      const filePart = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="first.csv"\r\nContent-Type: text/csv\r\n\r\nt,v\n${iso(T0)},1\n\r\n`;
      const send = (parts: string) => ctx.request({
        method: 'POST', url: `/api/v1/unit-operations/${unitOperation.id}/csv-uploads?wait=true`, token: plant.editor.token,
        headers: { 'content-type': `multipart/form-data; boundary=${boundary}` }, payload: `${parts}--${boundary}--\r\n`,
      });
      const files = await readdir(ctx.env.UPLOAD_DIR).catch(() => [] as string[]);
      const missing = await send(filePart);
      expect(missing.statusCode).toBe(400);
      expect(missing.json()).toEqual({ error: 'mapping: required (a JSON multipart field)' });
      const bad = await send(`${filePart}--${boundary}\r\nContent-Disposition: form-data; name="mapping"\r\n\r\n{"columns":[]}\r\n`);
      expect(bad.statusCode).toBe(400);
      expect(await readdir(ctx.env.UPLOAD_DIR).catch(() => [] as string[])).toEqual(files);
      const ok = await send(`${filePart}--${boundary}\r\nContent-Disposition: form-data; name="mapping"\r\n\r\n${JSON.stringify(mapping)}\r\n`);
      expect(ok.statusCode, ok.body).toBe(200);
      expect((ok.json() as JobStatus).result).toMatchObject({ points_written: 1 });
    });
  });
});

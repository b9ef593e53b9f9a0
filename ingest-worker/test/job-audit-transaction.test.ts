/**
 * An upload or a deletion ends in one PostgreSQL transaction with its audit event: no finished job
 * without its event, no event for a job that did not finish. The fault: while a trigger refuses to
 * commit import and deletion events (as a PostgreSQL going away at that moment would), jobs that
 * reach their end cannot finish, and no event of theirs exists; once it is lifted each job finishes
 * with exactly one event saying how it ended.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlant, createTestContext, createUnitOperation, multipartBody, startWorker, type TestContext } from '@bioprocess/api/test-support';
import type { IngestWorker } from '../src/worker.ts';

const T0 = Date.UTC(2024, 9, 1);

/** Refuses, at commit, every transaction that wrote an import or deletion event, with an error the worker retries. */
const INSTALL_FAULT = `
  CREATE FUNCTION refuse_job_audit() RETURNS trigger AS $$
  BEGIN
    RAISE EXCEPTION 'audit store unavailable (test fault)' USING ERRCODE = '57P03';
  END;
  $$ LANGUAGE plpgsql;
  CREATE CONSTRAINT TRIGGER refuse_job_audit AFTER INSERT ON audit_outbox DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW WHEN (NEW.event->>'action' IN ('import', 'delete_readings')) EXECUTE FUNCTION refuse_job_audit();`;
const REMOVE_FAULT = 'DROP TRIGGER refuse_job_audit ON audit_outbox; DROP FUNCTION refuse_job_audit();';

describe('audit events of ingest jobs', () => {
  let ctx: TestContext;
  let worker: IngestWorker | undefined;

  beforeAll(async () => {
    ctx = await createTestContext();
  });
  afterAll(async () => {
    await worker?.close();
    await ctx?.close();
  });

  const jobRows = async (ids: string[]) => {
    const { rows } = await ctx.deps.pg.query<{ id: string; state: string; retrying_since: Date | null }>(
      'SELECT id, state, retrying_since FROM ingest_jobs WHERE id = ANY($1::uuid[])', [ids]);
    return new Map(rows.map((row) => [row.id, row]));
  };
  const eventsOf = async (ids: string[]) => {
    const { rows } = await ctx.deps.pg.query<{ event_id: string; event: { action: string; success: boolean } }>(
      'SELECT event_id, event FROM audit_outbox WHERE event_id = ANY($1::uuid[])', [ids]);
    return rows;
  };
  const upload = async (plant: Awaited<ReturnType<typeof createPlant>>, unitOperation: number, column: string, csv: string) => {
    const { body, contentType } = multipartBody(
      { mapping: JSON.stringify({ timestamp_column: 'time', columns: [{ column, instrument_id: plant.instrumentIds[0] }] }) },
      { name: 'run.csv', content: csv });
    const response = await ctx.request({ method: 'POST', url: `/api/v1/unit-operations/${unitOperation}/csv-uploads`, token: plant.editor.token,
      headers: { 'content-type': contentType }, payload: body });
    expect(response.statusCode).toBe(202);
    return response.json().id as string;
  };

  it('an upload, a deletion and a rejected upload each finish only together with their one audit event', async () => {
    const plant = await createPlant(ctx, 1);
    const rows = Array.from({ length: 50 }, (_, index) => `${new Date(T0 + index * 1000).toISOString()}`);
    const imported = await upload(plant, await createUnitOperation(ctx, plant), 'v', ['time,v', ...rows.map((time, index) => `${time},${index}`)].join('\n'));
    // Every timestamp unreadable: the worker rejects the file.
    const rejected = await upload(plant, await createUnitOperation(ctx, plant), 'v', ['time,v', ...rows.map((_, index) => `not a time ${index},${index}`)].join('\n'));
    const deletionAnswer = await ctx.request({ method: 'DELETE', url: '/api/v1/time-series-data', token: plant.editor.token,
      payload: { instrument_ids: [plant.instrumentIds[0]], start_time: new Date(T0 + 3_600_000).toISOString(), end_time: new Date(T0 + 7_200_000).toISOString() } });
    expect(deletionAnswer.statusCode).toBe(202);
    const deleted = deletionAnswer.headers['x-ingest-job-id'] as string;
    const ids = [imported, rejected, deleted];

    await ctx.deps.pg.query(INSTALL_FAULT);
    worker = startWorker(ctx, { INGEST_BACKOFF_MAX_MS: 200, INGEST_RECONCILE_MS: 500 });
    // Each job reached its end and was refused there at least once, then retried.
    const deadline = Date.now() + 60_000;
    for (;;) {
      const jobs = await jobRows(ids);
      if (ids.every((id) => jobs.get(id)?.retrying_since)) break;
      if (Date.now() > deadline) throw new Error(`jobs never reached their end: ${JSON.stringify([...jobs.values()])}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const during = await jobRows(ids);
    for (const id of ids) expect(during.get(id)?.state).toBe('running');
    expect(await eventsOf(ids)).toEqual([]);

    await ctx.deps.pg.query(REMOVE_FAULT);
    for (;;) {
      const jobs = await jobRows(ids);
      if (ids.every((id) => ['completed', 'failed'].includes(jobs.get(id)!.state))) break;
      if (Date.now() > deadline + 60_000) throw new Error('jobs did not finish once the fault was lifted');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const after = await jobRows(ids);
    expect([after.get(imported)!.state, after.get(rejected)!.state, after.get(deleted)!.state]).toEqual(['completed', 'failed', 'completed']);
    const events = new Map((await eventsOf(ids)).map((row) => [row.event_id, row.event]));
    expect(events.size).toBe(3);
    expect(events.get(imported)).toMatchObject({ action: 'import', success: true });
    expect(events.get(rejected)).toMatchObject({ action: 'import', success: false });
    expect(events.get(deleted)).toMatchObject({ action: 'delete_readings', success: true });
    // The rejected file is removed once its failure has committed.
    const { rows: request } = await ctx.deps.pg.query("SELECT request->>'file_path' AS file FROM ingest_jobs WHERE id = $1", [rejected]);
    expect(request[0].file).toBeTruthy();
    for (const removedBy = Date.now() + 20_000; existsSync(request[0].file as string);) {
      if (Date.now() > removedBy) throw new Error('the rejected file was not removed');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }, 150_000);
});

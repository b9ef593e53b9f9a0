import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { readSeries, startWorker, waitForJobState } from '../support/ingest.ts';
import type { IngestWorker } from '@bioprocess/ingest-worker';
import { INGEST_JOBS, bulkChunkDataKey } from '@bioprocess/shared/queues';
import { createIngestJob } from '../../src/ingest-jobs/jobs.ts';
import { createPlant, type Plant } from '../support/fixtures.ts';

const T0 = Date.UTC(2024, 0, 1);

describe('bulk writes and reads', () => {
  let ctx: TestContext;
  let worker: IngestWorker;
  let plant: Plant;
  beforeAll(async () => {
    ctx = await createTestContext();
    worker = startWorker(ctx);
    plant = await createPlant(ctx, 3);
  });
  afterAll(async () => {
    await worker.close();
    await ctx.close();
  });

  it('accepts points (all value forms), answers 202 with the readings and a job, and the data becomes queryable', async () => {
    const [a, b] = plant.instrumentIds;
    const data = [
      { measured_at: new Date(T0).toISOString(), instrument_id: a, int_value: 7 },
      { measured_at: new Date(T0 + 1000).toISOString(), instrument_id: a, float_value: 7.5 },
      { ts: new Date(T0 + 2000).toISOString(), instrument_id: a, value: null },
      { ts: T0, instrument_id: b, value: -1.25e3 },
    ];
    const response = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk', token: plant.editor.token, payload: { data } });
    expect(response.statusCode).toBe(202);
    const jobId = response.headers['x-ingest-job-id'] as string;
    expect(response.headers.location).toBe(`/api/v1/ingest-jobs/${jobId}`);
    expect(response.json()).toEqual([
      { ts: '2024-01-01T00:00:00.000Z', instrument_id: a, value: 7 },
      { ts: '2024-01-01T00:00:01.000Z', instrument_id: a, value: 7.5 },
      { ts: '2024-01-01T00:00:02.000Z', instrument_id: a, value: null },
      { ts: '2024-01-01T00:00:00.000Z', instrument_id: b, value: -1250 },
    ]);
    const job = await waitForJobState(ctx, plant.editor.token, jobId);
    expect(job).toMatchObject({ kind: 'bulk', state: 'completed', error: null });
    expect(job.progress.points_written).toBe(4);

    const readings = await readSeries(ctx, plant.viewer.token, { instrument_id: a! });
    expect(readings).toEqual([
      { ts: '2024-01-01T00:00:00.000Z', instrument_id: a, value: 7 },
      { ts: '2024-01-01T00:00:01.000Z', instrument_id: a, value: 7.5 },
      { ts: '2024-01-01T00:00:02.000Z', instrument_id: a, value: null },
    ]);
    const byEquipment = await readSeries(ctx, plant.viewer.token, { equipment_id: plant.equipmentId });
    expect(byEquipment).toHaveLength(4);
  });

  it('answers 200 once queryable with ?wait=true, and a later write of the same key wins', async () => {
    const c = plant.instrumentIds[2]!;
    const first = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk?wait=true', token: plant.editor.token,
      payload: { data: [{ measured_at: T0, instrument_id: c, float_value: 1 }, { measured_at: T0, instrument_id: c, float_value: 2 }] } });
    expect(first.statusCode).toBe(200);
    expect(await readSeries(ctx, plant.viewer.token, { instrument_id: c })).toEqual([{ ts: '2024-01-01T00:00:00.000Z', instrument_id: c, value: 2 }]);
    const second = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk?wait=true', token: plant.editor.token,
      payload: { data: [{ measured_at: T0, instrument_id: c, float_value: 3 }] } });
    expect(second.statusCode).toBe(200);
    expect(await readSeries(ctx, plant.viewer.token, { instrument_id: c })).toEqual([{ ts: '2024-01-01T00:00:00.000Z', instrument_id: c, value: 3 }]);
  });

  it('keeps a point\'s microseconds, quality code and historical flag, and reads two readings less than a millisecond apart as one (the later wins)', async () => {
    const own = await createPlant(ctx, 1);
    const [d] = own.instrumentIds as [number];
    const at = T0 + 3_600_000;
    const iso = (ms: number, micros: string) => new Date(ms).toISOString().replace('Z', `${micros}Z`);
    const posted = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk?wait=true', token: own.editor.token, payload: { data: [
      { ts: iso(at, '250'), instrument_id: d, value: 1, quality: 2_156_658_688 },
      { ts: iso(at + 1, '001'), instrument_id: d, value: null, quality: 0, historical: true },
      { ts: at + 2.5, instrument_id: d, value: 3 },
      // The same millisecond as the first: one reading, this later one wins with its own details.
      { ts: iso(at, '900'), instrument_id: d, value: 4, historical: true },
    ] } });
    expect(posted.statusCode, posted.body).toBe(200);
    expect(await readSeries(ctx, own.viewer.token, { instrument_id: d })).toEqual([
      { ts: iso(at, '900'), instrument_id: d, value: 4, historical: true },
      { ts: iso(at + 1, '001'), instrument_id: d, value: null, quality: 0, historical: true },
      { ts: iso(at + 2, '500'), instrument_id: d, value: 3 },
    ]);
    // Rollups count readings per millisecond key: three.
    const result = await ctx.deps.clickhouse.query({
      query: `SELECT sum(points) AS n FROM (SELECT argMax(points, version) AS points FROM points_rollup_1m
        WHERE organization_id = ${own.organizationId} AND instrument_id = ${d} GROUP BY minute)`, format: 'JSONEachRow',
    });
    expect(Number((await result.json<{ n: string }>())[0]!.n)).toBe(3);
  });

  it('lets a later empty reading replace a value, in raw reads and in the minute rollups', async () => {
    const own = await createPlant(ctx, 1);
    const c = own.instrumentIds[0]!;
    const start = T0 + 3 * 86_400_000;
    const post = (data: unknown[]) => ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk?wait=true', token: own.editor.token, payload: { data } });
    expect((await post([{ ts: start, instrument_id: c, value: 5 }, { ts: start + 1000, instrument_id: c, value: 7 }])).statusCode).toBe(200);
    expect((await post([{ ts: start, instrument_id: c, value: null }])).statusCode).toBe(200);
    const range = { instrument_id: c, start_time: new Date(start).toISOString(), end_time: new Date(start + 59_999).toISOString() };
    expect((await readSeries(ctx, own.viewer.token, range)).map((reading) => reading.value)).toEqual([null, 7]);
    const [minute] = await readSeries(ctx, own.viewer.token, { ...range, bucket: '1m' });
    expect(minute).toMatchObject({ value: 7, min: 7, max: 7 });
    // Emptied entirely, the minute's newest figures hold no minimum or maximum; older ones must not show through.
    expect((await post([{ ts: start + 1000, instrument_id: c, value: null }])).statusCode).toBe(200);
    const [emptied] = await readSeries(ctx, own.viewer.token, { ...range, bucket: '1m' });
    expect(emptied).toMatchObject({ value: null, min: null, max: null });
  });

  it('stores every value exactly as posted, also those ClickHouse 18.16 reads wrongly from text, with exact minute rollups', async () => {
    const own = await createPlant(ctx, 1);
    const c = own.instrumentIds[0]!;
    // Decimals that 18.16's text parser reads to a neighbouring double (1.2600393 -> 1.2600392999999999).
    const texts = ['1.2600393', '2.776232', '15.633470', '1.52170646491', '-8.8982463382516537', '0.1'];
    const start = T0 + 7 * 86_400_000;
    const body = `{"data":[${texts.map((text, index) => `{"ts":${start + index * 1000},"instrument_id":${c},"float_value":${text}}`).join(',')}]}`;
    const response = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk?wait=true', token: own.editor.token,
      headers: { 'content-type': 'application/json' }, payload: body });
    expect(response.statusCode).toBe(200);
    const range = { instrument_id: c, start_time: new Date(start).toISOString(), end_time: new Date(start + 59_999).toISOString() };
    const readings = await readSeries(ctx, own.viewer.token, range);
    expect(readings.map((reading) => reading.value)).toEqual(texts.map(Number));
    // The whole minute is read from its rollup: its minimum and maximum are stored values, bit for bit.
    const [minute] = await readSeries(ctx, own.viewer.token, { ...range, bucket: '1m' });
    expect(minute).toMatchObject({ min: Math.min(...texts.map(Number)), max: Math.max(...texts.map(Number)) });
  });

  it('still writes a chunk queued by an older api, whose rows are TSV and whose job names no format', async () => {
    const own = await createPlant(ctx, 1);
    const instrumentId = own.instrumentIds[0]!;
    const start = T0 + 9 * 86_400_000;
    const principal = { kind: 'session' as const, userId: own.editor.id, sessionId: null, apiKeyId: null, email: own.editor.email, name: own.editor.name,
      organizationId: own.organizationId, roles: [own.editor.role], superuser: false };
    const { job } = await createIngestJob(ctx.deps.pg, principal, {
      kind: 'bulk', chunkCount: 1, request: { instrument_ids: [instrumentId], start_ms: start, end_ms: start + 1000, points: 2 },
    });
    const version = (index: number) => `${job.version_seq}${String(index + 1).padStart(10, '0')}`;
    const tsv = `${own.organizationId}\t${instrumentId}\t${start}\t1.5\t${version(0)}\t0\n${own.organizationId}\t${instrumentId}\t${start + 1000}\t\\N\t${version(1)}\t0\n`;
    // What an older api did: the rows in Redis beside a job that names no format.
    await ctx.deps.redis.set(bulkChunkDataKey(ctx.env.QUEUE_PREFIX, job.id, 0), tsv, 'EX', 3600);
    await ctx.deps.queues.ingestBulk.add(INGEST_JOBS.bulkChunk,
      { job_id: job.id, organization_id: own.organizationId, version_seq: Number(job.version_seq), chunk_index: 0, chunk_count: 1, points: 2 },
      { jobId: `${job.id}-c0`, attempts: 3 });
    expect(await waitForJobState(ctx, own.editor.token, job.id)).toMatchObject({ state: 'completed' });
    expect(await readSeries(ctx, own.viewer.token, { instrument_id: instrumentId })).toEqual([
      { ts: new Date(start).toISOString(), instrument_id: instrumentId, value: 1.5 },
      { ts: new Date(start + 1000).toISOString(), instrument_id: instrumentId, value: null },
    ]);
  });

  it('still writes a chunk recorded by an api from before the readings\' source details, whose RowBinary rows end at is_deleted', async () => {
    const own = await createPlant(ctx, 1);
    const instrumentId = own.instrumentIds[0]!;
    const start = T0 + 10 * 86_400_000;
    const principal = { kind: 'session' as const, userId: own.editor.id, sessionId: null, apiKeyId: null, email: own.editor.email, name: own.editor.name,
      organizationId: own.organizationId, roles: [own.editor.role], superuser: false };
    const { job } = await createIngestJob(ctx.deps.pg, principal, {
      kind: 'bulk', chunkCount: 1,
      request: { instrument_ids: [instrumentId], start_ms: start, end_ms: start + 1000, points: 2, rows_format: 'RowBinary', versions_from_job: true },
    });
    // The older layout, versions to be stamped with the job's: organization, instrument, ts, Nullable(Float64), version (the suffix), is_deleted.
    const row = (ts: number, value: number | null, suffix: number) => {
      const bytes = Buffer.alloc(value === null ? 34 : 42);
      bytes.writeBigUInt64LE(BigInt(own.organizationId), 0);
      bytes.writeBigUInt64LE(BigInt(instrumentId), 8);
      bytes.writeBigInt64LE(BigInt(ts), 16);
      let offset = 24;
      if (value === null) bytes[offset++] = 1;
      else {
        bytes[offset++] = 0;
        bytes.writeDoubleLE(value, offset);
        offset += 8;
      }
      bytes.writeBigUInt64LE(BigInt(suffix), offset);
      return bytes;
    };
    await ctx.deps.redis.set(bulkChunkDataKey(ctx.env.QUEUE_PREFIX, job.id, 0), Buffer.concat([row(start, 2.5, 1), row(start + 1000, null, 2)]), 'EX', 3600);
    await ctx.deps.queues.ingestBulk.add(INGEST_JOBS.bulkChunk,
      { job_id: job.id, organization_id: own.organizationId, version_seq: Number(job.version_seq), chunk_index: 0, chunk_count: 1, points: 2, format: 'RowBinary' },
      { jobId: `${job.id}-c0`, attempts: 3 });
    expect(await waitForJobState(ctx, own.editor.token, job.id)).toMatchObject({ state: 'completed' });
    expect(await readSeries(ctx, own.viewer.token, { instrument_id: instrumentId })).toEqual([
      { ts: new Date(start).toISOString(), instrument_id: instrumentId, value: 2.5 },
      { ts: new Date(start + 1000).toISOString(), instrument_id: instrumentId, value: null },
    ]);
  });

  it('rejects a post naming the first bad index and writes nothing', async () => {
    const [a] = plant.instrumentIds;
    const cases: Array<[unknown[], string]> = [
      [[{ measured_at: T0, instrument_id: a, float_value: 1 }, { measured_at: 'yesterday', instrument_id: a, float_value: 1 }], 'data.1.measured_at: Invalid date format.'],
      [[{ measured_at: T0, instrument_id: a, float_value: 1, int_value: 2 }], 'data.0: exactly one of int_value, float_value or value is required'],
      [[{ measured_at: T0, instrument_id: a }], 'data.0: exactly one of int_value, float_value or value is required'],
      [[{ measured_at: T0, instrument_id: a, value: 1 }, { measured_at: T0, instrument_id: 999999, value: 1 }], 'data.1.instrument_id: instrument not found'],
      [[{ instrument_id: a, value: 1 }], 'data.0.measured_at: a timestamp (measured_at or ts) is required'],
      [[{ measured_at: T0, instrument_id: a, int_value: 1.5 }], 'data.0.int_value: must be an integer'],
    ];
    for (const [data, message] of cases) {
      const response = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk', token: plant.editor.token, payload: { data } });
      expect(response.statusCode, JSON.stringify(data)).toBe(400);
      expect(response.json().error).toBe(message);
    }
    const infinite = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk', token: plant.editor.token,
      headers: { 'content-type': 'application/json' },
      payload: '{"data":[{"measured_at":0,"instrument_id":1,"value":1e999}]}' });
    expect(infinite.statusCode).toBe(400);
    expect(infinite.json().error).toMatch(/^data\.0\.value: /);
    const notAList = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk', token: plant.editor.token, payload: { data: 'x' } });
    expect(notAList.json()).toEqual({ error: 'data: must be a list of points' });
    const badShape = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk', token: plant.editor.token,
      payload: { data: [{ measured_at: T0, instrument_id: a, value: 1 }, { measured_at: T0, instrument_id: 'seven', value: 1 }] } });
    expect(badShape.json()).toEqual({ error: 'data.1.instrument_id: must be a positive integer' });
    const empty = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk', token: plant.editor.token, payload: { data: [] } });
    expect(empty.json()).toEqual({ error: 'data: data must hold at least one point' });
    const { rows } = await ctx.deps.pg.query('SELECT count(*)::int AS n FROM ingest_jobs WHERE organization_id = $1', [plant.organizationId]);
    expect(rows[0].n).toBe(3); // only the accepted posts of the tests above
  });

  it('keeps organisations apart and enforces roles', async () => {
    const other = await createPlant(ctx, 1);
    const foreign = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk', token: other.editor.token,
      payload: { data: [{ measured_at: T0, instrument_id: plant.instrumentIds[0], value: 1 }] } });
    expect(foreign.statusCode).toBe(400);
    expect(foreign.json().error).toBe('data.0.instrument_id: instrument not found');
    const read = await ctx.request({ method: 'GET', url: `/api/v1/time-series-data?instrument_id=${plant.instrumentIds[0]}`, token: other.viewer.token });
    expect(read.statusCode).toBe(404);
    const viewerWrite = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk', token: plant.viewer.token,
      payload: { data: [{ measured_at: T0, instrument_id: plant.instrumentIds[0], value: 1 }] } });
    expect(viewerWrite.statusCode).toBe(403);
    const anonymous = await ctx.request({ method: 'GET', url: '/api/v1/time-series-data' });
    expect(anonymous.statusCode).toBe(401);
  });

  it('makes a retried post with the same Idempotency-Key a no-op returning the original job', async () => {
    const [, b] = plant.instrumentIds;
    const payload = { data: [{ measured_at: T0 + 60_000, instrument_id: b, value: 42 }] };
    const headers = { 'idempotency-key': 'feed-batch-17' };
    const first = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk?wait=true', token: plant.editor.token, payload, headers });
    const retry = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk?wait=true', token: plant.editor.token, payload, headers });
    expect(first.statusCode).toBe(200);
    expect(retry.statusCode).toBe(200);
    expect(retry.headers['x-ingest-job-id']).toBe(first.headers['x-ingest-job-id']);
    const { rows } = await ctx.deps.pg.query("SELECT count(*)::int AS n FROM ingest_jobs WHERE idempotency_key = 'feed-batch-17'");
    expect(rows[0].n).toBe(1);
  });

  it('works with an organisation API key', async () => {
    const { createHash, randomBytes } = await import('node:crypto');
    const key = `bpk_${randomBytes(24).toString('base64url')}`;
    await ctx.deps.pg.query(
      `INSERT INTO api_keys (organization_id, name, key_hash, key_prefix, role) VALUES ($1, 'feed', $2, $3, 'editor')`,
      [plant.organizationId, createHash('sha256').update(key).digest('hex'), key.slice(0, 8)]);
    const response = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk?wait=true', token: key,
      payload: { data: [{ measured_at: T0 + 120_000, instrument_id: plant.instrumentIds[1], float_value: 5 }] } });
    expect(response.statusCode).toBe(200);
  });

  it('shows job status only to its organisation and streams progress as server-sent events', async () => {
    const post = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk?wait=true', token: plant.editor.token,
      payload: { data: [{ measured_at: T0 + 180_000, instrument_id: plant.instrumentIds[0], value: 1 }] } });
    const jobId = post.headers['x-ingest-job-id'] as string;
    const other = await createPlant(ctx, 1);
    const hidden = await ctx.request({ method: 'GET', url: `/api/v1/ingest-jobs/${jobId}`, token: other.viewer.token });
    expect(hidden.statusCode).toBe(404);
    const events = await ctx.request({ method: 'GET', url: `/api/v1/ingest-jobs/${jobId}/events`, token: plant.viewer.token });
    expect(events.statusCode).toBe(200);
    expect(events.headers['content-type']).toContain('text/event-stream');
    expect(events.body).toContain('event: progress');
    expect(events.body).toContain('"state":"completed"');
    expect(events.body).toContain('event: end');
    const missing = await ctx.request({ method: 'GET', url: '/api/v1/ingest-jobs/00000000-0000-4000-8000-000000000000/events', token: plant.viewer.token });
    expect(missing.statusCode).toBe(404);
  });

  it('answers Prefer: return=minimal with an empty answer and stores the same points, small posts and large', async () => {
    const instrument = plant.instrumentIds[2]!;
    const from = T0 + 86_400_000;
    const minimal = (data: unknown[], url = '/api/v1/time-series-data/bulk?wait=true') =>
      ctx.request({ method: 'POST', url, token: plant.editor.token, headers: { prefer: 'respond-async, return="minimal"; x=1' }, payload: { data } });
    // 400 points: a body above the size parsed in place, so a parsing thread writes it.
    const large = Array.from({ length: 400 }, (_, index) => ({ measured_at: from + index * 1000, instrument_id: instrument, float_value: index / 8 }));
    const answered = await minimal(large);
    expect(answered.statusCode).toBe(200);
    expect(answered.body).toBe('');
    expect(answered.headers['preference-applied']).toBe('return=minimal');
    expect(answered.headers['x-ingest-job-id']).toBeTruthy();
    const queued = await minimal([{ measured_at: from + 400_000, instrument_id: instrument, int_value: 9 }], '/api/v1/time-series-data/bulk');
    expect(queued.statusCode).toBe(202);
    expect(queued.body).toBe('');
    expect(queued.headers.location).toBe(`/api/v1/ingest-jobs/${queued.headers['x-ingest-job-id'] as string}`);
    await waitForJobState(ctx, plant.editor.token, queued.headers['x-ingest-job-id'] as string);

    const stored = await readSeries(ctx, plant.viewer.token, { instrument_id: instrument, start_time: new Date(from).toISOString(), limit: 1000 });
    expect(stored).toEqual([
      ...large.map((point) => ({ ts: new Date(point.measured_at).toISOString(), instrument_id: instrument, value: point.float_value })),
      { ts: new Date(from + 400_000).toISOString(), instrument_id: instrument, value: 9 },
    ]);
    // Without the preference the answer echoes the readings as before.
    const echoed = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk?wait=true', token: plant.editor.token, headers: { prefer: 'return=representation' },
      payload: { data: [{ measured_at: from + 401_000, instrument_id: instrument, float_value: 1 }] } });
    expect(echoed.headers['preference-applied']).toBeUndefined();
    expect(echoed.json()).toEqual([{ ts: new Date(from + 401_000).toISOString(), instrument_id: instrument, value: 1 }]);
  });
});

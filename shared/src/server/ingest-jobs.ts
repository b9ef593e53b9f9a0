/**
 * The ingest_jobs repository: every statement on `ingest_jobs` and on the data jobs carry
 * (`ingest_job_data`), for the api (creating and reading jobs, counting uploads in flight, the jobs a
 * run's review report and signed content name), the ingest-worker (starting, progress, completion, failure) and its reconciler and sweeper. A job row
 * says what was accepted (the record a 202 stands on) and how far its writing got.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { EMPTY_PROGRESS, type IngestJobKind, type IngestJobState, type IngestProgress } from '../timeseries.ts';
import type { RangeOnInstruments } from '../ingest/requests.ts';

type Db = pg.Pool | pg.PoolClient;

/** Who a job is recorded for: the principal that made the request. */
export interface JobOwner {
  organizationId: number;
  userId: number | null;
  apiKeyId: number | null;
}

export interface IngestJobRow {
  id: string;
  organization_id: number;
  kind: IngestJobKind;
  state: IngestJobState;
  version_seq: number;
  request: Record<string, unknown>;
  chunk_count: number;
  progress: IngestProgress;
  result: Record<string, unknown> | null;
  error: string | null;
  idempotency_key?: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface NewIngestJob {
  /** The job's id, when the caller needs it before the row exists (else one is made). */
  id?: string;
  kind: IngestJobKind;
  idempotencyKey?: string | null;
  /** A version drawn beforehand (version-draws.ts; else one is drawn with the job). */
  versionSeq?: number;
  request: Record<string, unknown>;
  chunkCount?: number;
  progress?: Partial<IngestProgress>;
  /** A range deletion recorded with the job's version (queued deletions). */
  deletion?: { instrumentIds: number[]; startMs: number; endMs: number };
  /** What the job works on, stored with the row (`ingest_job_data`): bulk chunks' rows and figures by part. */
  data?: Array<{ part: number; bytes: Uint8Array }>;
}

const JOB_COLUMNS = 'id, organization_id, kind, state, version_seq, request, chunk_count, progress, result, error, idempotency_key, created_at, updated_at';


/**
 * Creates several jobs, each with its data, in one statement (atomic without a transaction's round
 * trips): a job row never exists without its data, and a replayed idempotent request stores nothing
 * twice. Answers in the order given; a job whose idempotency key was used before (or earlier in the
 * same list) answers that job, with `created` false.
 */
export async function insertIngestJobs(
  db: Db, entries: ReadonlyArray<{ principal: JobOwner; job: NewIngestJob }>,
): Promise<Array<{ job: IngestJobRow; created: boolean }>> {
  const ids = entries.map(({ job }) => job.id ?? randomUUID());
  // The jobs as one JSON document and their data as arrays: the statement's text never changes, so it
  // is prepared once per connection (a VALUES list of a dozen parameters per job was parsed and
  // planned again for every batch, a third of PostgreSQL's work for feeds).
  const jobs = entries.map(({ principal, job }, index) => ({
    id: ids[index], organization_id: principal.organizationId, kind: job.kind,
    version_seq: job.versionSeq ?? null, created_by: principal.userId, api_key_id: principal.apiKeyId,
    idempotency_key: job.idempotencyKey ?? null, request: job.request, chunk_count: job.chunkCount ?? 0,
    progress: { ...EMPTY_PROGRESS, ...job.progress },
  }));
  const data = entries.flatMap(({ job }, index) => (job.data ?? []).map(({ part, bytes }) => ({ jobId: ids[index]!, part, bytes })));
  // The data goes as one bytea with each item's place in it: a bytea[] parameter is sent as text, two
  // hex digits a byte, for the api to write and PostgreSQL to parse back; a bytea alone is sent as it is.
  const starts: number[] = [];
  let end = 1;
  for (const item of data) {
    starts.push(end);
    end += item.bytes.length;
  }
  const { rows } = await db.query<IngestJobRow>({
    name: 'insert-ingest-jobs',
    text: `WITH job AS (
       INSERT INTO ingest_jobs (id, organization_id, kind, state, version_seq, created_by, api_key_id, idempotency_key, request, chunk_count, progress)
       SELECT id, organization_id, kind, 'queued', COALESCE(version_seq, nextval('time_series_version_seq')), created_by, api_key_id,
              idempotency_key, request, chunk_count, progress
         FROM jsonb_to_recordset($1::jsonb) AS input (id uuid, organization_id bigint, kind text, version_seq bigint,
              created_by bigint, api_key_id bigint, idempotency_key text, request jsonb, chunk_count integer, progress jsonb)
       ON CONFLICT (organization_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
       RETURNING ${JOB_COLUMNS}
     ), stored AS (
       INSERT INTO ingest_job_data (job_id, part, bytes)
       SELECT data.job_id, data.part, substring($4::bytea FROM data.start FOR data.length)
         FROM unnest($2::uuid[], $3::integer[], $5::integer[], $6::integer[]) AS data (job_id, part, start, length)
         JOIN job ON job.id = data.job_id
     )
     SELECT * FROM job`,
    values: [
      JSON.stringify(jobs), data.map((item) => item.jobId), data.map((item) => item.part),
      Buffer.concat(data.map((item) => item.bytes)), starts, data.map((item) => item.bytes.length),
    ],
  });
  const created = new Map(rows.map((row) => [row.id, row]));
  const replayed = entries.filter((_, index) => !created.has(ids[index]!));
  const existing = new Map<string, IngestJobRow>();
  if (replayed.length > 0) {
    const found = await db.query<IngestJobRow>(
      `SELECT ${JOB_COLUMNS} FROM ingest_jobs
        WHERE (organization_id, idempotency_key) IN (SELECT * FROM unnest($1::bigint[], $2::text[]))`,
      [replayed.map(({ principal }) => principal.organizationId), replayed.map(({ job }) => job.idempotencyKey)],
    );
    for (const row of found.rows) existing.set(`${row.organization_id}:${row.idempotency_key}`, row);
  }
  return entries.map(({ principal, job }, index) => {
    const row = created.get(ids[index]!);
    if (row) return { job: row, created: true };
    const earlier = existing.get(`${principal.organizationId}:${job.idempotencyKey}`);
    if (!earlier) throw new Error('An ingest job neither created nor found by its idempotency key');
    return { job: earlier, created: false };
  });
}

/** The job of the organisation; null when there is none (another organisation's job does not exist for it). */
export async function findIngestJob(db: Db, organizationId: number, jobId: string): Promise<IngestJobRow | null> {
  if (!/^[0-9a-f-]{36}$/i.test(jobId)) return null;
  const { rows } = await db.query<IngestJobRow>(`SELECT ${JOB_COLUMNS} FROM ingest_jobs WHERE id = $1 AND organization_id = $2`, [jobId, organizationId]);
  return rows[0] ?? null;
}

/** Completes an unfinished job; answers whether it did (false: it had already finished). */
export async function completeJob(db: Db, jobId: string, result: Record<string, unknown>, progress?: Partial<IngestProgress>): Promise<boolean> {
  const { rows } = await db.query(
    `UPDATE ingest_jobs SET state = 'completed', result = $2, progress = progress || $3::jsonb, error = NULL,
            updated_at = now(), finished_at = now()
      WHERE id = $1 AND state IN ('queued', 'running') RETURNING id`,
    [jobId, JSON.stringify(result), JSON.stringify(progress ?? {})],
  );
  return rows.length > 0;
}

/**
 * Deletes the stored data (`ingest_job_data`) of the given jobs that finished; answers the rows removed.
 * A finished job never needs its data again; one not finished keeps it.
 */
export async function deleteFinishedJobData(pool: Db, jobIds: readonly string[]): Promise<number> {
  if (jobIds.length === 0) return 0;
  const { rowCount } = await pool.query(
    `DELETE FROM ingest_job_data d USING ingest_jobs j
      WHERE d.job_id = ANY($1::uuid[]) AND j.id = d.job_id AND j.state IN ('completed', 'failed')`,
    [jobIds],
  );
  return rowCount ?? 0;
}

/**
 * Notes that the jobs (one, or a batch of bulk posts) failed for a reason that may pass; answers how
 * long the longest-failing of them has been failing so (since its first such failure after its last
 * progress: a committed CSV batch or a written chunk starts the count again), in seconds.
 */
export async function noteTransientFailure(pool: Db, jobIds: readonly string[]): Promise<number> {
  const { rows } = await pool.query<{ seconds: number | null }>(
    `WITH noted AS (
       UPDATE ingest_jobs SET retrying_since = COALESCE(retrying_since, now()), updated_at = now() WHERE id = ANY($1::uuid[])
       RETURNING retrying_since
     )
     SELECT EXTRACT(EPOCH FROM now() - min(retrying_since))::float8 AS seconds FROM noted`,
    [jobIds],
  );
  return rows[0]?.seconds ?? 0;
}

export async function updateProgress(pool: Db, jobId: string, progress: Partial<IngestProgress>, checkpoint?: unknown): Promise<void> {
  await pool.query(
    `UPDATE ingest_jobs SET progress = progress || $2::jsonb, checkpoint = COALESCE($3::jsonb, checkpoint), updated_at = now(),
            retrying_since = CASE WHEN $3::jsonb IS NULL THEN retrying_since END
      WHERE id = $1`,
    [jobId, JSON.stringify(progress), checkpoint === undefined ? null : JSON.stringify(checkpoint)],
  );
}

/**
 * Records a finished bulk chunk; answers whether every chunk of the job is now done. Adding the same
 * chunk twice (a retried job) is a no-op.
 */
export async function recordChunkDone(pool: Db, jobId: string, chunkIndex: number, points: number): Promise<{ allDone: boolean }> {
  return (await recordChunksDone(pool, [{ jobId, chunkIndex, points }]))[0] ?? { allDone: false };
}

/** recordChunkDone for chunks of several jobs (one chunk per job) in one statement; answers in the order given. */
export async function recordChunksDone(
  pool: Db, chunks: ReadonlyArray<{ jobId: string; chunkIndex: number; points: number }>,
): Promise<Array<{ allDone: boolean }>> {
  if (chunks.length === 0) return [];
  const { rows } = await pool.query<{ id: string; done: number; chunk_count: number }>(
    `UPDATE ingest_jobs j
        SET chunks_done = CASE WHEN c.chunk = ANY(j.chunks_done) THEN j.chunks_done ELSE array_append(j.chunks_done, c.chunk) END,
            progress = CASE WHEN c.chunk = ANY(j.chunks_done) THEN j.progress
                       ELSE jsonb_set(j.progress, '{points_written}', to_jsonb(COALESCE((j.progress->>'points_written')::bigint, 0) + c.points)) END,
            updated_at = now(), retrying_since = NULL
       FROM unnest($1::uuid[], $2::integer[], $3::bigint[]) AS c (id, chunk, points)
      WHERE j.id = c.id
      RETURNING j.id, cardinality(j.chunks_done) AS done, j.chunk_count`,
    [chunks.map((chunk) => chunk.jobId), chunks.map((chunk) => chunk.chunkIndex), chunks.map((chunk) => chunk.points)],
  );
  const byId = new Map(rows.map((row) => [row.id, row]));
  return chunks.map(({ jobId }) => {
    const row = byId.get(jobId);
    return { allDone: Boolean(row) && Number(row!.done) >= Number(row!.chunk_count) };
  });
}

export interface JobRecord {
  state: string;
  organization_id: number;
  version_seq: number;
  /** Bulk chunks already written. */
  chunks_done: number[];
  request: Record<string, unknown>;
  checkpoint: Record<string, unknown> | null;
  progress: IngestProgress;
}

/** Marks a queued job running and answers its record (null when the row is gone), in one round trip. */
export async function startJob(pool: Db, jobId: string): Promise<JobRecord | null> {
  return (await startJobs(pool, [jobId])).get(jobId) ?? null;
}

/** startJob for several jobs in one round trip: the records of the rows that exist, by job id. */
export async function startJobs(pool: Db, jobIds: readonly string[]): Promise<Map<string, JobRecord>> {
  const { rows } = await pool.query<JobRecord & { id: string }>(
    `WITH started AS (
       UPDATE ingest_jobs SET state = 'running', updated_at = now() WHERE id = ANY($1::uuid[]) AND state = 'queued' RETURNING id
     )
     SELECT id, CASE WHEN id IN (SELECT id FROM started) THEN 'running' ELSE state END AS state, chunks_done, request, checkpoint, progress,
            organization_id, version_seq
       FROM ingest_jobs WHERE id = ANY($1::uuid[])`,
    [jobIds],
  );
  return new Map(rows.map(({ id, ...record }) => [id, record]));
}

/**
 * The records of a batch of small bulk posts, by job id, each with its rows (null when it has none),
 * read without marking them running: they go from queued to completed within one short job, and the
 * update would rewrite every row once more (a third of PostgreSQL's work for feeds posting once a
 * second).
 */
export async function batchJobsWithRows(db: Db, jobIds: readonly string[]): Promise<Map<string, JobRecord & { rows: Buffer | null }>> {
  // The rows as base64 rather than bytea's hex text: a third less to receive and decode (the driver
  // reads every field as a string; its binary mode does not keep bytes).
  const { rows } = await db.query<JobRecord & { id: string; data: string | null }>({
    name: 'batch-jobs-with-rows',
    text: `SELECT j.id, j.state, j.chunks_done, j.request, j.checkpoint, j.progress, j.organization_id, j.version_seq,
                  encode(d.bytes, 'base64') AS data
             FROM ingest_jobs j LEFT JOIN ingest_job_data d ON d.job_id = j.id AND d.part = 0
            WHERE j.id = ANY($1::uuid[])`,
    values: [jobIds],
  });
  return new Map(rows.map(({ id, data, ...record }) => [id, { ...record, rows: data === null ? null : Buffer.from(data, 'base64') }]));
}

/**
 * Fails the job. A unit operation created together with its first upload (`created_unit_operation_id`
 * in the job's request) exists only if that upload succeeds: it is removed in the same statement that
 * fails the job, whoever fails it (the api when the job cannot be queued, the worker when the file is
 * rejected or retries run out). `result` says more about the failure (e.g. `conflict`: the api answers
 * a waiting request with 409).
 *
 * The one statement on `unit_operations` outside its repository (server/unit-operations-repository.ts):
 * `db` may be a pool, and only one statement makes failing the job and removing its unit operation
 * happen together or not at all; a second statement from the repository would leave a failed job
 * beside a unit operation it was meant to take with it whenever the connection dropped in between.
 */
export async function failIngestJob(db: Db, jobId: string, message: string, result?: Record<string, unknown>): Promise<void> {
  await db.query(
    `WITH failed AS (
       UPDATE ingest_jobs SET state = 'failed', error = $2, result = COALESCE($3::jsonb, result), updated_at = now(), finished_at = now()
        WHERE id = $1 AND state <> 'completed'
        RETURNING organization_id, request
     ), dropped AS (
       -- What the job carried (a bulk post's rows) is never needed again.
       DELETE FROM ingest_job_data WHERE job_id = $1 AND EXISTS (SELECT 1 FROM failed)
     )
     DELETE FROM unit_operations u USING failed
      WHERE failed.request ? 'created_unit_operation_id'
        AND u.id = (failed.request->>'created_unit_operation_id')::bigint AND u.organization_id = failed.organization_id`,
    [jobId, message, result === undefined ? null : JSON.stringify(result)],
  );
}

/** A range deletion a job carries, recorded with the job's version (once per job). */
export interface DeletionRecord {
  organizationId: number;
  jobId: string;
  versionSeq: number;
  instrumentIds: number[];
  startMs: number;
  endMs: number;
}

/**
 * Records the deletion so that writes accepted earlier but processed later still honour it
 * (`time_series_deletions`); recording it again is a no-op.
 */
export async function recordDeletion(db: Db, deletion: DeletionRecord): Promise<void> {
  await db.query(
    `INSERT INTO time_series_deletions (organization_id, job_id, version_seq, instrument_ids, start_ms, end_ms)
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (job_id) DO NOTHING`,
    [deletion.organizationId, deletion.jobId, deletion.versionSeq, deletion.instrumentIds, deletion.startMs, deletion.endMs],
  );
}

/** A bulk post whose points are stored: its job, its point count, and the range whose rollups it owes. */
export interface BulkCompletion {
  jobId: string;
  points: number;
  range: RangeOnInstruments;
}

/**
 * Completes bulk posts' jobs and records their rollups as owed (`rollup_backlog`), in one statement
 * however many: a post is never complete without either its rollups or the record that they are owed.
 * Bulk posts are not audited one by one. Every post gets its backlog row, also one that had completed
 * already (delivered again): the recomputation that follows deletes it.
 * With `unlessDeletionAfter`, completes nothing and answers false when a range deletion of the posts'
 * organisations was accepted after that version: its tombstones must be applied over the posts' rows
 * first. Deletions are rare next to feeds' posts, so the question rides on the completion.
 */
export async function completeBulkPosts(db: Db, completions: readonly BulkCompletion[], unlessDeletionAfter?: number): Promise<boolean> {
  if (completions.length === 0) return true;
  // Named: prepared once per connection, as feeds complete posts many times a second.
  const { rows } = await db.query<{ later_deletion: boolean }>({
    name: 'complete-bulk-posts',
    text: `WITH later AS (
       SELECT $9::bigint IS NOT NULL
              AND EXISTS (SELECT 1 FROM time_series_deletions WHERE organization_id = ANY($8::bigint[]) AND version_seq > $9) AS found
     ), done AS (
       SELECT done.* FROM unnest($1::uuid[], $2::integer[], $3::integer[], $4::bigint[], $5::text[], $6::bigint[], $7::bigint[])
                 AS done (id, points, instruments, organization_id, instrument_ids, start_ms, end_ms), later
        WHERE NOT later.found
     ), completed AS (
       UPDATE ingest_jobs j
          SET state = 'completed', result = jsonb_build_object('points_written', done.points, 'instruments', done.instruments),
              progress = j.progress || jsonb_build_object('points_written', done.points), error = NULL, updated_at = now(), finished_at = now()
         FROM done
        WHERE j.id = done.id AND j.state IN ('queued', 'running')
     ), owed AS (
       INSERT INTO rollup_backlog (organization_id, job_id, instrument_ids, start_ms, end_ms)
       SELECT organization_id, id, instrument_ids::bigint[], start_ms, end_ms FROM done
        -- A job deleted with its organisation meanwhile owes nothing (and its organisation is gone).
        WHERE EXISTS (SELECT 1 FROM ingest_jobs j WHERE j.id = done.id)
     )
     SELECT found AS later_deletion FROM later`,
    values: [
      completions.map((completion) => completion.jobId),
      completions.map((completion) => completion.points),
      completions.map((completion) => completion.range.instrumentIds.length),
      completions.map((completion) => completion.range.organizationId),
      completions.map((completion) => `{${completion.range.instrumentIds.join(',')}}`),
      completions.map((completion) => completion.range.startMs),
      completions.map((completion) => completion.range.endMs),
      [...new Set(completions.map((completion) => completion.range.organizationId))],
      unlessDeletionAfter ?? null,
    ],
  });
  return rows[0]?.later_deletion === false;
}

/** The state of a job, its row locked until the caller's transaction ends; undefined when there is no row. */
export async function lockJobState(client: pg.PoolClient, jobId: string): Promise<IngestJobState | undefined> {
  const { rows } = await client.query<{ state: IngestJobState }>('SELECT state FROM ingest_jobs WHERE id = $1 FOR UPDATE', [jobId]);
  return rows[0]?.state;
}

/** A part of the data stored with a job (`ingest_job_data`), or null. */
export async function storedJobData(db: Db, jobId: string, part: number): Promise<Buffer | null> {
  // As base64 rather than bytea's hex text: a third less to receive and decode (the driver reads every
  // field as a string; its binary mode does not keep bytes).
  const { rows } = await db.query<{ data: string }>(
    `SELECT encode(bytes, 'base64') AS data FROM ingest_job_data WHERE job_id = $1 AND part = $2`, [jobId, part]);
  return rows[0] ? Buffer.from(rows[0].data, 'base64') : null;
}

/** A job not finished: what its deliveries are made from, and the chunks already written. */
export interface UnfinishedJobRow {
  id: string;
  organization_id: number | string;
  kind: IngestJobKind;
  state: 'queued' | 'running';
  version_seq: number | string;
  request: Record<string, unknown>;
  chunk_count: number;
  chunks_done: number[];
}

const UNFINISHED_COLUMNS = 'id, organization_id, kind, state, version_seq, request, chunk_count, chunks_done';

/** Unfinished jobs created more than `olderThanMs` ago (the api's own delivery may still be on its way for younger ones), oldest first. */
export async function unfinishedJobsCreatedBefore(db: Db, olderThanMs: number, limit: number): Promise<UnfinishedJobRow[]> {
  const { rows } = await db.query<UnfinishedJobRow>(
    `SELECT ${UNFINISHED_COLUMNS} FROM ingest_jobs
      WHERE state IN ('queued', 'running') AND created_at < now() - $1 * interval '1 millisecond'
      ORDER BY created_at LIMIT $2`,
    [olderThanMs, limit],
  );
  return rows;
}

/**
 * Unfinished jobs without progress for `quietMs`, quietest first; `given_up` when that has lasted
 * `retryMinutes` (their work is failed rather than delivered again).
 */
export async function quietUnfinishedJobs(db: Db, quietMs: number, retryMinutes: number, limit: number): Promise<Array<UnfinishedJobRow & { given_up: boolean }>> {
  const { rows } = await db.query<UnfinishedJobRow & { given_up: boolean }>(
    `SELECT ${UNFINISHED_COLUMNS}, updated_at < now() - $2 * interval '1 minute' AS given_up
       FROM ingest_jobs
      WHERE state IN ('queued', 'running') AND updated_at < now() - $1 * interval '1 millisecond'
      ORDER BY updated_at LIMIT $3`,
    [quietMs, retryMinutes, limit],
  );
  return rows;
}

/** Of the jobs given, whether each that exists is unfinished, by id. */
export async function unfinishedByJob(db: Db, jobIds: readonly string[]): Promise<Map<string, boolean>> {
  const { rows } = await db.query<{ id: string; unfinished: boolean }>(
    `SELECT id, state IN ('queued', 'running') AS unfinished FROM ingest_jobs WHERE id = ANY($1::uuid[])`, [jobIds]);
  return new Map(rows.map((row) => [row.id, row.unfinished]));
}

/** Of the spooled CSV files given, whether some job naming each is unfinished, by file (absent: no job names it). */
export async function unfinishedByUploadFile(db: Db, files: readonly string[]): Promise<Map<string, boolean>> {
  const { rows } = await db.query<{ file: string; unfinished: boolean }>(
    `SELECT request->>'file_path' AS file, bool_or(state IN ('queued', 'running')) AS unfinished
       FROM ingest_jobs WHERE kind = 'csv' AND request->>'file_path' = ANY($1::text[]) GROUP BY 1`,
    [files],
  );
  return new Map(rows.map((row) => [row.file, row.unfinished]));
}

/** Deletes the stored data of every finished job; answers the rows removed. */
export async function deleteAllFinishedJobData(db: Db): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM ingest_job_data d USING ingest_jobs j WHERE d.job_id = j.id AND j.state IN ('completed', 'failed')`);
  return rowCount ?? 0;
}

/** An organisation's CSV uploads not yet finished, and their bytes. */
export async function unfinishedUploads(db: Db, organizationId: number): Promise<{ uploads: number; bytes: number }> {
  const { rows } = await db.query<{ uploads: number; bytes: string }>(
    `SELECT count(*)::int AS uploads, COALESCE(sum((request->>'bytes')::bigint), 0)::bigint AS bytes
       FROM ingest_jobs WHERE organization_id = $1 AND kind = 'csv' AND state IN ('queued', 'running')`,
    [organizationId],
  );
  return { uploads: rows[0]?.uploads ?? 0, bytes: Number(rows[0]?.bytes ?? 0) };
}

/** A finished job with who made it, for its audit event. */
export interface JobWithCreator {
  id: string;
  organization_id: number;
  kind: IngestJobKind;
  state: IngestJobState;
  request: Record<string, unknown>;
  result: Record<string, unknown> | null;
  error: string | null;
  user_id: number | null;
  user_email: string | null;
  api_key_name: string | null;
  finished_at: Date | null;
}

export async function jobWithCreator(db: Db, jobId: string): Promise<JobWithCreator | undefined> {
  const { rows } = await db.query<JobWithCreator>(
    `SELECT j.id, j.organization_id, j.kind, j.state, j.request, j.result, j.error, j.created_by AS user_id, u.email AS user_email,
            k.name AS api_key_name, j.finished_at
       FROM ingest_jobs j LEFT JOIN users u ON u.id = j.created_by LEFT JOIN api_keys k ON k.id = j.api_key_id
      WHERE j.id = $1`,
    [jobId]);
  return rows[0];
}

/** A job as a run's review report lists it, with the email of the user who made it (null: an API key, or a user since removed). */
export interface JobForReview {
  id: string;
  kind: IngestJobKind;
  state: IngestJobState;
  error: string | null;
  request: Record<string, unknown>;
  created_at: Date;
  finished_at: Date | null;
  created_by_email: string | null;
}

/**
 * The organisation's jobs on these unit operations (by the unit operation an upload or deletion names,
 * else the one an upload created) that a reviewer must see: those that failed, every deletion, and
 * uploads that replaced the readings they found; oldest first.
 */
export async function listExceptionalJobsOfUnitOperations(db: Db, organizationId: number, unitOperationIds: readonly number[]): Promise<JobForReview[]> {
  const { rows } = await db.query<JobForReview>(
    `SELECT j.id, j.kind, j.state, j.error, j.request, j.created_at, j.finished_at, u.email AS created_by_email
       FROM ingest_jobs j LEFT JOIN users u ON u.id = j.created_by
      WHERE j.organization_id = $1
        AND coalesce(NULLIF(j.request->>'unit_operation_id', ''), j.request->>'created_unit_operation_id')::bigint = ANY($2::bigint[])
        AND (j.state = 'failed' OR j.kind = 'deletion' OR (j.request->'mapping'->>'replace_existing')::boolean)
      ORDER BY j.created_at, j.id`,
    [organizationId, [...unitOperationIds]],
  );
  return rows;
}

/** Where a range deletion touches a unit operation's readings: one instrument of its equipment, in its window (epoch ms; end null: open). */
export interface InstrumentWindow {
  instrumentId: number;
  startMs: number;
  endMs: number | null;
}

/**
 * Every job that wrote into or deleted from the readings of some of the organisation's unit operations:
 * CSV uploads into them (or creating them), and the recorded range deletions (`time_series_deletions`)
 * overlapping one of `windows` on its instrument, both ends included. Each job once, its id and version
 * as text, ordered by id: the form a run's signed content hashes, so neither may change.
 */
export async function listJobsTouchingUnitOperations(
  db: Db,
  organizationId: number,
  unitOperationIds: readonly number[],
  windows: readonly InstrumentWindow[],
): Promise<Array<{ id: string; kind: string; version_seq: string }>> {
  const { rows } = await db.query<{ id: string; kind: string; version_seq: string }>(
    `SELECT j.id::text AS id, j.kind, j.version_seq::text AS version_seq
       FROM ingest_jobs j
      WHERE j.organization_id = $1
        AND (NULLIF(j.request->>'unit_operation_id', '')::bigint = ANY($2::bigint[])
             OR NULLIF(j.request->>'created_unit_operation_id', '')::bigint = ANY($2::bigint[]))
     UNION
     SELECT d.job_id::text, 'deletion', d.version_seq::text
       FROM time_series_deletions d
       JOIN unnest($3::bigint[], $4::bigint[], $5::bigint[]) AS w (instrument_id, start_ms, end_ms)
         ON d.end_ms >= w.start_ms AND (w.end_ms IS NULL OR d.start_ms <= w.end_ms) AND w.instrument_id = ANY(d.instrument_ids)
      WHERE d.organization_id = $1
      ORDER BY 1`,
    [organizationId, [...unitOperationIds], windows.map((window) => window.instrumentId), windows.map((window) => window.startMs),
      windows.map((window) => window.endMs)],
  );
  return rows;
}

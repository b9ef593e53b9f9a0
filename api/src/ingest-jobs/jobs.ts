/**
 * Ingest job records (PostgreSQL `ingest_jobs`): created when the api accepts a write, deletion or
 * upload, with the version that orders it against every other time-series request; read back for the
 * status endpoints and for `?wait=true`.
 */
import { randomUUID } from 'node:crypto';
import type { Pool, PoolClient } from '@bioprocess/shared/server/postgres';
import { withTransaction } from '@bioprocess/shared/server/postgres';
import { failIngestJob, recordDeletion } from '@bioprocess/shared/server/ingest-job-store';
import {
  EMPTY_PROGRESS,
  type IngestJobKind,
  type IngestJobState,
  type IngestJobStatus,
  type IngestProgress,
} from '@bioprocess/shared/timeseries';
import type { RequestPrincipal } from '../auth/principal.ts';
import { notFound } from '../platform/http-error.ts';
import type { FinishWait, JobFinishEvents } from './finish-events.ts';

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
 * Creates the job (or returns the one an earlier request with the same idempotency key created:
 * `created` is then false and nothing new must be enqueued).
 */
export async function createIngestJob(pool: Pool, principal: RequestPrincipal, job: NewIngestJob): Promise<{ job: IngestJobRow; created: boolean }> {
  // Without a deletion to record, the job is one statement: no transaction (three fewer round trips
  // for every bulk post).
  if (!job.deletion) return insertIngestJob(pool, principal, job);
  return withTransaction(pool, async (client) => {
    const result = await insertIngestJob(client, principal, job);
    if (result.created) {
      await recordDeletion(client, { ...job.deletion!, organizationId: result.job.organization_id, jobId: result.job.id, versionSeq: result.job.version_seq });
    }
    return result;
  });
}

/** Creates the job inside the caller's transaction (with the rows it goes with). */
export async function insertIngestJob(db: Pool | PoolClient, principal: RequestPrincipal, job: NewIngestJob): Promise<{ job: IngestJobRow; created: boolean }> {
  return (await insertIngestJobs(db, [{ principal, job }]))[0]!;
}

/**
 * Creates several jobs, each with its data, in one statement (atomic without a transaction's round
 * trips): a job row never exists without its data, and a replayed idempotent request stores nothing
 * twice. Answers in the order given; a job whose idempotency key was used before (or earlier in the
 * same list) answers that job, with `created` false.
 */
export async function insertIngestJobs(
  db: Pool | PoolClient, entries: ReadonlyArray<{ principal: RequestPrincipal; job: NewIngestJob }>,
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


/** Fails the job (and removes a unit operation created for it): see shared/src/server/ingest-job-store.ts. */
export async function markJobFailed(pool: Pool, jobId: string, message: string): Promise<void> {
  await failIngestJob(pool, jobId, message);
}

/** The job of the caller's organisation, or 404 (another organisation's job does not exist for them). */
export async function findIngestJob(pool: Pool, organizationId: number, jobId: string): Promise<IngestJobRow> {
  if (!/^[0-9a-f-]{36}$/i.test(jobId)) throw notFound('Ingest job not found');
  const { rows } = await pool.query(`SELECT ${JOB_COLUMNS} FROM ingest_jobs WHERE id = $1 AND organization_id = $2`, [jobId, organizationId]);
  if (!rows[0]) throw notFound('Ingest job not found');
  return rows[0] as IngestJobRow;
}

export function toJobStatus(job: IngestJobRow): IngestJobStatus {
  return {
    id: job.id,
    kind: job.kind,
    state: job.state,
    progress: { ...EMPTY_PROGRESS, ...job.progress },
    result: job.result,
    error: job.error,
    created_at: job.created_at.toISOString(),
    updated_at: job.updated_at.toISOString(),
  };
}

/** How long `?wait=true` waits before answering 202 anyway (the job keeps running). */
export const WAIT_TIMEOUT_MS = 5 * 60_000;

export const isFinished = (state: IngestJobState) => state === 'completed' || state === 'failed';

/** How a wait for a job may begin. */
export interface WaitOptions {
  signal?: AbortSignal;
  /**
   * A wait started before the job was queued (so no finish can have been missed): the first read of
   * the row is skipped, and a notification that the job completed is taken at its word, answering
   * `known` with its new state. Feeds waiting on every post then cost no read at all.
   */
  registered?: { wait: FinishWait; known: IngestJobRow };
}

/**
 * Waits until the job finished (completed or failed) or the timeout passed; returns the last row read.
 * The job row is the one place that knows when data is queryable: it is read again whenever the job's
 * finish is announced without its state (finish-events.ts), and every so often in case the
 * announcement was lost.
 */
export async function waitForJob(
  pool: Pool, events: JobFinishEvents, organizationId: number, jobId: string, timeoutMs: number, options: WaitOptions = {},
): Promise<IngestJobRow> {
  const { signal, registered } = options;
  const deadline = Date.now() + timeoutMs;
  let first = registered?.wait;
  for (;;) {
    const wait = first ?? events.wait(jobId, deadline - Date.now());
    const onAbort = () => wait.end();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      if (!first) {
        const job = await findIngestJob(pool, organizationId, jobId);
        if (isFinished(job.state) || Date.now() >= deadline || signal?.aborted) return job;
      }
      first = undefined;
      const notified = await wait.woken;
      if (notified === 'completed' && registered) return { ...registered.known, state: 'completed' };
      if (signal?.aborted && registered) return registered.known;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      wait.end();
    }
  }
}

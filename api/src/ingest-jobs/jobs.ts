/**
 * Ingest job records (PostgreSQL `ingest_jobs`): created when the api accepts a write, deletion or
 * upload, with the version that orders it against every other time-series request; read back for the
 * status endpoints and for `?wait=true`.
 */
import { randomUUID } from 'node:crypto';
import type { Pool, PoolClient } from '@bioprocess/shared/server/postgres';
import { withTransaction } from '@bioprocess/shared/server/postgres';
import { failIngestJob } from '@bioprocess/shared/server/ingest-job-failure';
import {
  EMPTY_PROGRESS,
  type IngestJobKind,
  type IngestJobState,
  type IngestJobStatus,
  type IngestProgress,
} from '@bioprocess/shared/timeseries';
import type { RequestPrincipal } from '../auth/principal.ts';
import { notFound } from '../platform/http-error.ts';
import type { JobFinishEvents } from './finish-events.ts';

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
  created_at: Date;
  updated_at: Date;
}

export interface NewIngestJob {
  kind: IngestJobKind;
  idempotencyKey?: string | null;
  /** A version drawn beforehand with nextVersionSeq (else one is drawn with the job). */
  versionSeq?: number;
  request: Record<string, unknown>;
  chunkCount?: number;
  progress?: Partial<IngestProgress>;
  /** A range deletion recorded with the job's version (queued deletions). */
  deletion?: { instrumentIds: number[]; startMs: number; endMs: number };
  /** What the job works on, stored with the row (`ingest_job_data`): bulk chunks' rows and figures by part. */
  data?: Array<{ part: number; bytes: Uint8Array }>;
}

const JOB_COLUMNS = 'id, organization_id, kind, state, version_seq, request, chunk_count, progress, result, error, created_at, updated_at';

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
    if (result.created) await recordDeletion(client, result.job, job.deletion!);
    return result;
  });
}

/** Creates the job inside the caller's transaction (with the rows it goes with). */
export async function insertIngestJob(db: Pool | PoolClient, principal: RequestPrincipal, job: NewIngestJob): Promise<{ job: IngestJobRow; created: boolean }> {
  const parameters: unknown[] = [
    randomUUID(), principal.organizationId, job.kind, principal.userId, principal.apiKeyId,
    job.idempotencyKey ?? null, JSON.stringify(job.request), job.chunkCount ?? 0,
    JSON.stringify({ ...EMPTY_PROGRESS, ...job.progress }), job.versionSeq ?? null,
  ];
  // The data goes in with the row in one statement (atomic without a transaction's round trips): a job
  // row never exists without its data, and a replayed idempotent request stores nothing twice.
  const values = (job.data ?? []).map(({ part, bytes }) => {
    parameters.push(part, Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length));
    return `($${parameters.length - 1}::integer, $${parameters.length}::bytea)`;
  });
  const storeData = values.length === 0 ? '' : `, stored AS (
       INSERT INTO ingest_job_data (job_id, part, bytes) SELECT job.id, data.part, data.bytes FROM job CROSS JOIN (VALUES ${values.join(', ')}) AS data (part, bytes)
     )`;
  const { rows } = await db.query(
    `WITH job AS (
       INSERT INTO ingest_jobs (id, organization_id, kind, version_seq, created_by, api_key_id, idempotency_key, request, chunk_count, progress)
       VALUES ($1, $2, $3, COALESCE($10::bigint, nextval('time_series_version_seq')), $4, $5, $6, $7, $8, $9)
       ON CONFLICT (organization_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
       RETURNING ${JOB_COLUMNS}
     )${storeData}
     SELECT * FROM job`,
    parameters,
  );
  const created = rows[0] as IngestJobRow | undefined;
  if (created) return { job: created, created: true };
  const existing = await db.query(
    `SELECT ${JOB_COLUMNS} FROM ingest_jobs WHERE organization_id = $1 AND idempotency_key = $2`,
    [principal.organizationId, job.idempotencyKey],
  );
  return { job: existing.rows[0] as IngestJobRow, created: false };
}

/** Draws a request version (the order in which requests were accepted). */
export async function nextVersionSeq(pool: Pool): Promise<number> {
  const { rows } = await pool.query<{ v: string }>("SELECT nextval('time_series_version_seq')::text AS v");
  return Number(rows[0]!.v);
}

async function recordDeletion(client: PoolClient, job: IngestJobRow, deletion: NonNullable<NewIngestJob['deletion']>): Promise<void> {
  await client.query(
    `INSERT INTO time_series_deletions (organization_id, job_id, version_seq, instrument_ids, start_ms, end_ms)
     VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (job_id) DO NOTHING`,
    [job.organization_id, job.id, job.version_seq, deletion.instrumentIds, deletion.startMs, deletion.endMs],
  );
}

/** Fails the job (and removes a unit operation created for it): see shared/src/server/ingest-job-failure.ts. */
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

/**
 * Waits until the job finished (completed or failed) or the timeout passed; returns the last row read.
 * The job row is the one place that knows when data is queryable: it is read again whenever the job's
 * finish is announced (finish-events.ts), and every so often in case the announcement was lost.
 */
export async function waitForJob(
  pool: Pool, events: JobFinishEvents, organizationId: number, jobId: string, timeoutMs: number, signal?: AbortSignal,
): Promise<IngestJobRow> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const wait = events.wait(jobId, deadline - Date.now());
    const onAbort = () => wait.end();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const job = await findIngestJob(pool, organizationId, jobId);
      if (isFinished(job.state) || Date.now() >= deadline || signal?.aborted) return job;
      await wait.woken;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      wait.end();
    }
  }
}

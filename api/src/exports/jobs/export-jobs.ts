/**
 * Export job records (PostgreSQL `export_jobs`), for the api (creates them, shows their status, serves
 * their file) and the export-worker (runs them). A job finishes, completed or failed, in one
 * transaction with its audit event (the event id is the job id, so finishing twice records it once),
 * and a completed row always names a whole file: the worker renames the file into place before it
 * completes the row.
 */
import { randomUUID } from 'node:crypto';
import type { Queue } from 'bullmq';
import {
  EXPORT_JOB, EXPORT_JOB_MAX_ATTEMPTS, EXPORT_JOB_OPTIONS, exportJobPayloadSchema, type AuditOutboxEvent,
} from '@bioprocess/shared/queues';
import {
  exportJobFraction, exportJobProgressSchema, type ExportJobKind, type ExportJobProgress, type ExportJobState, type ExportJobStatus,
} from '@bioprocess/shared/exports';
import { withTransaction, type Pool, type Queryable } from '@bioprocess/shared/server/postgres';
import { writeAuditOutbox } from '@bioprocess/shared/server/audit-outbox';
import { takeTurns } from '@bioprocess/shared/server/fair-turns';
import type { RequestPrincipal } from '../../auth/principal.ts';
import { HttpError, notFound } from '../../platform/http-error.ts';

export interface ExportJobRow {
  id: string;
  organization_id: number;
  kind: ExportJobKind;
  state: ExportJobState;
  created_by: number | null;
  requested_by: string;
  request: Record<string, unknown>;
  progress: Partial<ExportJobProgress>;
  attempts: number;
  file_name: string | null;
  file_path: string | null;
  content_type: string | null;
  bytes: string | number | null;
  rows: string | number | null;
  error: string | null;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
  expires_at: Date | null;
}

const COLUMNS = `id, organization_id::int AS organization_id, kind, state, created_by::int AS created_by, requested_by, request, progress, attempts,
  file_name, file_path, content_type, bytes, rows, error, created_at, updated_at, finished_at, expires_at`;

export interface NewExportJob {
  kind: ExportJobKind;
  request: Record<string, unknown>;
  progress?: Partial<ExportJobProgress>;
}

/** Key space of the advisory lock that serialises the creation of one organisation's export jobs. */
const CREATE_LOCK = 3720;

export function tooManyExportsMessage(maxActive: number): string {
  return `Your organisation already has ${maxActive} export${maxActive === 1 ? '' : 's'} being prepared, the most it may have at once. `
    + 'Wait for one to finish, then export again.';
}

/**
 * Records a new export job, unless the organisation already has `maxActive` queued or running (429).
 * The count and the insert hold the organisation's advisory lock, so concurrent requests cannot both
 * take the last place.
 */
export async function createExportJob(pool: Pool, principal: RequestPrincipal, job: NewExportJob, maxActive: number): Promise<ExportJobRow> {
  return withTransaction(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock($1, $2)', [CREATE_LOCK, principal.organizationId]);
    const { rows: [active] } = await client.query<{ count: number }>(
      "SELECT count(*)::int AS count FROM export_jobs WHERE organization_id = $1 AND state IN ('queued', 'running')",
      [principal.organizationId],
    );
    if (active!.count >= maxActive) throw new HttpError(429, tooManyExportsMessage(maxActive));
    const { rows } = await client.query<ExportJobRow>(
      `INSERT INTO export_jobs (id, organization_id, kind, created_by, api_key_id, requested_by, request, progress)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING ${COLUMNS}`,
      [randomUUID(), principal.organizationId, job.kind, principal.userId, principal.apiKeyId, principal.email ?? principal.name,
        JSON.stringify(job.request), JSON.stringify(job.progress ?? {})],
    );
    return rows[0]!;
  });
}

/**
 * The organisation's recent export jobs, newest first. `owner` narrows them to what one user or API
 * key asked for (null: the whole organisation's); `kinds` to those kinds.
 */
export async function listExportJobs(
  pool: Queryable, organizationId: number,
  options: { limit: number; kinds: readonly ExportJobKind[]; owner: { userId: number | null; apiKeyId: number | null } | null },
): Promise<ExportJobRow[]> {
  const params: unknown[] = [organizationId, options.kinds, options.limit];
  let ownerFilter = '';
  // A session's jobs are its user's; an API key's are the key's (it has no user of its own).
  if (options.owner?.apiKeyId != null) {
    params.push(options.owner.apiKeyId);
    ownerFilter = 'AND api_key_id = $4';
  } else if (options.owner) {
    params.push(options.owner.userId);
    ownerFilter = 'AND created_by = $4 AND api_key_id IS NULL';
  }
  const { rows } = await pool.query<ExportJobRow>(
    `SELECT ${COLUMNS} FROM export_jobs WHERE organization_id = $1 AND kind = ANY($2::text[]) ${ownerFilter}
      ORDER BY created_at DESC, id DESC LIMIT $3`,
    params,
  );
  return rows;
}

/**
 * Queues the job's delivery (a no-op while one with its id is waiting or active), in its organisation's
 * turn: organisations' exports are taken in turns (shared/src/server/fair-turns.ts).
 */
export async function deliverExportJob(queue: Queue, job: { id: string; organization_id: number }): Promise<void> {
  const organizationId = Number(job.organization_id);
  const [turn] = await takeTurns(queue, [[organizationId]]);
  await queue.add(EXPORT_JOB, exportJobPayloadSchema.parse({ job_id: job.id, organization_id: organizationId }), { ...EXPORT_JOB_OPTIONS, jobId: job.id, priority: turn! });
}

/** The job of the caller's organisation, or 404 (another organisation's job does not exist for them). */
export async function findExportJob(pool: Queryable, organizationId: number, jobId: string): Promise<ExportJobRow> {
  if (!/^[0-9a-f-]{36}$/i.test(jobId)) throw notFound('Export not found');
  const { rows } = await pool.query<ExportJobRow>(`SELECT ${COLUMNS} FROM export_jobs WHERE id = $1 AND organization_id = $2`, [jobId, organizationId]);
  if (!rows[0]) throw notFound('Export not found');
  return rows[0];
}

export async function readExportJob(pool: Queryable, jobId: string): Promise<ExportJobRow | null> {
  const { rows } = await pool.query<ExportJobRow>(`SELECT ${COLUMNS} FROM export_jobs WHERE id = $1`, [jobId]);
  return rows[0] ?? null;
}

const numberOrNull = (value: string | number | null) => (value === null ? null : Number(value));

export function toExportJobStatus(job: ExportJobRow): ExportJobStatus {
  const progress = exportJobProgressSchema.parse(job.progress ?? {});
  return {
    id: job.id,
    kind: job.kind,
    state: job.state,
    progress,
    fraction: exportJobFraction(job.kind, job.state, progress),
    file_name: job.state === 'completed' ? job.file_name : null,
    bytes: numberOrNull(job.bytes),
    rows: numberOrNull(job.rows),
    error: job.error,
    created_at: job.created_at.toISOString(),
    updated_at: job.updated_at.toISOString(),
    expires_at: job.expires_at?.toISOString() ?? null,
    download_url: job.state === 'completed' ? `/api/v1/export-jobs/${job.id}/download` : null,
    requested_by: job.requested_by,
  };
}

/**
 * Starts a delivery: an unfinished job becomes running and counts the attempt. Answers the row, or
 * null when the job is gone or already finished (a duplicated delivery).
 */
export async function startExportJob(pool: Pool, jobId: string): Promise<ExportJobRow | null> {
  const { rows } = await pool.query<ExportJobRow>(
    `UPDATE export_jobs SET state = 'running', attempts = attempts + 1, updated_at = now()
      WHERE id = $1 AND state IN ('queued', 'running') RETURNING ${COLUMNS}`,
    [jobId],
  );
  return rows[0] ?? null;
}

export async function updateExportProgress(pool: Pool, jobId: string, progress: Partial<ExportJobProgress>): Promise<void> {
  await pool.query(
    `UPDATE export_jobs SET progress = progress || $2::jsonb, updated_at = now() WHERE id = $1 AND state = 'running'`,
    [jobId, JSON.stringify(progress)],
  );
}

/**
 * Notes why a delivery failed while another will follow (the row shows it until the job ends). A
 * delivery stopped by a worker shutdown is not the export's fault: `refund` gives its attempt back.
 */
export async function noteExportAttemptFailed(pool: Pool, jobId: string, message: string, options: { refund?: boolean } = {}): Promise<void> {
  await pool.query(
    `UPDATE export_jobs SET state = 'queued', error = $2, attempts = GREATEST(0, attempts - $3), updated_at = now() WHERE id = $1 AND state = 'running'`,
    [jobId, message, options.refund ? 1 : 0],
  );
}

export interface FinishedFile {
  fileName: string;
  filePath: string;
  contentType: string;
  bytes: number;
  rows: number;
  progress: Partial<ExportJobProgress>;
  /** What the audit event says the file holds. */
  audit: Record<string, unknown>;
}

function auditEventOf(job: ExportJobRow, success: boolean, after: Record<string, unknown>): AuditOutboxEvent {
  const request = job.request as { audit?: { resource_type?: string; resource_id?: number | null; after?: Record<string, unknown> }; ip?: string | null };
  const archive = job.kind === 'organization_archive';
  return {
    event_id: job.id,
    event_type: archive ? 'organization.exported' : 'time_series.exported',
    action: 'export',
    resource_type: archive ? 'organization' : request.audit?.resource_type ?? null,
    resource_id: archive ? String(job.organization_id) : request.audit?.resource_id == null ? null : String(request.audit.resource_id),
    success,
    user_id: job.created_by,
    user_email: job.requested_by,
    organization_id: job.organization_id,
    ip: request.ip ?? null,
    changes: { after: { export_job_id: job.id, ...request.audit?.after, ...after } },
  };
}

/** Completes a running job with its file and its audit event; false when it was no longer running. */
export async function completeExportJob(pool: Pool, jobId: string, file: FinishedFile, ttlHours: number): Promise<boolean> {
  return withTransaction(pool, async (client) => {
    const { rows } = await client.query<ExportJobRow>(
      `UPDATE export_jobs SET state = 'completed', file_name = $2, file_path = $3, content_type = $4, bytes = $5, rows = $6,
              progress = progress || $7::jsonb, error = NULL, updated_at = now(), finished_at = now(),
              expires_at = now() + make_interval(secs => $8::float8)
        WHERE id = $1 AND state = 'running' RETURNING ${COLUMNS}`,
      [jobId, file.fileName, file.filePath, file.contentType, file.bytes, file.rows, JSON.stringify(file.progress), ttlHours * 3600],
    );
    const job = rows[0];
    if (!job) return false;
    await writeAuditOutbox(client, auditEventOf(job, true, { ...file.audit, rows: file.rows, bytes: file.bytes, complete: true }));
    return true;
  });
}

/** Fails an unfinished job, with its audit event; a job already finished is left as it is. */
export async function failExportJob(pool: Pool, jobId: string, message: string): Promise<void> {
  await withTransaction(pool, async (client) => {
    const { rows } = await client.query<ExportJobRow>(
      `UPDATE export_jobs SET state = 'failed', error = $2, updated_at = now(), finished_at = now()
        WHERE id = $1 AND state IN ('queued', 'running') RETURNING ${COLUMNS}`,
      [jobId, message],
    );
    const job = rows[0];
    if (job) await writeAuditOutbox(client, auditEventOf(job, false, { error: message, complete: false }));
  });
}

/** The message of a job that used up its deliveries. */
export function attemptsExhaustedMessage(lastError: string | null): string {
  return `The export failed after ${EXPORT_JOB_MAX_ATTEMPTS} attempts${lastError ? `: ${lastError}` : ''}. Export again or narrow the export.`;
}

/** Completed jobs past their time: now expired; answers their files to remove. */
export async function expireExportJobs(pool: Pool): Promise<string[]> {
  const { rows } = await pool.query<{ file_path: string | null }>(
    `UPDATE export_jobs SET state = 'expired', updated_at = now() WHERE state = 'completed' AND expires_at <= now() RETURNING file_path`,
  );
  return rows.flatMap((row) => (row.file_path ? [row.file_path] : []));
}

/** Unfinished jobs quiet for longer than `quietMs`: no live delivery may be driving them. */
export async function quietExportJobs(pool: Pool, quietMs: number): Promise<Array<{ id: string; organization_id: number; attempts: number; error: string | null }>> {
  const { rows } = await pool.query(
    `SELECT id, organization_id::int AS organization_id, attempts, error FROM export_jobs
      WHERE state IN ('queued', 'running') AND updated_at < now() - make_interval(secs => $1::float8) ORDER BY updated_at LIMIT 100`,
    [quietMs / 1000],
  );
  return rows as Array<{ id: string; organization_id: number; attempts: number; error: string | null }>;
}

/** Jobs whose files may be in EXPORT_DIR: completed ones (their file) and running ones (their part file). */
export async function liveExportFiles(pool: Pool, ids: string[]): Promise<Map<string, ExportJobState>> {
  if (ids.length === 0) return new Map();
  const { rows } = await pool.query<{ id: string; state: ExportJobState }>('SELECT id, state FROM export_jobs WHERE id = ANY($1::uuid[])', [ids]);
  return new Map(rows.map((row) => [row.id, row.state]));
}

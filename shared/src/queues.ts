/**
 * Queue contracts: names, job names and payload schemas shared by producers (api) and consumers
 * (workers). Fields added later must be optional so jobs already queued survive a rolling deploy.
 */
import { z } from 'zod';

export const QUEUE_NAMES = {
  ingest: 'ingest',
  /** Bulk post chunks: small, many at once, written together (a worker runs many concurrently). */
  ingestBulk: 'ingest-bulk',
  audit: 'audit',
} as const;
export type QueueName = (typeof QUEUE_NAMES)[keyof typeof QUEUE_NAMES];

export const AUDIT_JOB = 'audit-event';

export const auditEventSchema = z.object({
  /** Unique per event: the job id, so a retried enqueue or write stores the event once. */
  event_id: z.uuid(),
  event_type: z.string(),
  action: z.string(),
  resource_type: z.string().nullable(),
  resource_id: z.string().nullable(),
  success: z.boolean(),
  user_id: z.number().int().nullable(),
  user_email: z.string().nullable(),
  organization_id: z.number().int().nullable(),
  ip: z.string().nullable(),
  changes: z.object({ before: z.unknown().optional(), after: z.unknown().optional() }).nullable(),
  created_at: z.iso.datetime({ offset: true }),
  /**
   * The position of the change among all audited changes (its audit_outbox id), so the log lists
   * events in the order of their changes whatever order they are stored in. Optional: events queued
   * before the outbox existed have none.
   */
  change_seq: z.number().int().positive().optional(),
});
export type AuditEvent = z.infer<typeof auditEventSchema>;

/** An event as the api writes it into audit_outbox: the row itself supplies created_at and change_seq. */
export const auditOutboxEventSchema = auditEventSchema.omit({ created_at: true, change_seq: true });
export type AuditOutboxEvent = z.infer<typeof auditOutboxEventSchema>;

/**
 * Ingest jobs (queue `ingest`, bulk chunks on `ingest-bulk`). A job row in PostgreSQL (`ingest_jobs`) carries the state and
 * progress; the queued payloads only reference it, plus at most one bounded chunk of points.
 * `version_seq` is taken from a PostgreSQL sequence when the api accepted the request, so the outcome
 * is independent of the order in which jobs run (see ingest-worker/src/versions.ts).
 */
export const INGEST_JOBS = {
  bulkChunk: 'bulk-chunk',
  deletion: 'range-deletion',
  csv: 'csv-upload',
} as const;

/** The queue of an ingest job. */
export function ingestQueueOf(jobName: string): typeof QUEUE_NAMES.ingest | typeof QUEUE_NAMES.ingestBulk {
  return jobName === INGEST_JOBS.bulkChunk ? QUEUE_NAMES.ingestBulk : QUEUE_NAMES.ingest;
}

/** One chunk of a bulk post; its rows wait in Redis under bulkChunkDataKey. */
export const bulkChunkPayloadSchema = z.object({
  job_id: z.uuid(),
  organization_id: z.number().int().positive(),
  version_seq: z.number().int().positive(),
  chunk_index: z.number().int().min(0),
  chunk_count: z.number().int().positive(),
  /** Points in the chunk. */
  points: z.number().int().positive(),
  /** How the chunk's rows are written: RowBinary (shared/src/point-rows.ts); absent from jobs queued by older apis, whose rows are TSV lines. */
  format: z.enum(['RowBinary', 'TabSeparated']).default('TabSeparated'),
});

/**
 * Where a bulk chunk's data waits for the worker: ClickHouse rows of `points` written by the api after
 * validation (point i of the post has version version_seq * 10^10 + i + 1, so a later point of the same
 * key wins). Kept as raw bytes beside the job rather than in it: up to BULK_CHUNK_POINTS rows, a few MB,
 * that would otherwise be escaped into and out of JSON. Expires after BULK_CHUNK_DATA_TTL_SECONDS if
 * never written.
 */
export function bulkChunkDataKey(queuePrefix: string, jobId: string, chunkIndex: number): string {
  return `${queuePrefix}:bulk-data:${jobId}:${chunkIndex}`;
}

/** Where a bulk post's per-minute figures (shared/src/minute-figures.ts) wait, with the same expiry. */
export function bulkMinuteFiguresKey(queuePrefix: string, jobId: string): string {
  return `${queuePrefix}:bulk-figures:${jobId}`;
}
/** Longer than the ingest retries last (about a day). */
export const BULK_CHUNK_DATA_TTL_SECONDS = 2 * 24 * 3600;
export type BulkChunkPayload = z.infer<typeof bulkChunkPayloadSchema>;

export const deletionPayloadSchema = z.object({
  job_id: z.uuid(),
  organization_id: z.number().int().positive(),
  version_seq: z.number().int().positive(),
  instrument_ids: z.array(z.number().int().positive()).min(1),
  start_ms: z.number().int(),
  end_ms: z.number().int(),
});
export type DeletionPayload = z.infer<typeof deletionPayloadSchema>;

/** A CSV upload spooled to UPLOAD_DIR; progress and resume offsets live in the job row. */
export const csvUploadPayloadSchema = z.object({
  job_id: z.uuid(),
  organization_id: z.number().int().positive(),
  version_seq: z.number().int().positive(),
  unit_operation_id: z.number().int().positive(),
  file_path: z.string().min(1),
  original_name: z.string(),
});
export type CsvUploadPayload = z.infer<typeof csvUploadPayloadSchema>;

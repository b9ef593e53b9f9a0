/**
 * Queue contracts: names, job names and payload schemas shared by producers (api) and consumers
 * (workers). Fields added later must be optional so jobs already queued survive a rolling deploy.
 */
import { z } from 'zod';
import { BULK_CHUNK_POINTS } from './timeseries.ts';
import { bulkRequestSchema, csvRequestSchema, deletionRequestSchema } from './ingest/requests.ts';
import { POINT_ROWS_LAYOUT_NAMES } from './point-rows.ts';

export const QUEUE_NAMES = {
  ingest: 'ingest',
  /** Bulk post chunks: small, many at once, written together (a worker runs many concurrently). */
  ingestBulk: 'ingest-bulk',
  audit: 'audit',
  /** Export files too large to stream (export_jobs rows), written by the export-worker. */
  export: 'export',
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
  /** Why the change was made, as the person gave it (free text and a pick-list code); optional like every later field. */
  change_reason: z.string().nullable().optional(),
  change_reason_code: z.string().nullable().optional(),
});
export type AuditEvent = z.infer<typeof auditEventSchema>;

/** An event as the api writes it into audit_outbox: the row itself supplies created_at and change_seq. */
export const auditOutboxEventSchema = auditEventSchema.omit({ created_at: true, change_seq: true });
export type AuditOutboxEvent = z.infer<typeof auditOutboxEventSchema>;

/**
 * Ingest jobs (queue `ingest`, bulk chunks on `ingest-bulk`). A job row in PostgreSQL (`ingest_jobs`)
 * carries the state and progress, and with its data (`ingest_job_data`, or the spooled CSV file) is the
 * record of the request: the queued payloads are derived from it (ingestDeliveries), so a delivery lost
 * with Redis is made again from PostgreSQL.
 * `version_seq` is taken from a PostgreSQL sequence when the api accepted the request, so the outcome
 * is independent of the order in which jobs run (see shared/src/ingest/versions.ts).
 */
export const INGEST_JOBS = {
  bulkChunk: 'bulk-chunk',
  /** One-chunk bulk posts accepted together (feeds), written as one. */
  bulkBatch: 'bulk-batch',
  deletion: 'range-deletion',
  csv: 'csv-upload',
} as const;

/** The queue of an ingest job. */
export function ingestQueueOf(jobName: string): typeof QUEUE_NAMES.ingest | typeof QUEUE_NAMES.ingestBulk {
  return jobName === INGEST_JOBS.bulkChunk || jobName === INGEST_JOBS.bulkBatch ? QUEUE_NAMES.ingestBulk : QUEUE_NAMES.ingest;
}

/** One chunk of a bulk post; its rows wait in PostgreSQL (`ingest_job_data`, part = chunk_index). */
export const bulkChunkPayloadSchema = z.object({
  job_id: z.uuid(),
  organization_id: z.number().int().positive(),
  version_seq: z.number().int().positive(),
  chunk_index: z.number().int().min(0),
  chunk_count: z.number().int().positive(),
  /** Points in the chunk. */
  points: z.number().int().positive(),
  /** How the chunk's rows are written (POINT_ROW_LAYOUTS in shared/src/point-rows.ts); absent from jobs queued by older apis, whose rows are TSV lines. */
  format: z.enum(POINT_ROWS_LAYOUT_NAMES).default('TabSeparated'),
});

/** Most jobs one batch delivery names: bounds its PostgreSQL statements and its ClickHouse insert. */
export const BULK_BATCH_MAX_JOBS = 512;

/** One-chunk bulk posts accepted together: each job's rows wait in PostgreSQL as part 0. */
export const bulkBatchPayloadSchema = z.object({
  job_ids: z.array(z.uuid()).min(1).max(BULK_BATCH_MAX_JOBS),
});
export type BulkBatchPayload = z.infer<typeof bulkBatchPayloadSchema>;

/** The delivery of a batch of bulk jobs; `batch` is the id of its first job. */
export function bulkBatchDelivery(batch: string, jobIds: string[], organizationIds: number[]): IngestDelivery {
  return { jobId: `${batch}-batch`, name: INGEST_JOBS.bulkBatch, data: { job_ids: jobIds }, organizationIds };
}

/**
 * Joins deliveries of one batch (the reconciler derives one per job) into one naming all their jobs,
 * so a lost batch is delivered again whole; other deliveries pass unchanged.
 */
export function joinBatchDeliveries(deliveries: readonly IngestDelivery[]): IngestDelivery[] {
  const joined: IngestDelivery[] = [];
  const batches = new Map<string, IngestDelivery & { data: BulkBatchPayload; organizationIds: number[] }>();
  for (const delivery of deliveries) {
    if (delivery.name !== INGEST_JOBS.bulkBatch) {
      joined.push(delivery);
      continue;
    }
    const payload = delivery.data as BulkBatchPayload;
    const batch = batches.get(delivery.jobId);
    if (batch) {
      batch.data.job_ids.push(...payload.job_ids.filter((id) => !batch.data.job_ids.includes(id)));
      batch.organizationIds.push(...organizationsOf(delivery).filter((id) => !batch.organizationIds.includes(id)));
      continue;
    }
    const own = { ...delivery, data: { job_ids: [...payload.job_ids] }, organizationIds: [...organizationsOf(delivery)] };
    batches.set(delivery.jobId, own);
    joined.push(own);
  }
  return joined;
}

/**
 * Where an older api left a bulk chunk's rows: in Redis beside the job. Still read so that chunks it
 * queued before an upgrade are written; new chunks keep their rows in PostgreSQL with the job row.
 */
export function bulkChunkDataKey(queuePrefix: string, jobId: string, chunkIndex: number): string {
  return `${queuePrefix}:bulk-data:${jobId}:${chunkIndex}`;
}


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

/** What the deliveries of a job are derived from: its `ingest_jobs` row. */
export interface IngestJobRecord {
  id: string;
  organization_id: number | string;
  kind: 'bulk' | 'deletion' | 'csv';
  version_seq: number | string;
  request: Record<string, unknown>;
  chunk_count: number;
}

export interface IngestDelivery {
  /** The BullMQ job id: one per delivery of a job, so adding it again while it is queued is a no-op. */
  jobId: string;
  name: (typeof INGEST_JOBS)[keyof typeof INGEST_JOBS];
  data: BulkChunkPayload | BulkBatchPayload | DeletionPayload | CsvUploadPayload;
  /** The organisations of a batch's posts (the other payloads name theirs): whose turn it takes in the queue. */
  organizationIds?: number[];
}

const ownerSchema = z.object({ organization_id: z.number().int().positive() });

/** The organisation a queued payload names (every one but a batch of bulk posts does), if any. */
export function ownerOfPayload(data: unknown): number | undefined {
  return ownerSchema.safeParse(data).data?.organization_id;
}

/** The organisations whose work a delivery carries. */
export function organizationsOf(delivery: IngestDelivery): number[] {
  if ('organization_id' in delivery.data) return [delivery.data.organization_id];
  return delivery.organizationIds ?? [];
}

/**
 * The BullMQ jobs that deliver an ingest job, derived from its row alone: the api queues them when it
 * accepts the request and the reconciler queues them again when Redis lost them. `chunks` limits a bulk
 * job to some of its chunks (those not yet written). Empty when the row does not say enough.
 */
export function ingestDeliveries(job: IngestJobRecord, chunks?: number[]): IngestDelivery[] {
  const organizationId = Number(job.organization_id);
  const versionSeq = Number(job.version_seq);
  const request = job.request;
  switch (job.kind) {
    case 'bulk': {
      const bulk = bulkRequestSchema.safeParse(request);
      if (!bulk.success) return [];
      const points = bulk.data.points;
      // Written by its batch's delivery (the worker skips a chunk already written and completes the job).
      if (bulk.data.batch !== undefined && job.chunk_count === 1) return [bulkBatchDelivery(bulk.data.batch, [job.id], [organizationId])];
      const format = bulk.data.rows_format ?? 'RowBinary';
      const indexes = chunks ?? Array.from({ length: job.chunk_count }, (_, index) => index);
      return indexes.map((chunkIndex) => ({
        jobId: `${job.id}-c${chunkIndex}`,
        name: INGEST_JOBS.bulkChunk,
        data: {
          job_id: job.id, organization_id: organizationId, version_seq: versionSeq, chunk_index: chunkIndex, chunk_count: job.chunk_count,
          points: Math.min(BULK_CHUNK_POINTS, points - chunkIndex * BULK_CHUNK_POINTS), format,
        },
      }));
    }
    case 'deletion': {
      const deletion = deletionRequestSchema.safeParse(request);
      if (!deletion.success) return [];
      return [{
        jobId: `${job.id}-delete`,
        name: INGEST_JOBS.deletion,
        data: {
          job_id: job.id, organization_id: organizationId, version_seq: versionSeq,
          instrument_ids: deletion.data.instrument_ids, start_ms: deletion.data.start_ms, end_ms: deletion.data.end_ms,
        },
      }];
    }
    case 'csv': {
      const csv = csvRequestSchema.safeParse(request);
      // Uploads accepted before the record named their spooled file cannot be delivered again.
      if (!csv.success || csv.data.file_path === undefined) return [];
      return [{
        jobId: `${job.id}-csv`,
        name: INGEST_JOBS.csv,
        data: {
          job_id: job.id, organization_id: organizationId, version_seq: versionSeq,
          unit_operation_id: csv.data.unit_operation_id, file_path: csv.data.file_path, original_name: csv.data.file_name,
        },
      }];
    }
  }
}

/**
 * Export jobs (queue `export`): the `export_jobs` row holds the request, state and progress; the
 * payload only names it, so a delivery Redis lost is made again from the row (the export-worker's
 * sweep). The BullMQ job id is the row id: adding it again while it is queued is a no-op.
 */
export const EXPORT_JOB = 'export-file';

export const exportJobPayloadSchema = z.object({
  job_id: z.uuid(),
  organization_id: z.number().int().positive(),
});
export type ExportJobPayload = z.infer<typeof exportJobPayloadSchema>;

/**
 * Deliveries an export may start (a worker killed mid-way counts as one) before it fails with its last
 * error. Counted in the row, not by BullMQ, so a stalled or re-queued delivery is counted too.
 */
export const EXPORT_JOB_MAX_ATTEMPTS = 3;

export const EXPORT_JOB_OPTIONS = {
  // The row counts attempts; BullMQ only has to deliver again (after a back-off) until the row says stop.
  attempts: EXPORT_JOB_MAX_ATTEMPTS + 1,
  backoff: { type: 'exponential', delay: 2_000 },
  removeOnComplete: true,
  removeOnFail: 1_000,
};

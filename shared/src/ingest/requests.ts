/**
 * What `ingest_jobs.request` holds, per job kind. The api writes it through these schemas and every
 * reader (the worker, the deliveries the reconciler makes again) parses it with them, never casts:
 * a record that does not parse is not delivered, or fails its job before anything is written.
 * Fields added later must be optional, so the records of jobs accepted before stay readable.
 */
import { z } from 'zod';
import { csvMappingSchema } from '../timeseries.ts';
import { MAX_MISSING_VALUES } from '../csv/flagged-cells.ts';
import { POINT_ROWS_LAYOUT_NAMES } from '../point-rows.ts';

/** What a time-series request covers: instruments of one organisation over [startMs, endMs]. */
export interface RangeOnInstruments {
  organizationId: number;
  instrumentIds: number[];
  startMs: number;
  endMs: number;
}

/** A bulk post: what its points cover, and how its stored rows are written. */
export const bulkRequestSchema = z.object({
  instrument_ids: z.array(z.number().int().positive()).min(1),
  start_ms: z.number().int(),
  end_ms: z.number().int(),
  points: z.number().int().positive(),
  /**
   * How its rows are written (POINT_ROW_LAYOUTS in shared/src/point-rows.ts): RowBinaryWithSource now,
   * RowBinary from apis before the readings' source details, absent from older apis still (TSV lines).
   */
  rows_format: z.enum(POINT_ROWS_LAYOUT_NAMES).optional(),
  /**
   * Set on a one-chunk post accepted together with others: the id of the batch's first job, which names
   * the one delivery that writes them all (bulkBatchDelivery in shared/src/queues.ts).
   */
  batch: z.uuid().optional(),
  /** The data is in files under UPLOAD_DIR/bulk/<job id> (shared/src/server/bulk-spool.ts), not in `ingest_job_data`. */
  spooled: z.boolean().optional(),
  /**
   * The version was drawn by the statement that recorded the job, after the rows were written: their
   * versions are their suffixes alone, and whoever inserts them first adds the job's (stampVersions in
   * shared/src/point-rows.ts). Set on small posts, which so spend no round trip on a draw of their own.
   */
  versions_from_job: z.boolean().optional(),
});
export type BulkRequest = z.infer<typeof bulkRequestSchema>;

/** A range deletion over instruments. */
export const deletionRequestSchema = z.object({
  instrument_ids: z.array(z.coerce.number().int().positive()).min(1),
  start_ms: z.coerce.number().int(),
  end_ms: z.coerce.number().int(),
  /** Named in the audit trail when the deletion followed this unit operation's. */
  unit_operation_id: z.number().int().positive().optional(),
});
export type DeletionRequest = z.infer<typeof deletionRequestSchema>;

/**
 * What an upload does with rows that land on one stored key (same instrument, same timestamp once
 * read): refuse the file (the default: nothing is written, the job names the first two rows), or keep
 * the first or the last row of each key. Either way the job counts them.
 */
export const DUPLICATE_POLICIES = ['refuse', 'keep-first', 'keep-last'] as const;
export const duplicatePolicySchema = z.enum(DUPLICATE_POLICIES, {
  error: () => `duplicates must be one of ${DUPLICATE_POLICIES.join(', ')}`,
});
export type DuplicatePolicy = z.infer<typeof duplicatePolicySchema>;
export const DEFAULT_DUPLICATE_POLICY: DuplicatePolicy = 'refuse';

/** Cell texts or numbers the user says mean "no value" (`-9999`): stored as missing and counted. */
export const missingValuesSchema = z
  .array(z.string().trim().min(1, 'missing_values must not hold empty entries').max(50))
  .max(MAX_MISSING_VALUES, `At most ${MAX_MISSING_VALUES} missing values`);

/** A CSV upload into a unit operation. */
export const csvRequestSchema = z.object({
  unit_operation_id: z.coerce.number().int().positive(),
  mapping: csvMappingSchema,
  file_name: z.string(),
  bytes: z.number().int().nonnegative(),
  /** The unit operation's window at upload time (rows outside are skipped). */
  start_ms: z.number().int().nullable(),
  end_ms: z.number().int().nullable(),
  /** The spooled file; absent from uploads accepted before the record named it (they cannot be delivered again). */
  file_path: z.string().optional(),
  /**
   * The zone for timestamps without their own offset, settled by the api when it took the upload: the
   * mapping's, else the organisation's. Absent from jobs queued before zones existed: UTC.
   */
  time_zone: z.string().optional(),
  time_zone_source: z.enum(['mapping', 'organization']).optional(),
  /** The unit operation created together with this upload, removed again if the upload fails. */
  created_unit_operation_id: z.number().int().positive().optional(),
  /** Absent from uploads accepted before the choice existed: they keep the last row, as they were promised. */
  duplicates: duplicatePolicySchema.optional(),
  missing_values: missingValuesSchema.optional(),
});
export type CsvRequest = z.infer<typeof csvRequestSchema>;

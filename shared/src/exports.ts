/**
 * Wire contracts of data exports: the time-series export (scope, range, format, raw or downsampled)
 * and the records export. The api validates requests with these; the console builds its links with them.
 */
import { z } from 'zod';
import { isoOrEpoch, parseBucket, parseTimestampInput } from './timeseries.ts';

export const TIME_SERIES_EXPORT_FORMATS = ['csv-long', 'csv-wide', 'xlsx'] as const;
export type TimeSeriesExportFormat = (typeof TIME_SERIES_EXPORT_FORMATS)[number];

/** Instruments one export may name, or cover through its unit operations or run. */
export const EXPORT_MAX_INSTRUMENTS = 2_000;

export const EXPORT_MESSAGES = {
  tooManyInstruments: (covered: number) =>
    `An export may cover at most ${EXPORT_MAX_INSTRUMENTS} instruments; this one covers ${covered}. Name instruments with instrument_ids.`,
} as const;

const positiveId = z.coerce.number().int().positive();

/** `1,2,3` (a query string cannot hold an array without repeating the key). */
const idList = z
  .string()
  .regex(/^\d+(,\d+)*$/, 'instrument_ids must be a comma-separated list of ids')
  .transform((text) => [...new Set(text.split(',').map(Number))])
  .refine((ids) => ids.length <= EXPORT_MAX_INSTRUMENTS, `instrument_ids: at most ${EXPORT_MAX_INSTRUMENTS} instruments`)
  .refine((ids) => ids.every((id) => Number.isSafeInteger(id) && id > 0), 'instrument_ids must be positive ids');

export const timeSeriesExportQuerySchema = z
  .object({
    unit_operation_id: positiveId.optional().describe('Export this unit operation (its equipment\'s instruments within its window)'),
    run_id: positiveId.optional().describe('Export every unit operation of this run, one section (XLSX sheet) each'),
    instrument_ids: idList.optional().describe('Comma-separated instrument ids: a filter within a unit operation or run, else the scope itself'),
    start_time: isoOrEpoch.optional().describe('Start of the range (default: the unit operation\'s start; for instruments alone, everything stored)'),
    end_time: isoOrEpoch.optional().describe('End of the range (default: the unit operation\'s end, or now)'),
    format: z.enum(TIME_SERIES_EXPORT_FORMATS),
    bucket: z
      .string()
      .refine((text) => parseBucket(text) !== null, 'bucket must be a width such as 10s, 1m or 1h')
      .optional()
      .describe('Downsample to buckets of this width (avg, min and max per instrument); absent: raw readings'),
    elapsed: z.enum(['true', 'false']).default('true').describe('CSV wide: include the elapsed_s column (seconds since the unit operation start)'),
  })
  .superRefine((query, ctx) => {
    const scopes = [query.unit_operation_id, query.run_id].filter((value) => value !== undefined).length;
    if (scopes > 1) ctx.addIssue({ code: 'custom', message: 'name either unit_operation_id or run_id, not both', path: ['run_id'] });
    if (scopes === 0 && query.instrument_ids === undefined) {
      ctx.addIssue({ code: 'custom', message: 'name a unit_operation_id, a run_id or instrument_ids', path: ['unit_operation_id'] });
    }
    if (query.start_time !== undefined && query.end_time !== undefined
      && parseTimestampInput(query.end_time) < parseTimestampInput(query.start_time)) {
      ctx.addIssue({ code: 'custom', message: 'End time must be after start time.', path: ['end_time'] });
    }
  });
export type TimeSeriesExportQuery = z.infer<typeof timeSeriesExportQuerySchema>;

/**
 * Columns of the CSV long format, raw and downsampled. Raw readings end with what their source said:
 * `quality` (its code; empty when it gave none) and `historical` (`true`, else empty).
 */
export const CSV_LONG_COLUMNS = ['timestamp', 'elapsed_s', 'instrument', 'instrument_id', 'unit', 'value', 'quality', 'historical'] as const;
export const CSV_LONG_BUCKET_COLUMNS = ['timestamp', 'elapsed_s', 'instrument', 'instrument_id', 'unit', 'avg', 'min', 'max'] as const;

/** The title of an instrument's column in the wide format and the XLSX sheets. */
export function instrumentColumnTitle(name: string, unit: string | null): string {
  return unit ? `${name} [${unit}]` : name;
}

export const RECORD_EXPORT_ENTITIES = ['runs', 'unit_operations', 'facilities', 'equipment', 'instruments', 'comments'] as const;
export type RecordExportEntity = (typeof RECORD_EXPORT_ENTITIES)[number];

export const recordExportQuerySchema = z.object({
  entity: z.enum(RECORD_EXPORT_ENTITIES),
  format: z.enum(['csv', 'json']).default('csv'),
});
export type RecordExportQuery = z.infer<typeof recordExportQuerySchema>;

export const EXPORT_JOB_KINDS = ['time_series', 'organization_archive'] as const;
export type ExportJobKind = (typeof EXPORT_JOB_KINDS)[number];
export const EXPORT_JOB_STATES = ['queued', 'running', 'completed', 'failed', 'expired'] as const;
export type ExportJobState = (typeof EXPORT_JOB_STATES)[number];

/** How far an export job got: points for a time-series export, files (and points) for the archive. */
export const exportJobProgressSchema = z.object({
  points_total: z.number().default(0),
  points_done: z.number().default(0),
  files_total: z.number().default(0),
  files_done: z.number().default(0),
  bytes_written: z.number().default(0),
});
export type ExportJobProgress = z.infer<typeof exportJobProgressSchema>;

/** An export job as the api shows it (202 answer, status, progress events). */
export const exportJobStatusSchema = z.object({
  id: z.string(),
  kind: z.enum(EXPORT_JOB_KINDS),
  state: z.enum(EXPORT_JOB_STATES),
  progress: exportJobProgressSchema,
  /** 0..1, from the progress (1 once completed). */
  fraction: z.number(),
  file_name: z.string().nullable(),
  bytes: z.number().nullable(),
  rows: z.number().nullable(),
  error: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
  expires_at: z.string().nullable(),
  /** Where the file is fetched once completed (same bearer token); null while it cannot be downloaded. */
  download_url: z.string().nullable(),
  /** Who asked for it (their email, or the API key's name). */
  requested_by: z.string(),
});
export type ExportJobStatus = z.infer<typeof exportJobStatusSchema>;

/** Export jobs one list answer holds at most. */
export const EXPORT_JOB_LIST_MAX = 100;

/**
 * The recent export jobs the caller may follow, newest first: an admin sees the organisation's, an
 * editor the time-series exports they asked for themselves.
 */
export const exportJobListQuerySchema = z.object({
  limit: z.coerce.number().int().min(1).max(EXPORT_JOB_LIST_MAX).default(20).describe(`Maximum number of jobs (default 20, maximum ${EXPORT_JOB_LIST_MAX})`),
  kind: z.enum(EXPORT_JOB_KINDS).optional().describe('Only jobs of this kind'),
});
export type ExportJobListQuery = z.infer<typeof exportJobListQuerySchema>;

export const isExportJobFinished = (state: ExportJobState) => state !== 'queued' && state !== 'running';

/** The share of an export job done, for progress bars. */
export function exportJobFraction(kind: ExportJobKind, state: ExportJobState, progress: ExportJobProgress): number {
  if (state === 'completed') return 1;
  const [done, total] = kind === 'time_series' ? [progress.points_done, progress.points_total] : [progress.files_done, progress.files_total];
  return total > 0 ? Math.min(1, done / total) : 0;
}

/**
 * Wire contracts of the time-series pipeline: bulk points,
 * readings, read parameters, range deletions, the CSV upload mapping and ingest job status. The api
 * validates with these, the console parses with them, the ingest-worker reads job payloads with them.
 */
import { z } from 'zod';
import { isValidTimeZone, TIME_ZONE_MESSAGE } from './csv/time-zones.ts';
import { rowFiltersSchema } from './csv/row-filters.ts';
import { keyColumnsOf, MAX_KEY_COLUMNS } from './csv/long-format.ts';
import { unitConversionProblem } from './csv/unit-conversion.ts';
import { fractionMicros, splitEpochMs } from './sub-millisecond-time.ts';

/** Default and maximum number of readings per instrument a read answers (documented in OpenAPI). */
export const TIME_SERIES_DEFAULT_LIMIT = 2_000;
export const TIME_SERIES_MAX_LIMIT = 100_000;
/**
 * Caps of one read of readings (time-series-data, a unit operation's series, derived series): the
 * instruments it covers and the readings it may answer (instruments x limit). An answer streams, and
 * a reading's JSON is at most READ_MAX_READING_BYTES, so an answer is at most
 * READ_MAX_POINTS x READ_MAX_READING_BYTES bytes. A request past a cap answers 400 naming it.
 */
export const READ_MAX_INSTRUMENTS = 20;
export const READ_MAX_POINTS = 200_000;
export const READ_MAX_READING_BYTES = 200;
export const READ_CAP_MESSAGES = {
  instruments: (covered: number, hint: string) =>
    `A read may cover at most ${READ_MAX_INSTRUMENTS} instruments; this one covers ${covered}. ${hint}`,
  points: (instruments: number, limit: number) =>
    `A read may answer at most ${READ_MAX_POINTS} readings; this one may answer ${instruments} instruments x limit ${limit} = ${instruments * limit}. Lower limit or read fewer instruments.`,
} as const;
/** The largest bulk body accepted, in bytes (the route raises Fastify's body limit to this). */
export const BULK_MAX_BODY_BYTES = 64 * 1024 * 1024;
/** Points per queued chunk: keeps every Redis value around 1-2 MB. */
export const BULK_CHUNK_POINTS = 50_000;

const instrumentId = z.coerce.number().int().positive();
const finiteOrNull = z.number().refine(Number.isFinite, 'must be a finite number').nullable();
/** An ISO 8601 string or epoch milliseconds. */
export const timestampInput = z.union([z.string().min(1), z.number()]);

/** The largest quality code a point may carry (a UInt32: OPC UA StatusCodes use all 32 bits). */
export const BULK_QUALITY_MAX = 4_294_967_295;

/**
 * One written point: `measured_at` (or `ts`), `instrument_id`, and exactly one of `int_value`,
 * `float_value` or `value` (null allowed); optionally the source's `quality` code and its
 * `historical` flag. A time's microseconds (ISO fraction digits 4-6) are kept beside its
 * millisecond. Exactly-one and timestamp parsing are checked per index by the api so the error names
 * the first bad index.
 */
export const bulkPointSchema = z.object({
  measured_at: timestampInput.optional(),
  ts: timestampInput.optional(),
  instrument_id: instrumentId,
  int_value: z.number().int().nullable().optional(),
  float_value: finiteOrNull.optional(),
  value: finiteOrNull.optional(),
  quality: z.number().int().min(0).max(BULK_QUALITY_MAX).nullable().optional()
    .describe('The source\'s quality code, kept verbatim (an OPC UA StatusCode, a Sparkplug quality); absent or null: none given'),
  historical: z.boolean().optional().describe('The source marked the reading as historical (Sparkplug is_historical); default false'),
});
export type BulkPoint = z.infer<typeof bulkPointSchema>;

export const bulkBodySchema = z.object({
  data: z.array(bulkPointSchema).min(1, 'data must hold at least one point'),
});
export type BulkBody = z.infer<typeof bulkBodySchema>;

/**
 * A reading as the api answers it; min and max are present when the readings were bucketed. A raw
 * reading's `ts` has six fraction digits when it was stored with microseconds, and `quality` and
 * `historical` are present when its source gave them.
 */
export const readingSchema = z.object({
  ts: z.string(),
  instrument_id: z.number(),
  value: z.number().nullable(),
  min: z.number().nullable().optional(),
  max: z.number().nullable().optional(),
  quality: z.number().int().optional(),
  historical: z.boolean().optional(),
});
export type Reading = z.infer<typeof readingSchema>;
export const readingListSchema = z.array(readingSchema);

/** Bucket widths such as `500ms`, `10s`, `1m`, `1h`, `1d`. */
export const BUCKET_PATTERN = /^(\d+)(ms|s|m|h|d)$/;
const BUCKET_UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** The width of a bucket expression in milliseconds, or null when it is not one. */
export function parseBucket(expression: string): number | null {
  const match = BUCKET_PATTERN.exec(expression.trim());
  if (!match) return null;
  const width = Number(match[1]) * BUCKET_UNIT_MS[match[2]!]!;
  return Number.isSafeInteger(width) && width > 0 ? width : null;
}

/** A time the store can hold: a huge epoch number is as invalid as a malformed date. */
export const isoOrEpoch = z
  .string()
  .min(1)
  .max(100, 'Invalid date format.')
  .refine((text) => {
    const ms = parseTimestampInput(text);
    return ms >= MIN_TIMESTAMP_MS && ms <= MAX_TIMESTAMP_MS;
  }, 'Invalid date format.');

export const timeSeriesQuerySchema = z.object({
  instrument_id: instrumentId.optional(),
  equipment_id: instrumentId.optional(),
  start_time: isoOrEpoch.optional(),
  end_time: isoOrEpoch.optional(),
  bucket: z.string().refine((text) => parseBucket(text) !== null, 'bucket must be a width such as 10s, 1m or 1h').optional(),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(TIME_SERIES_MAX_LIMIT)
    .optional()
    .describe(`Readings per instrument at most (default ${TIME_SERIES_DEFAULT_LIMIT}, max ${TIME_SERIES_MAX_LIMIT}); a range holding more is bucketed. Instruments x limit may be at most ${READ_MAX_POINTS}.`),
});
export type TimeSeriesQuery = z.infer<typeof timeSeriesQuerySchema>;

export const unitOperationSeriesQuerySchema = timeSeriesQuerySchema.pick({ limit: true, bucket: true }).extend({
  instrument_id: instrumentId.optional().describe('Only this instrument of the equipment (a read covers at most READ_MAX_INSTRUMENTS instruments)'),
});

export const waitQuerySchema = z.object({
  wait: z.enum(['true', 'false']).optional().describe('true: answer once the data is queryable'),
});

export const deletionBodySchema = z
  .object({
    start_time: isoOrEpoch,
    end_time: isoOrEpoch,
    instrument_ids: z.array(instrumentId).min(1, 'instrument_ids must name at least one instrument').max(10_000),
  })
  .refine((body) => parseTimestampInput(body.end_time) >= parseTimestampInput(body.start_time), {
    message: 'End time must be after start time.',
    path: ['end_time'],
  });
export type DeletionBody = z.infer<typeof deletionBodySchema>;

export const ELAPSED_UNITS = ['seconds', 'minutes', 'hours', 'days'] as const;
export type ElapsedUnit = (typeof ELAPSED_UNITS)[number];
export const ELAPSED_UNIT_MS: Record<ElapsedUnit, number> = { seconds: 1_000, minutes: 60_000, hours: 3_600_000, days: 86_400_000 };

/** Series one upload may map (columns, or columns x keys in long format). */
export const CSV_MAPPING_MAX_SERIES = 2_000;

const csvMappingColumnSchema = z.object({
  column: z.string().min(1),
  instrument_id: instrumentId,
  /** Long format: the key-column value whose rows feed this instrument. */
  key: z.string().trim().min(1, 'key must not be empty').max(200).optional(),
  /** Deadband exports: an empty cell repeats the column's last value (in file order) instead of being missing. */
  fill_forward: z.boolean().default(false),
  /**
   * Convert the column's values from one unit to another while reading (mL/h to L/h, [degF] to Cel);
   * absent: stored as written. The instrument's unit is `to`.
   */
  convert_unit: z.object({
    from: z.string().trim().min(1, 'convert_unit.from must not be empty').max(50),
    to: z.string().trim().min(1, 'convert_unit.to must not be empty').max(50),
  }).superRefine((conversion, ctx) => {
    const problem = unitConversionProblem(conversion.from, conversion.to);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
  }).optional(),
});

/** Characters a column name given to a header-less file may not hold: the header rules remove them (headers.ts), and a line break would end the header line. */
const UNSAFE_COLUMN_NAME = /[<>"'&\r\n\t]/;

/** Names of the columns of a file without a header row, in order (the wizard's Column 1, Column 2, ... as renamed). */
const csvColumnNamesSchema = z
  .array(z.string().trim().min(1, 'column_names must not hold empty names').max(100)
    .refine((name) => !UNSAFE_COLUMN_NAME.test(name), { error: (issue) => `column name '${String(issue.input)}' may not contain < > " ' & or line breaks` }))
  .min(1)
  .max(10_000)
  .superRefine((names, ctx) => {
    const seen = new Set<string>();
    names.forEach((name, index) => {
      const key = name.trim().toLowerCase();
      if (seen.has(key)) ctx.addIssue({ code: 'custom', message: `column name '${name.trim()}' is given twice`, path: [index] });
      seen.add(key);
    });
  });

/**
 * How the file is read, as the preview detected it or the user changed it (shared/src/csv/detect.ts):
 * the api cuts the spooled file to its table with these, so the worker reads what the preview showed.
 */
export const csvReadingSchema = z.object({
  encoding: z.enum(['utf-8', 'latin1', 'utf-16le', 'utf-16be']).optional(),
  delimiter: z.enum([',', ';', '\t', '|']).optional(),
  /** 1-based line of the header row: the lines before it are a preamble and are not read. */
  header_line: z.number().int().min(1).max(5000).optional(),
  /** Stop at the first line after the header that ends the table (a section marker, a one-cell line). */
  table_end: z.boolean().default(false),
  /**
   * The file has no header row: `header_line` is its first data row and these name its columns. The
   * api writes them as the header of the table it cuts, so the worker reads a file like any other.
   */
  column_names: csvColumnNamesSchema.optional(),
  /**
   * The table at `header_line` is an endpoint plate grid (rows A-H by columns 1-12): the api writes it
   * as one reading per well, the table `Read time, A1..H12` with the one row `0:00:00, <values>`.
   */
  plate_grid: z.boolean().optional(),
});
export type CsvReading = z.infer<typeof csvReadingSchema>;

export const csvMappingSchema = z
  .object({
    timestamp_column: z.string().min(1, 'Please select a timestamp column from your CSV data. This is required to create the unit operation.'),
    timestamp_mode: z.enum(['absolute', 'elapsed']).default('absolute'),
    elapsed_unit: z.enum(ELAPSED_UNITS).optional(),
    /**
     * The instant elapsed time counts from, when the file states it (a preamble's start time) or the
     * user types it: ISO 8601 with an offset. Absent: the unit operation's start.
     */
    elapsed_start: z.iso.datetime({ offset: true, message: 'elapsed_start: must be an ISO 8601 date and time with an offset (2021-02-18T10:28:04+01:00)' }).optional(),
    reading: csvReadingSchema.optional(),
    /**
     * Where timestamps without their own offset were written: an IANA zone or a fixed offset. Absent:
     * the organisation's zone. A value's own offset, and a file that states its time base (DASware),
     * win over it.
     */
    time_zone: z.string().max(64).refine(isValidTimeZone, { error: (issue) => TIME_ZONE_MESSAGE(String(issue.input)) }).optional(),
    /** Long format: the column whose value says which series a row belongs to; every column entry then names its key. */
    key_column: z.string().min(1).optional(),
    /**
     * Long format keyed by several columns together (well x channel): instead of key_column. An
     * entry's key is the row's key cells joined with ' · ' (`A1 · OD600`).
     */
    key_columns: z.array(z.string().min(1)).min(1).max(MAX_KEY_COLUMNS, `At most ${MAX_KEY_COLUMNS} key columns`).optional(),
    /** Rows left out before reading (calibrators, controls, blanks): counted in the job's result by filter and value. */
    row_filters: rowFiltersSchema.optional(),
    columns: z
      .array(csvMappingColumnSchema)
      .min(1, 'No instrument columns selected. Please select at least one instrument column.')
      .max(CSV_MAPPING_MAX_SERIES, `At most ${CSV_MAPPING_MAX_SERIES} columns or keys can be mapped in one upload`),
    replace_existing: z.boolean().default(false),
    /**
     * An upload into a unit operation with a start and no end: true closes it at the last reading the
     * upload wrote, when the job completes. Absent or false keeps it open (a client feeding a running
     * unit operation in parts); the console's wizard asks, and closes by default.
     */
    close_open_end: z.boolean().optional(),
  })
  .superRefine((mapping, ctx) => {
    if (mapping.timestamp_mode === 'elapsed' && mapping.elapsed_unit === undefined) {
      ctx.addIssue({ code: 'custom', message: 'elapsed_unit is required when timestamp_mode is elapsed', path: ['elapsed_unit'] });
    }
    if (mapping.key_column !== undefined && mapping.key_columns !== undefined) {
      ctx.addIssue({ code: 'custom', message: 'give key_column or key_columns, not both', path: ['key_columns'] });
      return;
    }
    const keyColumns = keyColumnsOf(mapping).map((column) => column.trim().toLowerCase());
    const keyPath = mapping.key_columns !== undefined ? 'key_columns' : 'key_column';
    if (keyColumns.length === 0) {
      const keyed = mapping.columns.findIndex((entry) => entry.key !== undefined);
      if (keyed !== -1) ctx.addIssue({ code: 'custom', message: 'key needs key_column (long format)', path: ['columns', keyed, 'key'] });
      return;
    }
    if (keyColumns.includes(mapping.timestamp_column.trim().toLowerCase())) {
      ctx.addIssue({ code: 'custom', message: 'the key column cannot be the timestamp column', path: [keyPath] });
    }
    if (new Set(keyColumns).size !== keyColumns.length) ctx.addIssue({ code: 'custom', message: 'a key column is named twice', path: [keyPath] });
    const seen = new Set<string>();
    mapping.columns.forEach((entry, index) => {
      if (entry.key === undefined) {
        ctx.addIssue({ code: 'custom', message: 'every column needs a key in long format', path: ['columns', index, 'key'] });
        return;
      }
      if (keyColumns.includes(entry.column.trim().toLowerCase())) {
        ctx.addIssue({ code: 'custom', message: 'the key column cannot hold values', path: ['columns', index, 'column'] });
      }
      const pair = `${entry.column.trim().toLowerCase()}\u0000${entry.key}`;
      if (seen.has(pair)) ctx.addIssue({ code: 'custom', message: `column '${entry.column}' with key '${entry.key}' is mapped twice`, path: ['columns', index] });
      seen.add(pair);
    });
  });
export type CsvMapping = z.infer<typeof csvMappingSchema>;

export const INGEST_JOB_KINDS = ['bulk', 'deletion', 'csv'] as const;
export type IngestJobKind = (typeof INGEST_JOB_KINDS)[number];
export const INGEST_JOB_STATES = ['queued', 'running', 'completed', 'failed'] as const;
export type IngestJobState = (typeof INGEST_JOB_STATES)[number];

export const ingestProgressSchema = z.object({
  bytes_total: z.number(),
  bytes_read: z.number(),
  rows_read: z.number(),
  rows_skipped: z.number(),
  points_written: z.number(),
});
export type IngestProgress = z.infer<typeof ingestProgressSchema>;

export const ingestJobStatusSchema = z.object({
  id: z.string(),
  kind: z.enum(INGEST_JOB_KINDS),
  state: z.enum(INGEST_JOB_STATES),
  progress: ingestProgressSchema,
  result: z.record(z.string(), z.unknown()).nullable(),
  error: z.string().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type IngestJobStatus = z.infer<typeof ingestJobStatusSchema>;

export const EMPTY_PROGRESS: IngestProgress = { bytes_total: 0, bytes_read: 0, rows_read: 0, rows_skipped: 0, points_written: 0 };

/** Epoch milliseconds of an ISO string or a string/number of epoch milliseconds; NaN when invalid. */
export function parseTimestampInput(input: string | number): number {
  if (typeof input === 'number') return Number.isFinite(input) ? Math.trunc(input) : Number.NaN;
  const text = input.trim();
  if (/^-?\d+$/.test(text)) return Number(text);
  return Date.parse(text);
}

/**
 * parseTimestampInput's millisecond with the microseconds within it that the input states (an ISO
 * fraction's 4th to 6th digits, or the fraction of epoch milliseconds given as a number): what a bulk
 * point's time is stored as (shared/src/sub-millisecond-time.ts has the rule).
 */
export function parseTimestampInputMicros(input: string | number): { ms: number; micros: number } {
  if (typeof input === 'number') return Number.isFinite(input) ? splitEpochMs(input) : { ms: Number.NaN, micros: 0 };
  const ms = parseTimestampInput(input);
  return { ms, micros: Number.isNaN(ms) ? 0 : fractionMicros(input) };
}

/** ClickHouse keeps timestamps as Int64 epoch ms; these bounds keep them inside what Date handles. */
export const MIN_TIMESTAMP_MS = Date.UTC(1900, 0, 1);
export const MAX_TIMESTAMP_MS = Date.UTC(2200, 0, 1);

export const TIME_SERIES_MESSAGES = {
  uploadRateLimited: (perMinute: number) =>
    `Too many upload attempts. Please wait before trying again. (Max ${perMinute} uploads per minute)`,
  noValidData: 'No valid data found in CSV within the specified time range. Please check your data format and time range.',
  instrumentNotFound: (index: number) => `data.${index}.instrument_id: instrument not found`,
  fileRequired: 'A CSV file is required (multipart field "file")',
  mappingRequired: 'mapping: required (a JSON multipart field)',
} as const;

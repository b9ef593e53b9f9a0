/**
 * What a CSV upload's job reports about cells and rows it did not store as written: flagged cells
 * (stored as missing, counted per column with their first raw texts) and rows that share a stored
 * key (same instrument and timestamp). The worker writes `ingest_jobs.result` through this schema and
 * the console reads the job's answer with it; a completed job and a refused one carry the same shapes.
 */
import { z } from 'zod';
import { DUPLICATE_POLICIES } from './requests.ts';

export const flaggedCellsSchema = z.array(z.object({
  column: z.string(),
  key: z.string().nullable(),
  count: z.number().int().positive(),
  examples: z.array(z.string()),
}));
export type FlaggedCells = z.infer<typeof flaggedCellsSchema>;

/** One stored key that several rows of the file landed on. */
export const duplicateKeySchema = z.object({
  instrument_id: z.number().int().positive(),
  /** The column (and key, in long format) the rows came from. */
  column: z.string(),
  time: z.string(),
  /** File lines of the first and the last row of this key (1-based, counted from the file's first line). */
  first_line: z.number().int().positive(),
  last_line: z.number().int().positive(),
  rows: z.number().int().min(2),
});

export const duplicateSummarySchema = z.object({
  policy: z.enum(DUPLICATE_POLICIES),
  /** Stored keys with more than one row. */
  keys: z.number().int().nonnegative(),
  /** Rows not stored because another row of their key was kept (0 when refused: nothing was stored). */
  rows_dropped: z.number().int().nonnegative(),
  /** The duplicate key that comes first in the file. */
  first: duplicateKeySchema.nullable(),
});
export type DuplicateSummary = z.infer<typeof duplicateSummarySchema>;

/** The fields of a CSV job's result this contract owns (the result has more: counts, times, zones). */
export const csvJobResultSchema = z.object({
  points_written: z.number().int().nonnegative().optional(),
  flagged_cells: flaggedCellsSchema.optional(),
  flagged_message: z.string().nullable().optional(),
  duplicates: duplicateSummarySchema.optional(),
  duplicates_message: z.string().nullable().optional(),
  /** Rows the upload's row filters left out, and the sentence that says which (shared/src/csv/row-filters.ts). */
  rows_skipped_filtered: z.number().int().nonnegative().optional(),
  filtered_message: z.string().nullable().optional(),
}).loose();
export type CsvJobResult = z.infer<typeof csvJobResultSchema>;

/** Reads the flag, duplicate and row-filter fields of a job's result; null when the result is not a CSV job's. */
export function readCsvJobResult(result: unknown): CsvJobResult | null {
  const parsed = csvJobResultSchema.safeParse(result);
  return parsed.success ? parsed.data : null;
}

function rowsOf(key: NonNullable<DuplicateSummary['first']>): string {
  return key.rows === 2 ? `lines ${key.first_line} and ${key.last_line}` : `${key.rows} rows, lines ${key.first_line} to ${key.last_line}`;
}

/** Why a file was refused for its duplicates: the count and the first key, with its lines. */
export function duplicatesRefusedMessage(summary: DuplicateSummary): string {
  const first = summary.first!;
  return `${summary.keys.toLocaleString('en-US')} time(s) appear more than once for one instrument, so nothing was written: `
    + `'${first.column}' at ${first.time} is on ${rowsOf(first)}. `
    + 'Upload again choosing to keep the first or the last row of each time, or correct the file.';
}

/** What a completed upload says about the duplicates it resolved, or null when there were none. */
export function duplicatesKeptMessage(summary: DuplicateSummary): string | null {
  if (summary.keys === 0 || !summary.first) return null;
  const kept = summary.policy === 'keep-first' ? 'first' : 'last';
  return `${summary.keys.toLocaleString('en-US')} time(s) appeared more than once for one instrument: the ${kept} row of each was kept and `
    + `${summary.rows_dropped.toLocaleString('en-US')} row value(s) were not stored (first: '${summary.first.column}' at ${summary.first.time}, ${rowsOf(summary.first)}).`;
}

/**
 * Wire contracts of importing an analyzer report into a unit operation's samples. A report is keyed
 * by sample id (and measurement time); each row names its sample by the id written on the tube,
 * which is matched to the unit operation's samples without regard to case or surrounding spaces.
 *
 * Two layouts: **wide** (a row per sample, a column per analyte, the unit from the header or chosen)
 * and **long** (a row per result: analyte, value and unit columns). A **key/value** report (one sample
 * as `key : value` lines, samples-key-value.ts) is read as a wide report of one row. Rows of calibrators, controls and
 * blanks are left out by a column and word patterns, or by a sample-type column and the values to keep.
 *
 * A result cell is a number or a flag with its limit: `< 0.5`, `>50`, `≤ 0.1` read as written;
 * `LOQ`, `<LOQ`, `Below range`, `Above range` and the like take their limit from the limit column when
 * the mapping names one (else the row is reported as unreadable, never stored as a made-up number).
 */
import { z } from 'zod';
import { SAMPLE_FLAG_SIGNS, type SampleFlag } from './samples.ts';

/** A report is a day's or a campaign's results, not a time series: a few MiB is far above any analyzer's file. */
export const SAMPLE_REPORT_MAX_BYTES = 10 * 1024 * 1024;
/** Data rows one import reads (the Cedex Bio HT archive of four days holds 930). */
export const SAMPLE_REPORT_MAX_ROWS = 50_000;
/** Unreadable and excluded rows the answer lists one by one; the counts always cover them all. */
export const SAMPLE_REPORT_LISTED_ROWS = 200;
/** The multipart field with the mapping JSON; it must come before the file. */
export const SAMPLE_REPORT_MAPPING_FIELD = 'mapping';

/** Words that name a row that is not a sample of the process: matched as whole words, case-insensitive. */
export const DEFAULT_EXCLUDED_WORDS = ['Calibrator', 'Calibration', 'Control', 'QC', 'Blank', 'Standard'] as const;

export const SAMPLE_IMPORT_MESSAGES = {
  mappingRequired: 'The mapping field (JSON) must come before the file.',
  mappingNotJson: 'mapping: must be JSON',
  fileRequired: 'No file: send the report in a part named file.',
  tooLarge: `The report is larger than ${SAMPLE_REPORT_MAX_BYTES / (1024 * 1024)} MiB; an analyzer report is far smaller: split it or check the file.`,
  tooManyRows: `The report has more than ${SAMPLE_REPORT_MAX_ROWS} data rows.`,
  columnMissing: (role: string, column: string) => `${role} column '${column}' is not in the report's header.`,
  noAnalytes: 'Choose at least one analyte column.',
  notKeyValue: "The report is not a key/value report: no lines such as 'Sample ID : CLB001' or 'Viability (%);68.2' were found.",
  tooManyKeys: (limit: number) => `The key/value report has more than ${limit} keys: a single sample's report is far smaller.`,
} as const;

const columnName = z.string().trim().min(1, 'A column name is required.').max(200);
const optionalColumn = columnName.nullable().optional().transform((value) => value ?? null);
const analyteName = z.string().trim().min(1, 'Analyte is required.').max(100);
const unitCode = z.string().trim().min(1, 'Unit is required (a UCUM code such as g/L, mmol/L, 10*6/mL or %).').max(50);

export const wideAnalyteSchema = z.object({
  column: columnName.describe("The report's column holding this analyte"),
  analyte: analyteName.optional().describe('The analyte name to store; the column name without its unit when absent'),
  unit: unitCode.describe('UCUM code'),
});

export const longAnalyteSchema = z.object({
  source: z.string().trim().min(1).max(200).describe('The analyte as the report writes it (a test code such as GLC3B)'),
  analyte: analyteName.optional().describe('The analyte name to store; `source` when absent'),
  unit: unitCode.optional().describe("UCUM code; the unit column's value when absent"),
});

export const sampleReportLayoutSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('wide'),
    analytes: z.array(wideAnalyteSchema).min(1, SAMPLE_IMPORT_MESSAGES.noAnalytes).max(100),
  }),
  z.object({
    kind: z.literal('long'),
    analyte_column: columnName,
    value_column: columnName,
    unit_column: optionalColumn,
    analytes: z.array(longAnalyteSchema).max(200).optional()
      .describe("Only these analytes, renamed and with these units; every analyte of the report (units from the unit column) when absent"),
  }),
]);

export const sampleReportExclusionSchema = z.object({
  column: optionalColumn.describe('The column the rule reads; the sample id column when absent'),
  keep: z.array(z.string().trim().min(1).max(100)).max(50).optional()
    .describe('Keep only rows whose value is one of these (a sample-type column: SAM, Sample)'),
  patterns: z.array(z.string().trim().min(1).max(100)).max(50).optional()
    .describe(`Leave out rows whose value holds one of these words (case-insensitive); default ${DEFAULT_EXCLUDED_WORDS.join(', ')}`),
});

export const sampleReportMappingSchema = z.object({
  sheet: z.string().min(1).max(200).optional().describe('The sheet of an Excel workbook; the first when absent'),
  encoding: z.enum(['utf-8', 'latin1', 'utf-16le', 'utf-16be']).optional(),
  delimiter: z.enum([',', ';', '\t', '|']).optional(),
  key_value: z.boolean().optional()
    .describe("The report is one sample written as key/value lines ('Sample ID : CLB001', 'Viability (%);68.2'): each key is a column of a one-row table"),
  header_line: z.number().int().min(0).max(5000).optional()
    .describe('1-based line of the header; 0: the report has no header row and its columns are named Column 1, Column 2, ...; detected when absent'),
  sample_id_column: columnName,
  drawn_at_column: optionalColumn.describe('When the sample was drawn: samples not in the unit operation are created from it'),
  measured_at_column: optionalColumn.describe('When the result was measured'),
  limit_column: optionalColumn.describe('The quantitation limit of a result flagged without one (LOQ, Below range)'),
  time_zone: z.string().trim().min(1).max(64).optional().describe('The zone of times written without an offset; UTC when absent'),
  prefer_day_first: z.boolean().optional().describe('Read 03/04 as 3 April when the report never tells'),
  method: z.string().trim().max(200).nullable().optional().transform((value) => (value ? value : null))
    .describe('The analyzer or assay, stored with each result'),
  layout: sampleReportLayoutSchema,
  exclude: sampleReportExclusionSchema.optional(),
});

export const sampleImportQuerySchema = z.object({
  dry_run: z.enum(['true', 'false']).optional().transform((value) => value === 'true')
    .describe('true: answer what the import would do and write nothing'),
});

const rowProblemSchema = z.object({
  line: z.number().int().describe("1-based line of the report (of the sheet's CSV text for a workbook; of the value's own line in a key/value report)"),
  sample_id: z.string().nullable(),
  reason: z.string(),
});

const plannedResultSchema = z.object({
  analyte: z.string(),
  value: z.number(),
  flag: z.enum(['below_limit', 'above_limit']).nullable(),
  unit: z.string(),
  measured_at: z.string().nullable(),
  change: z.enum(['add', 'replace', 'unchanged']),
});

export const sampleImportPreviewSchema = z.object({
  dry_run: z.boolean(),
  rows_read: z.number().int().describe('Data rows of the report'),
  samples_matched: z.array(z.object({ id: z.number().int(), sample_id: z.string(), results: z.array(plannedResultSchema) })),
  samples_to_create: z.array(z.object({ sample_id: z.string(), drawn_at: z.string(), results: z.array(plannedResultSchema) })),
  unmatched_sample_ids: z.array(z.object({ sample_id: z.string(), rows: z.number().int() }))
    .describe('Sample ids of the report that are not in the unit operation (and had no drawn time to create them)'),
  rows_excluded: z.number().int(),
  excluded: z.array(rowProblemSchema).describe(`The first ${SAMPLE_REPORT_LISTED_ROWS} excluded rows`),
  results_added: z.number().int(),
  results_replaced: z.number().int(),
  results_unchanged: z.number().int(),
  results_superseded: z.number().int().describe('Results measured again later in the same report: the latest is kept'),
  flags_kept: z.number().int(),
  analytes: z.array(z.object({ source: z.string(), analyte: z.string(), unit: z.string(), results: z.number().int() })),
  rows_unreadable: z.number().int(),
  unreadable: z.array(rowProblemSchema).describe(`The first ${SAMPLE_REPORT_LISTED_ROWS} rows that could not be read, with why`),
  samples_created: z.number().int().describe('0 in a dry run'),
  samples_updated: z.number().int().describe('0 in a dry run'),
});

export type SampleReportMapping = z.output<typeof sampleReportMappingSchema>;
export type SampleReportMappingInput = z.input<typeof sampleReportMappingSchema>;
export type SampleReportLayout = z.output<typeof sampleReportLayoutSchema>;
export type SampleImportPreview = z.infer<typeof sampleImportPreviewSchema>;
export type SampleImportRowProblem = z.infer<typeof rowProblemSchema>;
export type PlannedResult = z.infer<typeof plannedResultSchema>;

export type ReportCell =
  | { kind: 'empty' }
  | { kind: 'value'; value: number; flag: SampleFlag | null }
  | { kind: 'error'; message: string };

const NUMBER = /^[+-]?(\d+([.,]\d*)?|[.,]\d+)([eE][+-]?\d+)?$/;

/** A number as analyzers and spreadsheets write it: `5.9734`, `  5.9734`, `0,56`, `1.2e3`. */
export function parseReportNumber(text: string): number | null {
  const trimmed = text.trim().replace(/\s/g, '');
  if (!NUMBER.test(trimmed)) return null;
  const value = Number(trimmed.replace(',', '.'));
  return Number.isFinite(value) ? value : null;
}

const SIGNED_LIMIT = /^(<=?|>=?|≤|≥)\s*(.*)$/;
/** Flags that carry no number: the limit comes from the limit column. */
const BELOW_WORDS = /^(<\s*)?(loq|lloq|lod|bql|blq|below\s+(range|loq|limit|lod|quantitation\s+limit)|under\s*range|low|lo|<\s*test\s*rng)$/i;
const ABOVE_WORDS = /^(>\s*)?(uloq|above\s+(range|loq|limit|uloq)|over\s*range|ovrrng|high|hi|>\s*test\s*rng)$/i;

export const REPORT_CELL_MESSAGES = {
  notANumber: (text: string) => `'${text.slice(0, 40)}' is not a number or a flagged limit (< 0.5, > 50).`,
  flagWithoutLimit: (text: string) => `'${text.slice(0, 40)}' is flagged without its limit: map the limit column.`,
  badLimit: (text: string) => `The limit '${text.slice(0, 40)}' is not a number.`,
} as const;

/**
 * A result cell of a report: a number, a limit with its side (`< 0.5`, `>50`, `≤ 0.1`), or a flag word
 * whose limit is `limitText` (the mapped limit column's cell). The flag rules of the grid
 * (SAMPLE_FLAG_SIGNS) extended by the words analyzers write.
 */
export function readReportCell(raw: string, limitText: string | null = null): ReportCell {
  const text = raw.trim();
  if (text === '') return { kind: 'empty' };
  const number = parseReportNumber(text);
  if (number !== null) return { kind: 'value', value: number, flag: null };
  const signed = SIGNED_LIMIT.exec(text);
  if (signed && parseReportNumber(signed[2]!) !== null) {
    const flag: SampleFlag = signed[1]!.startsWith('<') || signed[1] === '≤' ? 'below_limit' : 'above_limit';
    return { kind: 'value', value: parseReportNumber(signed[2]!)!, flag };
  }
  const flag: SampleFlag | null = BELOW_WORDS.test(text) ? 'below_limit' : ABOVE_WORDS.test(text) ? 'above_limit' : null;
  if (flag) {
    if (limitText === null || limitText.trim() === '') return { kind: 'error', message: REPORT_CELL_MESSAGES.flagWithoutLimit(text) };
    const limit = parseReportNumber(limitText.replace(/^\s*(<=?|>=?|≤|≥)/, ''));
    return limit === null ? { kind: 'error', message: REPORT_CELL_MESSAGES.badLimit(limitText.trim()) } : { kind: 'value', value: limit, flag };
  }
  return { kind: 'error', message: REPORT_CELL_MESSAGES.notANumber(text) };
}

/** A result as the grid and the preview write it. */
export function formatReportResult(result: { value: number; flag: SampleFlag | null }): string {
  return result.flag ? `${SAMPLE_FLAG_SIGNS[result.flag]} ${result.value}` : String(result.value);
}

/** Whether a cell names a row to leave out: one of the words, as a whole word, in any case. */
export function matchesExcludedWord(value: string, words: readonly string[]): boolean {
  const lower = value.toLowerCase();
  return words.some((word) => {
    const escaped = word.toLowerCase().replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    // Digits may follow a word (QC1, Blank2); letters may not (Controller is no control).
    return new RegExp(`(^|[^a-z])${escaped}([^a-z]|$)`, 'i').test(lower);
  });
}

/** The key sample ids are matched by: case and surrounding spaces do not tell two tubes apart. */
export function sampleIdKey(sampleId: string): string {
  return sampleId.trim().toLowerCase();
}

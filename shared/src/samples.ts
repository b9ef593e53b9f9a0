/**
 * Wire contracts of samples: off-line and at-line results (cell counts, metabolites, titer) taken from
 * a unit operation, beside its on-line series. A sample is keyed by the id written on its tube, unique
 * within its unit operation; each of its results names an analyte once.
 *
 * A result is a number, or a flag with the quantitation limit it was measured against: `below_limit`
 * with value 0.5 reads "< 0.5", `above_limit` with value 50 reads "> 50". Units are UCUM codes; the api
 * checks them with the UCUM library (kept out of this browser-safe module).
 *
 * The grid saves many samples in one request, all or nothing; its 400 lists every bad cell by row
 * (1-based, in the order of `samples`) and column (the grid's header for that cell).
 */
import { z } from 'zod';
import { entityIdSchema } from './entities.ts';

export const SAMPLE_FLAGS = ['below_limit', 'above_limit'] as const;
export type SampleFlag = (typeof SAMPLE_FLAGS)[number];

/** How a flag is written in a cell and a tooltip: '< 0.5', '> 50'. */
export const SAMPLE_FLAG_SIGNS: Record<SampleFlag, string> = { below_limit: '<', above_limit: '>' };

export const SAMPLE_ID_MAX_LENGTH = 100;
export const ANALYTE_MAX_LENGTH = 100;
export const SAMPLE_UNIT_MAX_LENGTH = 50;
export const SAMPLE_METHOD_MAX_LENGTH = 200;
export const SAMPLE_NOTES_MAX_LENGTH = 5000;
/** Far above the analytes of any analyzer panel; bounds one sample's row. */
export const RESULTS_PER_SAMPLE_MAX = 100;
/** A campaign's samples for one vessel fit easily; bounds the work of one grid save. */
export const SAMPLES_PER_SAVE_MAX = 2000;

/** The grid's headers for a sample's own fields; a result's column is `Analyte [unit]`. */
export const SAMPLE_GRID_COLUMNS = { sampleId: 'Sample ID', drawnAt: 'Drawn', notes: 'Notes' } as const;

export function resultColumnLabel(analyte: string, unit: string): string {
  return unit ? `${analyte} [${unit}]` : analyte;
}

/** A result as a cell shows it: '12.5', '< 0.5', '> 50'. */
export function formatSampleResult(result: { value: number; flag: SampleFlag | null }): string {
  return result.flag ? `${SAMPLE_FLAG_SIGNS[result.flag]} ${result.value}` : String(result.value);
}

export const SAMPLE_MESSAGES = {
  sampleIdRequired: 'Sample ID is required.',
  drawnAtRequired: 'Drawn time is required.',
  invalidTime: 'Invalid date format.',
  analyteRequired: 'Analyte is required.',
  unitRequired: 'Unit is required (a UCUM code such as g/L, 10*6/mL or %).',
  valueRequired: 'A result needs a finite number (the limit when it is flagged).',
  duplicateSampleId: 'Sample ID appears more than once.',
  duplicateAnalyte: 'Analyte appears more than once in this sample.',
  duplicateId: 'The same sample is saved twice.',
  deletedAndSaved: 'A sample cannot be saved and deleted in the same request.',
  notFound: 'Sample not found',
} as const;

function requiredText(message: string, max: number, label: string) {
  return z
    .string({ error: message })
    .trim()
    .min(1, message)
    .max(max, `${label} must be at most ${max} characters.`);
}

function optionalText(max: number, label: string) {
  return z
    .string()
    .trim()
    .max(max, `${label} must be at most ${max} characters.`)
    .nullable()
    .optional()
    .transform((value) => (value === '' || value === undefined ? null : value));
}

const isoTime = (message: string) =>
  z
    .string({ error: message })
    .refine((value) => !Number.isNaN(Date.parse(value)), SAMPLE_MESSAGES.invalidTime)
    .describe('ISO 8601 date-time');

export const sampleResultInputSchema = z.object({
  analyte: requiredText(SAMPLE_MESSAGES.analyteRequired, ANALYTE_MAX_LENGTH, 'Analyte'),
  value: z.number({ error: SAMPLE_MESSAGES.valueRequired }).finite(SAMPLE_MESSAGES.valueRequired)
    .describe('The measured value, or the quantitation limit when flagged'),
  flag: z.enum(SAMPLE_FLAGS).nullable().optional().transform((value) => value ?? null)
    .describe('below_limit ("< value") or above_limit ("> value"); null for a measured value'),
  unit: requiredText(SAMPLE_MESSAGES.unitRequired, SAMPLE_UNIT_MAX_LENGTH, 'Unit').describe('UCUM code, e.g. g/L, 10*6/mL, %'),
  method: optionalText(SAMPLE_METHOD_MAX_LENGTH, 'Method').describe('Method or analyzer'),
  measured_at: isoTime(SAMPLE_MESSAGES.invalidTime).nullable().optional().transform((value) => value ?? null),
});

function uniqueAnalytes(results: Array<{ analyte: string }>, ctx: z.RefinementCtx, prefix: PropertyKey[]) {
  const seen = new Set<string>();
  results.forEach((result, index) => {
    const key = result.analyte.toLowerCase();
    if (seen.has(key)) ctx.addIssue({ code: 'custom', message: SAMPLE_MESSAGES.duplicateAnalyte, path: [...prefix, index, 'analyte'] });
    seen.add(key);
  });
}

const sampleFields = {
  sample_id: requiredText(SAMPLE_MESSAGES.sampleIdRequired, SAMPLE_ID_MAX_LENGTH, 'Sample ID').describe('The id written on the tube'),
  drawn_at: isoTime(SAMPLE_MESSAGES.drawnAtRequired),
  notes: optionalText(SAMPLE_NOTES_MAX_LENGTH, 'Notes'),
  results: z.array(sampleResultInputSchema).max(RESULTS_PER_SAMPLE_MAX, `At most ${RESULTS_PER_SAMPLE_MAX} results per sample.`),
};

/** One row of a grid save: with `id` it replaces that sample, else the sample with its sample_id (or a new one). */
export const sampleInputSchema = z
  .object({ id: entityIdSchema.optional().describe('The sample to replace (renaming it is allowed)'), ...sampleFields })
  .superRefine((sample, ctx) => uniqueAnalytes(sample.results, ctx, ['results']));

export const sampleGridSaveSchema = z
  .object({
    samples: z.array(sampleInputSchema).max(SAMPLES_PER_SAVE_MAX, `At most ${SAMPLES_PER_SAVE_MAX} samples per save.`),
    delete_ids: z.array(entityIdSchema).max(SAMPLES_PER_SAVE_MAX, `At most ${SAMPLES_PER_SAVE_MAX} deletions per save.`)
      .optional().transform((value) => value ?? []).describe('Samples of this unit operation to delete'),
  })
  .superRefine((body, ctx) => {
    const sampleIds = new Set<string>();
    const ids = new Set<number>();
    const deleted = new Set(body.delete_ids);
    body.samples.forEach((sample, index) => {
      const key = sample.sample_id;
      if (sampleIds.has(key)) ctx.addIssue({ code: 'custom', message: SAMPLE_MESSAGES.duplicateSampleId, path: ['samples', index, 'sample_id'] });
      sampleIds.add(key);
      if (sample.id === undefined) return;
      if (ids.has(sample.id)) ctx.addIssue({ code: 'custom', message: SAMPLE_MESSAGES.duplicateId, path: ['samples', index, 'sample_id'] });
      if (deleted.has(sample.id)) ctx.addIssue({ code: 'custom', message: SAMPLE_MESSAGES.deletedAndSaved, path: ['samples', index, 'sample_id'] });
      ids.add(sample.id);
    });
  });

/** PATCH of one sample: fields left out keep their value; `results`, when given, replaces them all. */
export const sampleUpdateSchema = z
  .object({
    sample_id: sampleFields.sample_id.optional(),
    drawn_at: sampleFields.drawn_at.optional(),
    notes: optionalText(SAMPLE_NOTES_MAX_LENGTH, 'Notes').optional(),
    results: sampleFields.results.optional(),
  })
  .superRefine((sample, ctx) => uniqueAnalytes(sample.results ?? [], ctx, ['results']));

export const sampleResultSchema = z.object({
  analyte: z.string(),
  value: z.number(),
  flag: z.enum(SAMPLE_FLAGS).nullable(),
  unit: z.string(),
  method: z.string().nullable(),
  measured_at: z.string().nullable().describe('ISO 8601 date-time or null'),
});

export const sampleSchema = z.object({
  id: entityIdSchema,
  organization_id: entityIdSchema,
  unit_operation_id: entityIdSchema,
  sample_id: z.string(),
  drawn_at: z.string().describe('ISO 8601 date-time'),
  notes: z.string().nullable(),
  results: z.array(sampleResultSchema),
  created_at: z.string(),
  updated_at: z.string(),
});

/** One bad cell of a grid save. */
export const sampleCellErrorSchema = z.object({
  row: z.number().int().describe('1-based position in `samples`'),
  column: z.string().describe("The grid's header: 'Sample ID', 'Drawn', 'Notes' or 'Analyte [unit]'"),
  message: z.string(),
});

/** The 400 of a grid save: `error` names every bad cell in one sentence, `cells` lists them for the grid. */
export const sampleGridErrorSchema = z.object({ error: z.string(), cells: z.array(sampleCellErrorSchema).optional() });

export type SampleFlagValue = SampleFlag | null;
export type SampleResultInput = z.input<typeof sampleResultInputSchema>;
export type SampleInput = z.input<typeof sampleInputSchema>;
export type SampleGridSave = z.input<typeof sampleGridSaveSchema>;
export type SampleGridSaveParsed = z.output<typeof sampleGridSaveSchema>;
export type SampleUpdate = z.output<typeof sampleUpdateSchema>;
export type SampleResult = z.infer<typeof sampleResultSchema>;
export type Sample = z.infer<typeof sampleSchema>;
export type SampleCellError = z.infer<typeof sampleCellErrorSchema>;

/** The sample files of an export: long (one row per result) and wide (one row per sample, the grid's layout). */
export const SAMPLE_EXPORT_FORMATS = ['csv-long', 'csv-wide'] as const;
export type SampleExportFormat = (typeof SAMPLE_EXPORT_FORMATS)[number];

/**
 * Columns of the long sample file. A flagged result has no `value`, its `flag` and its `limit`; a
 * measured one its `value` and neither of the others.
 */
export const SAMPLE_LONG_COLUMNS = [
  'unit_operation_id', 'sample_id', 'drawn_at', 'elapsed_s', 'analyte', 'value', 'flag', 'limit', 'unit', 'method', 'measured_at', 'notes',
] as const;

const sampleExportId = z.coerce.number().int().positive();

export const sampleExportQuerySchema = z
  .object({
    unit_operation_id: sampleExportId.optional().describe("This unit operation's samples"),
    run_id: sampleExportId.optional().describe("The samples of every unit operation of this run"),
    format: z.enum(SAMPLE_EXPORT_FORMATS).describe('csv-long: one row per result; csv-wide: one row per sample, a column per analyte and unit, as the grid pastes it'),
  })
  .superRefine((query, ctx) => {
    const scopes = [query.unit_operation_id, query.run_id].filter((value) => value !== undefined).length;
    if (scopes !== 1) ctx.addIssue({ code: 'custom', message: 'name either a unit_operation_id or a run_id', path: ['unit_operation_id'] });
  });
export type SampleExportQuery = z.infer<typeof sampleExportQuerySchema>;

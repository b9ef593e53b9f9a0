/** Request and response shapes of the derived-parameter endpoints, shared by the api and the console. */
import { z } from 'zod';
import { timeSeriesQuerySchema } from '../timeseries.ts';
import { MAX_EXPRESSION_LENGTH } from './expression.ts';
import { SAMPLE_VALUE_MODES } from './sample-values.ts';

const expressionSchema = z
  .string({ message: 'Expression is required' })
  .trim()
  .min(1, 'Expression is required')
  .max(MAX_EXPRESSION_LENGTH, `Expression must be at most ${MAX_EXPRESSION_LENGTH} characters`);

const nullableText = (max: number, label: string) => z
  .string()
  .trim()
  .max(max, `${label} must be at most ${max} characters`)
  .nullish()
  .transform((value) => (value ? value : null));

export const derivedParameterFields = {
  name: z.string({ message: 'Name is required' }).trim().min(1, 'Name is required').max(200, 'Name must be at most 200 characters'),
  unit: nullableText(50, 'Unit'),
  expression: expressionSchema,
  description: nullableText(2000, 'Description'),
};

const sampleValuesSchema = z.enum(SAMPLE_VALUE_MODES)
  .describe('How sample analytes are taken between samples: interpolate (linear between neighbouring samples) or last (the last sample\'s value)');

export const derivedParameterCreateSchema = z.object({ ...derivedParameterFields, sample_values: sampleValuesSchema.default('interpolate') });
export const derivedParameterUpdateSchema = z.object({ ...derivedParameterFields, sample_values: sampleValuesSchema }).partial();
export type DerivedParameterCreate = z.infer<typeof derivedParameterCreateSchema>;

export const derivedParameterSchema = z.object({
  id: z.number(),
  organization_id: z.number(),
  name: z.string(),
  unit: z.string().nullable(),
  expression: z.string(),
  description: z.string().nullable(),
  sample_values: z.enum(SAMPLE_VALUE_MODES),
  library_key: z.string().nullable().describe('The built-in formula this started as a copy of'),
  version: z.number().describe('Raised by every edit; each version is kept'),
  created_by: z.number().nullable(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type DerivedParameter = z.infer<typeof derivedParameterSchema>;

export const derivedParameterVersionSchema = z.object({
  version: z.number(),
  name: z.string(),
  unit: z.string().nullable(),
  expression: z.string(),
  description: z.string().nullable(),
  sample_values: z.enum(SAMPLE_VALUE_MODES),
  created_by: z.number().nullable(),
  created_at: z.string(),
});
export type DerivedParameterVersion = z.infer<typeof derivedParameterVersionSchema>;

/** The same window and size rules as instrument readings. */
export const derivedSeriesQuerySchema = timeSeriesQuerySchema.pick({ start_time: true, end_time: true, limit: true });

export const derivedPreviewBodySchema = z.object({
  expression: expressionSchema,
  sample_values: sampleValuesSchema.default('interpolate'),
  unit_operation_id: z.number().int().positive(),
  start_time: z.string().optional(),
  end_time: z.string().optional(),
  limit: z.number().int().min(1).max(100_000).optional(),
});

export const derivedPointSchema = z.object({ ts: z.string(), value: z.number().nullable() });

export const derivedSeriesSchema = z.object({
  derived_parameter_id: z.number().nullable(),
  version: z.number().nullable().describe('The version of the formula that computed these values'),
  name: z.string(),
  unit: z.string().nullable(),
  expression: z.string(),
  /** Which instrument each reference resolved to. */
  inputs: z.array(z.object({ reference: z.string(), instrument_id: z.number(), instrument_name: z.string() })),
  /** Which sample analyte each sample reference read, and from how many samples. */
  sample_inputs: z.array(z.object({ reference: z.string(), analyte: z.string(), unit: z.string(), samples: z.number() })),
  sample_values: z.enum(SAMPLE_VALUE_MODES).describe('How the sample analytes were taken between samples'),
  /** Whether the grid is the inputs' own readings (raw) or bucket averages of this width. */
  bucket_ms: z.number().nullable(),
  points: z.array(derivedPointSchema),
});
export type DerivedSeries = z.infer<typeof derivedSeriesSchema>;

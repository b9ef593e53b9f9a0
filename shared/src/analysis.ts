/**
 * Wire contracts of Analyze: aligning unit operations on process time, golden-batch envelopes over
 * reference unit operations, deviation of targets from an envelope, and saved golden batches.
 */
import { z } from 'zod';
import { INSTRUMENT_TYPES, UNIT_OPERATION_TYPES, type InstrumentType } from './enums.ts';
import { entityIdSchema } from './entities.ts';

export const MAX_REFERENCE_UNIT_OPERATIONS = 200;
export const MAX_TARGET_UNIT_OPERATIONS = 20;
/** More grid times than this would not fit a chart and would only slow the statistics down. */
export const MAX_GRID_POINTS = 20_000;
/**
 * Values one deviation answer may hold: grid times x parameters x (the envelope and each target). Each
 * is a point of an envelope or of a target's series, so this bounds the answer's size.
 */
export const MAX_ANSWER_VALUES = 200_000;
/** The default grid step aims at about this many grid times over the longest reference. */
export const DEFAULT_GRID_POINTS = 1_000;
/** A grid time takes part in a deviation only when at least this many references contribute to it. */
export const MIN_CONTRIBUTING_RUNS = 2;

export const ANALYSIS_MESSAGES = {
  mixedTypes: 'Reference unit operations must all be of the same type.',
  tooFewReferences: 'At least two reference unit operations are needed.',
  tooManyGridPoints: `The grid step gives more than ${MAX_GRID_POINTS} grid times; choose a larger step.`,
  noReferenceData: 'None of the reference unit operations has a start time.',
  bandOrder: 'The lower percentile must be below the upper percentile.',
  goldenBatchNotFound: 'Golden batch not found',
  targetType: 'Targets must be of the reference unit operations\' type.',
  tooManyValues: (gridTimes: number, parameters: number, series: number) =>
    `An analysis may answer at most ${MAX_ANSWER_VALUES} values; this one may answer ${gridTimes} grid times x ${parameters} parameters x ${series} `
    + `(the envelope and each target) = ${gridTimes * parameters * series}. Choose a larger grid step, fewer parameters or fewer targets.`,
} as const;

export const instrumentTypeSchema = z.enum(INSTRUMENT_TYPES, { error: 'Parameter must be one of the instrument types.' });

/**
 * A parameter of an envelope or a deviation: an instrument type (the instrument of that type on each
 * unit operation's equipment) or a derived parameter of the organisation, written `derived:<id>`.
 */
export type AnalysisParameter = InstrumentType | `derived:${number}` | (string & {});
const DERIVED_PARAMETER_PATTERN = /^derived:[1-9][0-9]{0,14}$/;
export const analysisParameterSchema = z.string().refine(
  (value) => (INSTRUMENT_TYPES as readonly string[]).includes(value) || DERIVED_PARAMETER_PATTERN.test(value),
  { message: 'Parameter must be one of the instrument types or a derived parameter (derived:<id>).' },
);

/** The derived parameter's id of `derived:<id>`, null for an instrument type. */
export function derivedParameterIdOf(parameter: string): number | null {
  return DERIVED_PARAMETER_PATTERN.test(parameter) ? Number(parameter.slice('derived:'.length)) : null;
}
export const derivedParameterKey = (id: number): AnalysisParameter => `derived:${id}`;
/** Parameters one request may name (every instrument type and as many derived parameters). */
export const MAX_ANALYSIS_PARAMETERS = 2 * INSTRUMENT_TYPES.length;

/** A word a comment is matched against (whole word, any case); letters, digits, spaces, hyphens, underscores. */
const eventWordSchema = z.string().trim().min(1, 'Event word is required').max(60)
  .regex(/^[\p{L}\p{N} _-]+$/u, 'Event word may hold letters, digits, spaces, hyphens and underscores only');

export const alignmentSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('start') }),
  z.object({ kind: z.literal('event'), word: eventWordSchema }),
  z.object({
    kind: z.literal('threshold'),
    parameter: instrumentTypeSchema,
    value: z.number().finite(),
    direction: z.enum(['up', 'down']),
  }),
]);
export type Alignment = z.infer<typeof alignmentSchema>;

export const bandSchema = z.discriminatedUnion('kind', [
  z.object({
    kind: z.literal('percentiles'),
    lower: z.number().min(0).max(100).default(5),
    upper: z.number().min(0).max(100).default(95),
  }).refine((band) => band.lower < band.upper, { message: ANALYSIS_MESSAGES.bandOrder }),
  z.object({ kind: z.literal('sigma'), k: z.number().positive().max(10).default(2) }),
]);
export type Band = z.infer<typeof bandSchema>;
export const DEFAULT_BAND: Band = { kind: 'percentiles', lower: 5, upper: 95 };

export const instrumentOverrideSchema = z.object({
  unit_operation_id: entityIdSchema,
  instrument_id: entityIdSchema,
});
export type InstrumentOverride = z.infer<typeof instrumentOverrideSchema>;

/** What an envelope is built from; parameters are instrument types found through each unit operation's equipment. */
const envelopeDefinitionShape = {
  reference_unit_operation_ids: z.array(entityIdSchema)
    .min(2, ANALYSIS_MESSAGES.tooFewReferences).max(MAX_REFERENCE_UNIT_OPERATIONS),
  alignment: alignmentSchema.default({ kind: 'start' }),
  /** Seconds; left out, it follows from the longest reference. */
  grid_step_seconds: z.number().int().positive().max(30 * 86_400).nullable().optional(),
  band: bandSchema.default(DEFAULT_BAND),
  show_min_max: z.boolean().default(true),
  /** An explicit instrument for a unit operation replaces the one its equipment gives for that instrument's type. */
  instrument_overrides: z.array(instrumentOverrideSchema).max(2_000).default([]),
};

export const envelopeRequestSchema = z.object({ ...envelopeDefinitionShape, parameter: analysisParameterSchema });
export type EnvelopeRequest = z.infer<typeof envelopeRequestSchema>;

/** no_property: a derived parameter's formula needs a property the unit operation does not have. */
export const LEFT_OUT_REASONS = ['no_start', 'event_not_found', 'no_instrument', 'no_property', 'no_data'] as const;
export const leftOutSchema = z.object({
  unit_operation_id: entityIdSchema,
  reason: z.enum(LEFT_OUT_REASONS),
});
export type LeftOut = z.infer<typeof leftOutSchema>;

export const alignedUnitOperationSchema = z.object({
  unit_operation_id: entityIdSchema,
  run_id: entityIdSchema,
  run_name: z.string(),
  /** The instrument read; null for a derived parameter (computed from several). */
  instrument_id: entityIdSchema.nullable(),
  /** The instant grid time 0 stands for (ISO 8601). */
  time_zero: z.string(),
});

export const envelopePointSchema = z.object({
  /** Seconds since time zero (the start of the grid step). */
  t: z.number(),
  median: z.number().nullable(),
  mean: z.number().nullable(),
  lower: z.number().nullable(),
  upper: z.number().nullable(),
  min: z.number().nullable(),
  max: z.number().nullable(),
  count: z.number().int(),
});
export type EnvelopePoint = z.infer<typeof envelopePointSchema>;

export const derivedParameterRefSchema = z.object({ id: entityIdSchema, name: z.string(), unit: z.string().nullable(), version: z.number().int() });

export const envelopeSchema = z.object({
  parameter: analysisParameterSchema,
  /** The formula (as of this computation) when the parameter is a derived parameter. */
  derived_parameter: derivedParameterRefSchema.nullable(),
  unit_operation_type: z.string(),
  grid_step_seconds: z.number().int(),
  band: bandSchema,
  alignment: alignmentSchema,
  references: z.array(alignedUnitOperationSchema),
  left_out: z.array(leftOutSchema),
  points: z.array(envelopePointSchema),
});
export type Envelope = z.infer<typeof envelopeSchema>;

export const deviationRequestSchema = z.union([
  z.object({
    golden_batch_id: entityIdSchema,
    target_unit_operation_ids: z.array(entityIdSchema).min(1).max(MAX_TARGET_UNIT_OPERATIONS),
    parameters: z.union([z.literal('all'), z.array(analysisParameterSchema).min(1).max(MAX_ANALYSIS_PARAMETERS)]).optional(),
  }).strict(),
  z.object({
    ...envelopeDefinitionShape,
    parameters: z.union([z.literal('all'), z.array(analysisParameterSchema).min(1).max(MAX_ANALYSIS_PARAMETERS)]),
    target_unit_operation_ids: z.array(entityIdSchema).min(1).max(MAX_TARGET_UNIT_OPERATIONS),
  }).strict(),
]);
export type DeviationRequest = z.infer<typeof deviationRequestSchema>;

const excursionSchema = z.object({
  t: z.number(),
  value: z.number(),
  bound: z.enum(['lower', 'upper']),
  bound_value: z.number(),
  /** How far beyond the bound, in the parameter's unit. */
  distance: z.number(),
});
export type Excursion = z.infer<typeof excursionSchema>;

export const parameterDeviationSchema = z.object({
  parameter: analysisParameterSchema,
  /** Null for a derived parameter. */
  instrument_id: entityIdSchema.nullable(),
  /** Grid times where both the target and the envelope (at least two references) have a value. */
  compared: z.number().int(),
  outside: z.number().int(),
  share_outside: z.number().nullable(),
  first_excursion: excursionSchema.nullable(),
  largest_excursion: excursionSchema.nullable(),
  /** The target's own resampled values, for drawing it over the envelope. */
  series: z.array(z.tuple([z.number(), z.number()])),
});
export type ParameterDeviation = z.infer<typeof parameterDeviationSchema>;

export const deviationSchema = z.object({
  unit_operation_type: z.string(),
  grid_step_seconds: z.number().int(),
  band: bandSchema,
  alignment: alignmentSchema,
  envelopes: z.array(envelopeSchema),
  targets: z.array(z.object({
    unit_operation_id: entityIdSchema,
    run_id: entityIdSchema,
    run_name: z.string(),
    time_zero: z.string(),
    parameters: z.array(parameterDeviationSchema),
  })),
  targets_left_out: z.array(leftOutSchema),
  /** Worst first: by share outside, then by the largest excursion relative to the band's width. */
  ranking: z.array(z.object({
    parameter: analysisParameterSchema,
    unit_operation_id: entityIdSchema,
    share_outside: z.number().nullable(),
  })),
});
export type Deviation = z.infer<typeof deviationSchema>;

// ---------------------------------------------------------------------------------------------
// Golden batches
// ---------------------------------------------------------------------------------------------

const goldenBatchFields = {
  name: z.string().trim().min(1, 'Name is required').max(200),
  unit_operation_type: z.enum(UNIT_OPERATION_TYPES, { error: 'Type must be one of the unit operation types.' }),
  reference_unit_operation_ids: envelopeDefinitionShape.reference_unit_operation_ids,
  parameters: z.array(analysisParameterSchema).min(1).max(MAX_ANALYSIS_PARAMETERS),
  alignment: alignmentSchema,
  band: bandSchema,
  grid_step_seconds: z.number().int().positive().max(30 * 86_400).nullable(),
  instrument_overrides: z.array(instrumentOverrideSchema).max(2_000),
};
export const goldenBatchCreateSchema = z.object({
  ...goldenBatchFields,
  alignment: goldenBatchFields.alignment.default({ kind: 'start' }),
  band: goldenBatchFields.band.default(DEFAULT_BAND),
  grid_step_seconds: goldenBatchFields.grid_step_seconds.default(null),
  instrument_overrides: goldenBatchFields.instrument_overrides.default([]),
});
export const goldenBatchUpdateSchema = z.object(goldenBatchFields).partial();
export const goldenBatchSchema = z.object({
  id: entityIdSchema,
  organization_id: entityIdSchema,
  ...goldenBatchFields,
  created_at: z.string(),
  updated_at: z.string(),
});
export type GoldenBatchCreate = z.infer<typeof goldenBatchCreateSchema>;
export type GoldenBatchUpdate = z.infer<typeof goldenBatchUpdateSchema>;
export type GoldenBatch = z.infer<typeof goldenBatchSchema>;
export const goldenBatchListQuerySchema = z.object({
  unit_operation_type: z.enum(UNIT_OPERATION_TYPES).optional(),
});

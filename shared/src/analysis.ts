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
/** Fewer references than this make a band too uncertain to trust: the answer and the console warn. */
export const MIN_RECOMMENDED_REFERENCES = 5;
/**
 * The default tolerance (the least half-width of the band around its centre) is this many times the
 * references' noise: the robust standard deviation of their successive grid-value differences.
 */
export const TOLERANCE_NOISE_MULTIPLE = 3;
/**
 * ...and at least this share of the range the envelope's centre spans over the run: a parameter
 * without noise (a pump rate, a setpoint) would otherwise get a band of no width at all.
 */
export const TOLERANCE_RANGE_SHARE = 0.02;
/**
 * A parameter is flagged when its excursion score (the area outside the band, in band widths x
 * hours) reaches this: half a band width beyond for an hour, or a whole band width for half an hour.
 */
export const FLAG_SCORE = 0.5;

export const ANALYSIS_MESSAGES = {
  mixedTypes: 'Reference unit operations must all be of the same type.',
  tooFewReferences: 'At least two reference unit operations are needed.',
  tooManyGridPoints: `The grid step gives more than ${MAX_GRID_POINTS} grid times; choose a larger step.`,
  noReferenceData: 'None of the reference unit operations has a start time.',
  bandOrder: 'The lower percentile must be below the upper percentile.',
  goldenBatchNotFound: 'Golden batch not found',
  targetType: 'Targets must be of the reference unit operations\' type.',
  toleranceNotAParameter: (parameter: string) => `A tolerance is set for ${parameter.slice(0, 60)}, which is not one of the golden batch's parameters.`,
  fewReferences: (references: number) =>
    `The band is made from ${references} reference${references === 1 ? '' : 's'}; fewer than ${MIN_RECOMMENDED_REFERENCES} make it too uncertain to trust.`,
  tooManyValues: (gridTimes: number, parameters: number, series: number) =>
    `An analysis may answer at most ${MAX_ANSWER_VALUES} values; this one may answer ${gridTimes} grid times x ${parameters} parameters x ${series} `
    + `(the envelope and each target) = ${gridTimes * parameters * series}. Choose a larger grid step, fewer parameters or fewer targets.`,
} as const;

export const instrumentTypeSchema = z.enum(INSTRUMENT_TYPES, { error: 'Parameter must be one of the instrument types.' });

/**
 * A parameter of an envelope or a deviation: an instrument type (the instrument of that type on each
 * unit operation's equipment) or a derived parameter of the organisation, written `derived:<id>`.
 */
export type AnalysisParameter = InstrumentType | `derived:${number}` | `sample:${string}` | (string & {});
const DERIVED_PARAMETER_PATTERN = /^derived:[1-9][0-9]{0,14}$/;
/** A sample analyte of the unit operations' samples, written `sample:<analyte>` (the analyte in any case). */
const SAMPLE_PARAMETER_PATTERN = /^sample:\S(.{0,98}\S)?$/;
export const analysisParameterSchema = z.string().refine(
  (value) => (INSTRUMENT_TYPES as readonly string[]).includes(value) || DERIVED_PARAMETER_PATTERN.test(value) || SAMPLE_PARAMETER_PATTERN.test(value),
  { message: 'Parameter must be one of the instrument types, a derived parameter (derived:<id>) or a sample analyte (sample:<analyte>).' },
);

/** The analyte of `sample:<analyte>`, null for any other parameter. */
export function sampleAnalyteOf(parameter: string): string | null {
  return SAMPLE_PARAMETER_PATTERN.test(parameter) ? parameter.slice('sample:'.length) : null;
}
export const sampleParameterKey = (analyte: string): AnalysisParameter => `sample:${analyte.trim()}`;

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

/**
 * A tolerance per parameter: the least half-width of the band around its centre, in the parameter's
 * unit. A parameter left out gets its default from the references' noise.
 */
export const tolerancesSchema = z.record(z.string(), z.number().positive('A tolerance must be above zero').finite())
  .superRefine((tolerances, context) => {
    const keys = Object.keys(tolerances);
    if (keys.length > MAX_ANALYSIS_PARAMETERS) context.addIssue({ code: 'custom', message: `At most ${MAX_ANALYSIS_PARAMETERS} tolerances` });
    for (const key of keys) {
      if (!analysisParameterSchema.safeParse(key).success) context.addIssue({ code: 'custom', message: `Tolerance for an unknown parameter: ${key.slice(0, 60)}` });
    }
  });
export type Tolerances = z.infer<typeof tolerancesSchema>;

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
  tolerances: tolerancesSchema.default({}),
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
  /** The band a target is compared with: lower/upper widened to at least the tolerance either side of the centre. */
  compared_lower: z.number().nullable(),
  compared_upper: z.number().nullable(),
});
export type EnvelopePoint = z.infer<typeof envelopePointSchema>;

export const derivedParameterRefSchema = z.object({ id: entityIdSchema, name: z.string(), unit: z.string().nullable(), version: z.number().int() });

export const TOLERANCE_SOURCES = ['set', 'noise', 'range', 'none'] as const;
export const toleranceSchema = z.object({
  /** The least half-width of the band around its centre (median for percentiles, mean for sigma); null without statistics. */
  value: z.number().nullable(),
  /** set: by the golden batch or the request; noise: the references' noise; range: a share of the centre's range; none: no statistics. */
  source: z.enum(TOLERANCE_SOURCES),
  /** The references' noise (robust standard deviation of successive grid values), null when unknown. */
  noise: z.number().nullable(),
});
export type Tolerance = z.infer<typeof toleranceSchema>;

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
  tolerance: toleranceSchema,
  /** Said when the band is less trustworthy than it looks (fewer than MIN_RECOMMENDED_REFERENCES references). */
  warnings: z.array(z.string()),
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
  /** The distance in widths of the compared band at that grid time. */
  band_widths: z.number(),
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
  /** Hours of compared grid times outside the band. */
  hours_outside: z.number(),
  /** The longest stretch of consecutive grid times outside: from its first to past its last, in seconds since time zero. */
  longest_excursion: z.object({ from_t: z.number(), to_t: z.number(), hours: z.number() }).nullable(),
  /** The area outside the band: band widths beyond it x hours, summed over the compared grid times. */
  score: z.number(),
  /** score >= FLAG_SCORE */
  flagged: z.boolean(),
  /** Why the parameter ranks where it does, in words. */
  reason: z.string(),
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
  /** The fewest references any compared parameter's band is made from. */
  references: z.number().int(),
  warnings: z.array(z.string()),
  /** The score a parameter must reach to be flagged (band widths x hours). */
  flag_score: z.number(),
  /** Worst first: by score (area outside the band in band widths x hours), then by the largest excursion in band widths. */
  ranking: z.array(z.object({
    parameter: analysisParameterSchema,
    unit_operation_id: entityIdSchema,
    share_outside: z.number().nullable(),
    score: z.number(),
    flagged: z.boolean(),
    reason: z.string(),
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
  tolerances: tolerancesSchema,
};
export const goldenBatchCreateSchema = z.object({
  ...goldenBatchFields,
  alignment: goldenBatchFields.alignment.default({ kind: 'start' }),
  band: goldenBatchFields.band.default(DEFAULT_BAND),
  grid_step_seconds: goldenBatchFields.grid_step_seconds.default(null),
  instrument_overrides: goldenBatchFields.instrument_overrides.default([]),
  tolerances: goldenBatchFields.tolerances.default({}),
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

// ---------------------------------------------------------------------------------------------
// Why a parameter ranks where it does
// ---------------------------------------------------------------------------------------------

/** Seconds since time zero as h:mm (negative before it). */
export function formatProcessTime(seconds: number): string {
  const sign = seconds < 0 ? '-' : '';
  const minutes = Math.round(Math.abs(seconds) / 60);
  return `${sign}${Math.floor(minutes / 60)}:${String(minutes % 60).padStart(2, '0')}`;
}

const roundTo = (value: number, digits: number) => Number(value.toFixed(digits));

/** "outside for 6.2 h, up to 3.1 band widths above, from 14:20 (process time)". */
export function deviationReason(deviation: {
  compared: number;
  hours_outside: number;
  largest_excursion: Excursion | null;
  first_excursion: Excursion | null;
  longest_excursion: { from_t: number; hours: number } | null;
  score: number;
  flagged: boolean;
}): string {
  if (deviation.compared === 0) return 'not compared: no grid time where the run and at least two references have a value';
  if (!deviation.largest_excursion || !deviation.first_excursion) return 'inside the band throughout';
  const largest = deviation.largest_excursion;
  const side = largest.bound === 'upper' ? 'above' : 'below';
  const stretch = deviation.longest_excursion && deviation.longest_excursion.hours < deviation.hours_outside
    ? `, longest ${roundTo(deviation.longest_excursion.hours, 1)} h from ${formatProcessTime(deviation.longest_excursion.from_t)}`
    : '';
  const verdict = deviation.flagged ? '' : ` (score ${roundTo(deviation.score, 2)} below ${FLAG_SCORE}: not flagged)`;
  return `outside for ${roundTo(deviation.hours_outside, 1)} h, up to ${roundTo(largest.band_widths, 1)} band widths ${side} at ${formatProcessTime(largest.t)}, `
    + `from ${formatProcessTime(deviation.first_excursion.t)}${stretch}${verdict}`;
}

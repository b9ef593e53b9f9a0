/**
 * Wire contracts of the metadata API: request bodies and responses of facilities,
 * equipment, instruments, runs, unit operations and comments, in snake_case. The api validates and
 * documents its routes with these schemas and the console parses what it receives with them, so they
 * stay browser-safe (zod only).
 *
 * Rules with a fixed message (the date range, a blank comment) are checked at the
 * object level without a path, so the error the client receives is exactly that message; a
 * field's own rule answers '<field>: <message>' (the api's error handler prefixes the path).
 * Update bodies are partial: a field left out keeps its stored value, null clears an optional one.
 */
import { unitOperationPropertiesSchema } from './derived/properties.ts';
import { z } from 'zod';
import { FACILITY_TYPES, RUN_STATUSES, UNIT_OPERATION_TYPES } from './enums.ts';
import { instrumentUnitProblem } from './instruments/units.ts';
import { DATE_RANGE_MESSAGES, validateDateRange } from './date-range.ts';
import { listQueryShape } from './pagination.ts';

export const COMMENT_MESSAGES = {
  contentRequired: 'Comment is required',
  unitOperationRequired: 'Unit operation ID is required to create a comment',
} as const;

export const NAME_MAX_LENGTH = 200;
/** Runs compared at once: far above what a chart can show, low enough to bound the query. */
export const COMPARE_RUN_IDS_MAX = 1000;
export const TEXT_MAX_LENGTH = 5000;

// ---------------------------------------------------------------------------------------------
// Building blocks
// ---------------------------------------------------------------------------------------------

export const entityIdSchema = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);

/** A required reference to another entity in a body: a missing one and a malformed one say so. */
function requiredId(label: string) {
  return z
    .number({ error: (issue) => (issue.input === undefined ? `${label} is required.` : `${label} must be a numeric id.`) })
    .int(`${label} must be a numeric id.`)
    .positive(`${label} must be a numeric id.`)
    .max(Number.MAX_SAFE_INTEGER, `${label} must be a numeric id.`);
}

/** Path parameter `{id}`: digits only, so a non-numeric id answers 400 rather than reaching SQL. */
export const idParamsSchema = z.object({
  id: z
    .string()
    .regex(/^[1-9]\d{0,14}$/, 'Invalid id')
    .transform(Number)
    .describe('Numeric id'),
});

function requiredText(label: string, max = NAME_MAX_LENGTH) {
  return z
    .string({ error: `${label} is required.` })
    .trim()
    .min(1, `${label} is required.`)
    .max(max, `${label} must be at most ${max} characters.`);
}

/** Optional free text: blank becomes null (an empty field is sent as null). */
function optionalText(max = NAME_MAX_LENGTH) {
  return z
    .string()
    .trim()
    .max(max, `Must be at most ${max} characters.`)
    .nullable()
    .optional()
    .transform((value) => (value === '' ? null : value));
}

/**
 * An optional ISO date-time input. Blank and null mean "no time". Validity is checked with the range
 * at the object level (see withDateRange) so the message is exactly the shared one.
 */
const optionalDateInput = z
  .string()
  .nullable()
  .optional()
  .transform((value) => (value === undefined ? undefined : value === null || value.trim() === '' ? null : value.trim()))
  .describe('ISO 8601 date-time, or null for none');

const timestampOutput = z.string().describe('ISO 8601 date-time');
const nullableTimestampOutput = z.string().nullable().describe('ISO 8601 date-time or null');

function isInvalidDate(value: string | null | undefined): boolean {
  return typeof value === 'string' && Number.isNaN(Date.parse(value));
}

/**
 * The shared date-range rule for a start/end pair: each given time must parse ('Invalid date
 * format.'), and when both are given the end must be strictly after the start.
 */
export function dateRangeError(start: string | null | undefined, end: string | null | undefined): string | null {
  if (isInvalidDate(start) || isInvalidDate(end)) return DATE_RANGE_MESSAGES.invalidFormat;
  return validateDateRange(start, end);
}

function withDateRange<T extends z.ZodType<{ start_time?: string | null; end_time?: string | null }>>(schema: T) {
  return schema.superRefine((value, ctx) => {
    const message = dateRangeError(value.start_time, value.end_time);
    if (message) ctx.addIssue({ code: 'custom', message, path: [] });
  });
}

const statusSchema = z.enum(RUN_STATUSES).describe('Derived from the times: Pending, Active or Completed');

// ---------------------------------------------------------------------------------------------
// Facilities
// ---------------------------------------------------------------------------------------------

const facilityFields = {
  name: requiredText('Name'),
  type: z.enum(FACILITY_TYPES, { error: `Type must be one of: ${FACILITY_TYPES.join(', ')}.` }),
  country: optionalText(),
  address: optionalText(TEXT_MAX_LENGTH),
};
export const facilityCreateSchema = z.object(facilityFields);
export const facilityUpdateSchema = z.object(facilityFields).partial();
export const facilitySchema = z.object({
  id: entityIdSchema,
  organization_id: entityIdSchema,
  name: z.string(),
  type: z.string(),
  country: z.string().nullable(),
  address: z.string().nullable(),
  created_at: timestampOutput,
  updated_at: timestampOutput,
});
export type FacilityCreate = z.infer<typeof facilityCreateSchema>;
export type FacilityUpdate = z.infer<typeof facilityUpdateSchema>;
export type Facility = z.infer<typeof facilitySchema>;

// ---------------------------------------------------------------------------------------------
// Equipment
// ---------------------------------------------------------------------------------------------

const equipmentFields = {
  name: requiredText('Name'),
  type: requiredText('Type'),
  oem: optionalText(),
  facility_id: requiredId('Facility'),
};
export const equipmentCreateSchema = z.object(equipmentFields);
export const equipmentUpdateSchema = z.object({ ...equipmentFields, status: z.number().int() }).partial();
export const equipmentSchema = z.object({
  id: entityIdSchema,
  organization_id: entityIdSchema,
  facility_id: entityIdSchema,
  name: z.string(),
  type: z.string(),
  oem: z.string().nullable(),
  status: z.number().int().describe('1 on creation'),
  created_at: timestampOutput,
  updated_at: timestampOutput,
});
export type EquipmentCreate = z.infer<typeof equipmentCreateSchema>;
export type EquipmentUpdate = z.infer<typeof equipmentUpdateSchema>;
export type Equipment = z.infer<typeof equipmentSchema>;

// ---------------------------------------------------------------------------------------------
// Instruments
// ---------------------------------------------------------------------------------------------

const instrumentFields = {
  name: requiredText('Name'),
  /** One of INSTRUMENT_TYPES or the organisation's own (the api checks which, as only it knows the organisation). */
  type: z.string({ error: 'Type must be one of the instrument types.' }).trim()
    .min(1, { error: 'Type must be one of the instrument types.' }).max(64, { error: 'Type must be one of the instrument types.' }),
  equipment_id: requiredId('Equipment'),
  /** One of UNITS or any UCUM code, so a unit read from a file's header is stored as written. */
  unit: z.string({ error: 'Unit must be text.' }).trim().max(50, { error: 'Unit must be at most 50 characters.' })
    .refine((unit) => instrumentUnitProblem(unit) === null, { error: (issue) => instrumentUnitProblem(String(issue.input).trim()) ?? 'Unit is not valid.' })
    .nullable().optional(),
  alias: optionalText(),
  /** Left out on a create: the type decides (`drawsAsStepsByDefault`); left out on an update: kept. */
  draw_as_steps: z.boolean({ error: 'Draw as steps must be true or false.' }).optional(),
};
export const instrumentCreateSchema = z.object(instrumentFields);
export const instrumentUpdateSchema = z.object(instrumentFields).partial();
export const instrumentSchema = z.object({
  id: entityIdSchema,
  organization_id: entityIdSchema,
  equipment_id: entityIdSchema,
  name: z.string(),
  type: z.string(),
  unit: z.string().nullable(),
  alias: z.string().nullable(),
  draw_as_steps: z.boolean(),
  created_at: timestampOutput,
  updated_at: timestampOutput,
});
/**
 * Types whose readings are setpoints changed by hand (a stirrer's speed, a nozzle): logged when they
 * change, so a line between two readings would draw a ramp where the process stepped. Migration 4140
 * keeps this list for the instruments it found.
 */
export const STEP_DRAWN_INSTRUMENT_TYPES: readonly string[] = ['stir_rate', 'rotational_speed', 'nozzle_size'];
/** Whether a new instrument of the type is drawn as steps unless the request says otherwise. */
export function drawsAsStepsByDefault(type: string): boolean {
  return STEP_DRAWN_INSTRUMENT_TYPES.includes(type);
}
export type InstrumentCreate = z.infer<typeof instrumentCreateSchema>;
export type InstrumentUpdate = z.infer<typeof instrumentUpdateSchema>;
export type Instrument = z.infer<typeof instrumentSchema>;

// ---------------------------------------------------------------------------------------------
// Runs
// ---------------------------------------------------------------------------------------------

const scaleSchema = z.number().min(0, 'Must be 0 or more.').nullable().optional();
const runFields = {
  facility_id: requiredId('Facility'),
  name: requiredText('Name'),
  target: requiredText('Target'),
  strain: optionalText(),
  description: optionalText(TEXT_MAX_LENGTH),
  start_time: optionalDateInput,
  end_time: optionalDateInput,
  scale_liters: scaleSchema,
  scale_grams: scaleSchema,
};
export const runCreateSchema = withDateRange(z.object(runFields));
export const runUpdateSchema = withDateRange(z.object(runFields).partial());
export const runSchema = z.object({
  id: entityIdSchema,
  organization_id: entityIdSchema,
  facility_id: entityIdSchema,
  name: z.string(),
  strain: z.string().nullable(),
  target: z.string(),
  description: z.string().nullable(),
  start_time: nullableTimestampOutput,
  end_time: nullableTimestampOutput,
  scale_liters: z.number().nullable(),
  scale_grams: z.number().nullable(),
  status: statusSchema,
  created_at: timestampOutput,
  updated_at: timestampOutput,
});
export type RunCreate = z.infer<typeof runCreateSchema>;
export type RunUpdate = z.infer<typeof runUpdateSchema>;
export type Run = z.infer<typeof runSchema>;

// ---------------------------------------------------------------------------------------------
// Unit operations
// ---------------------------------------------------------------------------------------------

const unitOperationFields = {
  run_id: requiredId('Run'),
  type: z.enum(UNIT_OPERATION_TYPES, { error: 'Type must be one of the unit operation types.' }),
  equipment_id: requiredId('Equipment'),
  start_time: optionalDateInput,
  end_time: optionalDateInput,
  /** Named numbers formulas use (working volume, feed concentration...); on update, merged with the stored ones, null clears one. */
  properties: unitOperationPropertiesSchema.optional(),
};
export const unitOperationCreateSchema = withDateRange(z.object(unitOperationFields));
export const unitOperationUpdateSchema = withDateRange(z.object(unitOperationFields).partial());
export const unitOperationSchema = z.object({
  id: entityIdSchema,
  organization_id: entityIdSchema,
  run_id: entityIdSchema,
  type: z.string(),
  equipment_id: entityIdSchema.nullable(),
  start_time: nullableTimestampOutput,
  end_time: nullableTimestampOutput,
  status: statusSchema,
  properties: z.record(z.string(), z.number()),
  created_at: timestampOutput,
  updated_at: timestampOutput,
});
export const unitOperationListQuerySchema = z.object({
  ...listQueryShape,
  run_id: z
    .string()
    .regex(/^[1-9]\d{0,14}$/, 'Invalid run_id')
    .transform(Number)
    .optional()
    .describe('Only unit operations of this run'),
  type: z.enum(UNIT_OPERATION_TYPES).optional().describe('Only unit operations of this type'),
});
export const unitOperationTypeSchema = z.object({
  type: z.enum(UNIT_OPERATION_TYPES),
  equipment_ids: z.array(entityIdSchema).describe('Equipment of the organisation allowed for this type'),
});
export type UnitOperationCreate = z.infer<typeof unitOperationCreateSchema>;
export type UnitOperationUpdate = z.infer<typeof unitOperationUpdateSchema>;
export type UnitOperation = z.infer<typeof unitOperationSchema>;
export type UnitOperationTypeEntry = z.infer<typeof unitOperationTypeSchema>;

// ---------------------------------------------------------------------------------------------
// Comments
// ---------------------------------------------------------------------------------------------

const commentContent = z
  .string({ error: COMMENT_MESSAGES.contentRequired })
  .max(TEXT_MAX_LENGTH, `Comment must be at most ${TEXT_MAX_LENGTH} characters.`)
  .transform((value) => value.trim());
const commentTimestamp = z.string({ error: DATE_RANGE_MESSAGES.invalidFormat }).describe('ISO 8601 date-time');
/** A comment's colour is drawn into chart markup, so it is a hex colour and nothing else. */
export const COMMENT_COLOR_PATTERN = /^#(?:[0-9a-f]{3}|[0-9a-f]{6})$/i;
const colorSchema = z
  .string()
  .trim()
  .max(32, 'Color must be at most 32 characters.')
  .refine((value) => value === '' || COMMENT_COLOR_PATTERN.test(value), 'Color must be a hex colour: #rgb or #rrggbb (e.g. #2d72d2).')
  .nullable()
  .optional()
  .transform((value) => (value === '' ? null : value));

function commentRules<T extends z.ZodType<{ content?: string; timestamp?: string }>>(schema: T) {
  return schema.superRefine((value, ctx) => {
    if (value.content !== undefined && value.content === '') {
      ctx.addIssue({ code: 'custom', message: COMMENT_MESSAGES.contentRequired, path: [] });
    }
    if (value.timestamp !== undefined && isInvalidDate(value.timestamp)) {
      ctx.addIssue({ code: 'custom', message: DATE_RANGE_MESSAGES.invalidFormat, path: [] });
    }
  });
}

export const commentCreateSchema = commentRules(
  z.object({
    timestamp: commentTimestamp,
    unit_operations_id: z
      .number({ error: COMMENT_MESSAGES.unitOperationRequired })
      .int()
      .positive(COMMENT_MESSAGES.unitOperationRequired)
      .max(Number.MAX_SAFE_INTEGER),
    content: commentContent,
    color: colorSchema,
  }),
);
export const commentUpdateSchema = commentRules(
  z.object({
    content: commentContent,
    timestamp: commentTimestamp.optional(),
    color: colorSchema,
  }),
);
export const commentSchema = z.object({
  id: entityIdSchema,
  organization_id: entityIdSchema,
  unit_operations_id: entityIdSchema,
  run_id: entityIdSchema,
  unit_operation_start_time: nullableTimestampOutput,
  timestamp: timestampOutput,
  content: z.string(),
  author: entityIdSchema.nullable().describe('User id of the author (null once the user is deleted)'),
  author_name: z.string().nullable(),
  color: z.string().nullable(),
  created_at: timestampOutput,
  updated_at: timestampOutput,
});
export const commentListQuerySchema = z.object({
  ...listQueryShape,
  run_ids: z
    .string()
    .regex(/^[1-9]\d{0,14}(,[1-9]\d{0,14})*$/, 'run_ids must be a comma-separated list of run ids')
    .transform((value) => [...new Set(value.split(',').map(Number))])
    .refine((ids) => ids.length <= COMPARE_RUN_IDS_MAX, `At most ${COMPARE_RUN_IDS_MAX} run ids.`)
    .optional()
    .describe('Comma-separated run ids: only comments of unit operations of these runs'),
  type: z.enum(UNIT_OPERATION_TYPES).optional().describe('Only comments of unit operations of this type'),
});
export type CommentCreate = z.infer<typeof commentCreateSchema>;
export type CommentUpdate = z.infer<typeof commentUpdateSchema>;
export type Comment = z.infer<typeof commentSchema>;

/** The `{ error }` body of every failed call. */
export const errorResponseSchema = z.object({ error: z.string() });

/** Timestamps leave the database as Date objects and travel as ISO 8601 strings. */
export function toIsoTimestamp(value: Date | string): string;
export function toIsoTimestamp(value: Date | string | null): string | null;
export function toIsoTimestamp(value: Date | string | null): string | null {
  if (value === null) return null;
  return value instanceof Date ? value.toISOString() : new Date(value).toISOString();
}

/**
 * The generic entity form for runs, equipment, facilities and instruments: the
 * fields of each, the initial values for editing, and the conversion of the form into the snake_case
 * body the API takes, with the required-field and date-range messages.
 */
import { FACILITY_TYPES, INSTRUMENT_TYPES, UNITS } from '@bioprocess/shared/enums';
import { validateDateRange } from '@bioprocess/shared/date-range';
import { drawsAsStepsByDefault } from '@bioprocess/shared/entities';
import { toDateTimeLocal } from './format.ts';
import { wallTimeToIso } from '../dates/date-time-format.ts';

export type EntityKind = 'run' | 'equipment' | 'facility' | 'instrument';

/** Lists whose options come from the organisation's data rather than from a fixed list. */
export type OptionSource = 'facilities' | 'equipment';

export interface FieldDefinition {
  /** The wire (snake_case) name of the field. */
  key: string;
  label: string;
  kind: 'text' | 'textarea' | 'number' | 'datetime' | 'select' | 'checkbox';
  required?: boolean;
  /** Fixed choices of a select. */
  options?: readonly string[];
  /** Choices of a select loaded from the API (the value sent is the id). */
  optionSource?: OptionSource;
  min?: number;
  step?: number;
  /** What an untouched checkbox shows (and the server then stores), from the form's other values. */
  checkedByDefault?: (values: FormValues) => boolean;
}

export interface EntityDefinition {
  kind: EntityKind;
  /** Singular label for titles and buttons ('Create Facility'). */
  label: string;
  /** The word used in the failure messages: 'Failed to create {entity}.' */
  messageName: string;
  collectionPath: string;
  fields: readonly FieldDefinition[];
}

export const ENTITY_DEFINITIONS: Record<EntityKind, EntityDefinition> = {
  run: {
    kind: 'run',
    label: 'Run',
    messageName: 'run',
    collectionPath: '/api/v1/runs',
    fields: [
      { key: 'name', label: 'Name', kind: 'text', required: true },
      { key: 'facility_id', label: 'Facility', kind: 'select', optionSource: 'facilities', required: true },
      { key: 'strain', label: 'Strain', kind: 'text' },
      { key: 'target', label: 'Target', kind: 'text', required: true },
      { key: 'start_time', label: 'Start Time', kind: 'datetime' },
      { key: 'end_time', label: 'End Time', kind: 'datetime' },
      { key: 'scale_liters', label: 'Scale (L)', kind: 'number', min: 0, step: 0.1 },
      { key: 'scale_grams', label: 'Scale (g)', kind: 'number', min: 0, step: 0.1 },
      { key: 'description', label: 'Description', kind: 'textarea' },
    ],
  },
  equipment: {
    kind: 'equipment',
    label: 'Equipment',
    messageName: 'equipment',
    collectionPath: '/api/v1/equipment',
    fields: [
      { key: 'name', label: 'Name', kind: 'text', required: true },
      { key: 'type', label: 'Type', kind: 'text', required: true },
      { key: 'oem', label: 'OEM', kind: 'text' },
      { key: 'facility_id', label: 'Facility', kind: 'select', optionSource: 'facilities', required: true },
    ],
  },
  facility: {
    kind: 'facility',
    label: 'Facility',
    messageName: 'facility',
    collectionPath: '/api/v1/facilities',
    fields: [
      { key: 'name', label: 'Name', kind: 'text', required: true },
      { key: 'type', label: 'Type', kind: 'select', options: FACILITY_TYPES, required: true },
      { key: 'country', label: 'Country', kind: 'text' },
      { key: 'address', label: 'Address', kind: 'textarea' },
    ],
  },
  instrument: {
    kind: 'instrument',
    label: 'Instrument',
    messageName: 'instrument',
    collectionPath: '/api/v1/instruments',
    fields: [
      { key: 'name', label: 'Name', kind: 'text', required: true },
      { key: 'type', label: 'Type', kind: 'select', options: INSTRUMENT_TYPES, required: true },
      { key: 'equipment_id', label: 'Equipment', kind: 'select', optionSource: 'equipment', required: true },
      { key: 'unit', label: 'Unit', kind: 'select', options: UNITS },
      { key: 'alias', label: 'Alias', kind: 'text' },
      // Untouched on a new form, the type decides (setpoint types draw as steps), as on the server.
      {
        key: 'draw_as_steps', label: 'Draw as steps (values logged on change, setpoints)', kind: 'checkbox',
        checkedByDefault: (values) => drawsAsStepsByDefault(values.type ?? ''),
      },
    ],
  },
};

export type FormValues = Record<string, string>;

/** Fields the form never edits. */
const EXCLUDED_KEYS = new Set(['id', 'created_at', 'updated_at', 'organization_id']);

function camelCase(key: string): string {
  return key.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());
}

/** The form's starting values: empty for a create, the record's values for an edit. */
export function initialValues(definition: EntityDefinition, record?: Record<string, unknown> | null): FormValues {
  const values: FormValues = {};
  for (const field of definition.fields) {
    if (EXCLUDED_KEYS.has(field.key)) continue;
    const raw = record ? record[camelCase(field.key)] : undefined;
    if (raw === null || raw === undefined) values[field.key] = '';
    else if (field.kind === 'datetime') values[field.key] = toDateTimeLocal(String(raw));
    else values[field.key] = String(raw);
  }
  return values;
}

/**
 * The request body, or every problem by field: '{label} is required.' for an empty required field,
 * number and minimum checks, the shared date-range message on the end time. `error` is the first
 * problem, for callers with one line of space. Empty optional fields are sent as null (an emptied
 * end time must clear it on the server).
 */
export function buildEntityBody(
  definition: EntityDefinition, values: FormValues,
): { body: Record<string, unknown> } | { error: string; fieldErrors: Record<string, string> } {
  const body: Record<string, unknown> = {};
  const fieldErrors: Record<string, string> = {};
  for (const field of definition.fields) {
    const text = (values[field.key] ?? '').trim();
    if (field.kind === 'checkbox') {
      if (text !== '') body[field.key] = text === 'true';
      continue;
    }
    if (field.required && text === '') {
      fieldErrors[field.key] = `${field.label} is required.`;
      continue;
    }
    if (text === '') {
      body[field.key] = null;
      continue;
    }
    if (field.kind === 'number' || field.optionSource) {
      const number = Number(text);
      if (!Number.isFinite(number)) fieldErrors[field.key] = `${field.label} must be a number.`;
      else if (field.min !== undefined && number < field.min) fieldErrors[field.key] = `${field.label} must be at least ${field.min}.`;
      else body[field.key] = number;
    } else if (field.kind === 'datetime') {
      body[field.key] = wallTimeToIso(text) ?? text;
    } else {
      body[field.key] = text;
    }
  }
  if (('start_time' in body || 'end_time' in body) && !fieldErrors.start_time && !fieldErrors.end_time) {
    const rangeError = validateDateRange((body.start_time ?? null) as string | null, (body.end_time ?? null) as string | null);
    if (rangeError) fieldErrors.end_time = rangeError;
  }
  const messages = Object.values(fieldErrors);
  return messages.length > 0 ? { error: messages[0]!, fieldErrors } : { body };
}

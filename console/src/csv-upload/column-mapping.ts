/**
 * The column assignment of the CSV section: each column is selected or not and,
 * when selected, assigned to the timestamp, left empty, a new instrument (unset until the wizard
 * creates it) or an existing instrument. From that state come the blocked submit label, the upload
 * mapping and the submit-time messages.
 */
import { CSV_MESSAGES, missingInstrumentsMessage } from '@bioprocess/shared/csv/messages';
import { detectTimestampFormat, isLowConfidence, type TimestampDetection } from '@bioprocess/shared/csv/timestamps';
import { INSTRUMENT_MESSAGES } from '@bioprocess/shared/errors';
import { headerUnit } from '@bioprocess/shared/instruments/header-unit';
import { unitConversionProblem } from '@bioprocess/shared/csv/unit-conversion';
import type { CsvMapping, ElapsedUnit } from '@bioprocess/shared/timeseries';

export type ColumnAssignment =
  | { kind: 'timestamp' }
  | { kind: 'empty' }
  | { kind: 'new' }
  | { kind: 'existing'; instrumentId: number };

export interface ColumnState {
  name: string;
  selected: boolean;
  assignment: ColumnAssignment;
}

export interface KnownInstrument {
  id: number;
  name: string;
  alias: string | null;
}

export type TimestampMode = 'absolute' | 'elapsed';

const TIME_COLUMN_NAME = /^(time|timestamp|date|datetime|date_time|measured_at|exp_time|elapsed.*|duration)$/i;

/**
 * The timestamp column: the first column named like one whose values read as dates or elapsed time,
 * else the first column whose values read as dates with good confidence; -1 when none does.
 */
export function guessTimestampColumn(headers: readonly string[], rows: readonly string[][], preferDayFirst = false): number {
  const detect = (index: number) => detectTimestampFormat(rows.map((row) => row[index] ?? ''), { preferDayFirst, columnName: headers[index] });
  const readsAsTime = (detection: TimestampDetection) => detection.format !== 'unknown' && (detection.format !== 'spreadsheet-serial' || detection.elapsed !== null || detection.confidence === 1);
  for (let index = 0; index < headers.length; index += 1) {
    if (TIME_COLUMN_NAME.test(headers[index]!.trim()) && readsAsTime(detect(index))) return index;
  }
  for (let index = 0; index < headers.length; index += 1) {
    const detection = detect(index);
    if (detection.format !== 'unknown' && detection.format !== 'spreadsheet-serial' && !isLowConfidence(detection)) return index;
  }
  return -1;
}

/**
 * The starting state: the guessed timestamp column selected as timestamp; columns whose name matches
 * an existing instrument's alias or name (case-insensitive) selected and assigned to it; the rest not
 * selected, so a 40-column file does not start with 40 columns to set up.
 */
export function initialColumns(headers: readonly string[], timestampIndex: number, instruments: readonly KnownInstrument[]): ColumnState[] {
  return headers.map((name, index) => {
    if (index === timestampIndex) return { name, selected: true, assignment: { kind: 'timestamp' } };
    const match = matchInstrument(name, instruments);
    return match
      ? { name, selected: true, assignment: { kind: 'existing', instrumentId: match.id } }
      : { name, selected: false, assignment: { kind: 'empty' } };
  });
}

export function matchInstrument(column: string, instruments: readonly KnownInstrument[]): KnownInstrument | null {
  const key = column.trim().toLowerCase();
  return instruments.find((i) => (i.alias ?? '').trim().toLowerCase() === key)
    ?? instruments.find((i) => i.name.trim().toLowerCase() === key)
    ?? null;
}

/** Selected columns still needing a decision: empty, or a new instrument the wizard has not created. */
export function pendingColumns(columns: readonly ColumnState[]): ColumnState[] {
  return columns.filter((c) => c.selected && (c.assignment.kind === 'empty' || c.assignment.kind === 'new'));
}

/** Columns waiting for the instrument wizard. */
export function newInstrumentColumns(columns: readonly ColumnState[]): ColumnState[] {
  return columns.filter((c) => c.selected && c.assignment.kind === 'new');
}

/** The submit button's blocked label, or null when the submit may go ahead. */
export function blockedSubmitLabel(columns: readonly ColumnState[] | null): string | null {
  return columns && pendingColumns(columns).length > 0 ? CSV_MESSAGES.completeInstrumentSetupFirst : null;
}

/** Selecting a column starts it as empty (the user must assign it); another timestamp column steps down. */
export function setSelected(columns: readonly ColumnState[], name: string, selected: boolean): ColumnState[] {
  return columns.map((c) => (c.name === name ? { ...c, selected, assignment: selected ? c.assignment : { kind: 'empty' } } : c));
}

/** Assigning a column selects it; there is only one timestamp column, so choosing another frees the old one. */
export function assignColumn(columns: readonly ColumnState[], name: string, assignment: ColumnAssignment): ColumnState[] {
  return columns.map((c) => {
    if (c.name === name) return { ...c, selected: true, assignment };
    if (assignment.kind === 'timestamp' && c.assignment.kind === 'timestamp') return { ...c, assignment: { kind: 'empty' }, selected: false };
    return c;
  });
}

/** A plate's well names, A1 to P24 (96- and 384-well plates), with or without a leading zero (A01). */
const WELL_NAME = /^[A-P](0?[1-9]|1\d|2[0-4])$/;
export const WELL_PATTERN = 'wells';

/**
 * Which column names a rule matches: 'wells' for a plate's wells, else a pattern where * stands for
 * any characters and ? for one ('TAG-*', 'R? pH'), case-insensitively; null for an empty rule.
 */
export function columnRule(rule: string): ((name: string) => boolean) | null {
  const trimmed = rule.trim();
  if (trimmed === '') return null;
  if (trimmed.toLowerCase() === WELL_PATTERN) return (name) => WELL_NAME.test(name.trim());
  const source = trimmed.split('').map((character) => (character === '*' ? '.*' : character === '?' ? '.' : character.replace(/[.+^${}()|[\]\\]/g, '\\$&'))).join('');
  const pattern = new RegExp(`^${source}$`, 'i');
  return (name) => pattern.test(name.trim());
}

/**
 * Selects every column the rule matches that is not yet assigned, as a new instrument each: a plate's
 * 96 wells or a row of parallel reactors in one step. Columns already assigned (the timestamp, an
 * instrument found by its alias) keep their assignment.
 */
export function assignMatchingAsNew(columns: readonly ColumnState[], matches: (name: string) => boolean): ColumnState[] {
  return columns.map((c) => (matches(c.name) && c.assignment.kind === 'empty' ? { ...c, selected: true, assignment: { kind: 'new' } } : c));
}

export interface MappingOptions {
  timestampMode: TimestampMode;
  elapsedUnit: ElapsedUnit;
  replaceExisting: boolean;
  /** The zone of timestamps without their own offset (the wizard always names one). */
  timeZone?: string;
  /** Columns whose empty cells repeat their last value. */
  fillForward?: ReadonlySet<string>;
  /** Columns whose values are converted to another unit while the server reads them. */
  conversions?: ReadonlyMap<string, ColumnConversion>;
}

// --- Unit conversion on request ----------------------------------------------------------------

/** A column's unit conversion as the mapping table holds it (instrument units: UCUM codes or the spec's names). */
export interface ColumnConversion {
  from: string;
  to: string;
}

/** The mapping's `convert_unit` of a column: only a complete pair of two different units. */
export function conversionOf(conversions: ReadonlyMap<string, ColumnConversion> | undefined, column: string): { convert_unit: ColumnConversion } | Record<string, never> {
  const conversion = conversions?.get(column);
  if (!conversion || conversion.from.trim() === '' || conversion.to.trim() === '' || conversion.from.trim() === conversion.to.trim()) return {};
  return { convert_unit: { from: conversion.from.trim(), to: conversion.to.trim() } };
}

/** The unit a conversion starts from: the header's unit as an instrument unit (`°C` is celsius), else empty for the user to type. */
export function conversionStart(column: string): ColumnConversion {
  return { from: headerUnit(column).unit, to: '' };
}

/** Why a column's conversion cannot run (naming both units), or null when it can or is not complete yet. */
export function conversionProblem(conversion: ColumnConversion | undefined): string | null {
  if (!conversion || conversion.from.trim() === '' || conversion.to.trim() === '') return null;
  return unitConversionProblem(conversion.from.trim(), conversion.to.trim());
}

/** The first conversion that cannot run, as the submit-time message. */
export function firstConversionProblem(conversions: ReadonlyMap<string, ColumnConversion>, columns: readonly string[]): string | null {
  for (const column of columns) {
    const problem = conversionProblem(conversions.get(column));
    if (problem) return `Column '${column}': ${problem}`;
  }
  return null;
}

/**
 * The assignments of a table read again under new column names (a header-less file's columns
 * renamed): each column keeps its selection and assignment by position.
 */
export function carryByPosition(previous: readonly ColumnState[], names: readonly string[]): ColumnState[] {
  return names.map((name, index) => {
    const before = previous[index];
    return before ? { ...before, name } : { name, selected: false, assignment: { kind: 'empty' } };
  });
}

export type MappingResult = { ok: true; mapping: CsvMapping } | { ok: false; title: string; message: string };

/**
 * The upload mapping, or the submit-time message that stops it: a timestamp
 * column is required, at least one instrument column, and every selected column needs its instrument.
 */
export function buildMapping(columns: readonly ColumnState[], options: MappingOptions): MappingResult {
  const timestamp = columns.find((c) => c.selected && c.assignment.kind === 'timestamp');
  if (!timestamp) return { ok: false, title: 'Validation Error', message: CSV_MESSAGES.timestampColumnRequired };
  const pending = pendingColumns(columns);
  if (pending.length > 0) return { ok: false, title: 'CSV Validation Error', message: missingInstrumentsMessage(pending.map((c) => c.name)) };
  const mapped = columns.flatMap((c) => (c.selected && c.assignment.kind === 'existing'
    ? [{ column: c.name, instrument_id: c.assignment.instrumentId, fill_forward: options.fillForward?.has(c.name) ?? false, ...conversionOf(options.conversions, c.name) }]
    : []));
  if (mapped.length === 0) return { ok: false, title: 'Validation Error', message: CSV_MESSAGES.noInstrumentColumns };
  const mapping: CsvMapping = {
    timestamp_column: timestamp.name,
    timestamp_mode: options.timestampMode,
    columns: mapped,
    replace_existing: options.replaceExisting,
    ...(options.timestampMode === 'elapsed' ? { elapsed_unit: options.elapsedUnit } : {}),
    ...(options.timeZone ? { time_zone: options.timeZone } : {}),
  };
  return { ok: true, mapping };
}

/**
 * The instrument-name rule: unique within the equipment, case-insensitively, counting the names made
 * earlier in the same wizard. Returns the message or null.
 */
export function instrumentNameError(name: string, existingNames: readonly string[], createdInWizard: readonly string[]): string | null {
  const key = name.trim().toLowerCase();
  if (!key) return 'Name is required.';
  const taken = [...existingNames, ...createdInWizard].some((existing) => existing.trim().toLowerCase() === key);
  return taken ? INSTRUMENT_MESSAGES.duplicateName : null;
}

/**
 * Keeps assignments valid when the equipment's instrument list changes: an instrument that is no
 * longer on the list leaves its column empty, and an untouched column whose name now matches an
 * instrument (e.g. the equipment was just chosen) is assigned to it.
 */
export function reconcileWithInstruments(columns: readonly ColumnState[], instruments: readonly KnownInstrument[]): ColumnState[] {
  const ids = new Set(instruments.map((i) => i.id));
  return columns.map((column) => {
    if (column.assignment.kind === 'existing' && !ids.has(column.assignment.instrumentId)) {
      return { ...column, assignment: { kind: 'empty' } };
    }
    if (!column.selected && column.assignment.kind === 'empty') {
      const match = matchInstrument(column.name, instruments);
      if (match) return { ...column, selected: true, assignment: { kind: 'existing', instrumentId: match.id } };
    }
    return column;
  });
}

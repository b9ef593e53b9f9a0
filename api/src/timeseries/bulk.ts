/**
 * Validation of parsed bulk points: every point is checked before anything is queued (the first bad
 * index is named, nothing is written). Posts carry up to about a million points, so this is a
 * hand-written loop over the shapes the zod schema documents (bulkPointSchema). It serves the bodies
 * that bulk-prepare.ts's scanner leaves to JSON.parse.
 */
import {
  BULK_QUALITY_MAX,
  MAX_TIMESTAMP_MS,
  MIN_TIMESTAMP_MS,
  parseTimestampInputMicros,
} from '@bioprocess/shared/timeseries';
import { NO_SOURCE_DETAILS, type ReadingSource } from '@bioprocess/shared/point-rows';
import { badRequest } from '../platform/http-error.ts';

/** [instrument_id, ts_ms, value, what the source said (microseconds, quality, historical)] in request order. */
export type ValidatedPoint = [number, number, number | null, ReadingSource];

const VALUE_FIELDS = ['int_value', 'float_value', 'value'] as const;

function pointValue(point: Record<string, unknown>, index: number): number | null {
  let found = 0;
  let value: number | null = null;
  for (const field of VALUE_FIELDS) {
    const candidate = point[field];
    if (candidate === undefined) continue;
    found += 1;
    if (candidate !== null) {
      if (typeof candidate !== 'number' || !Number.isFinite(candidate)) throw badRequest(`data.${index}.${field}: must be a finite number or null`);
      if (field === 'int_value' && !Number.isInteger(candidate)) throw badRequest(`data.${index}.int_value: must be an integer`);
    }
    value = candidate as number | null;
  }
  if (found !== 1) throw badRequest(`data.${index}: exactly one of int_value, float_value or value is required`);
  return value;
}

function instrumentIdOf(raw: unknown, index: number): number {
  const id = typeof raw === 'string' && /^\d+$/.test(raw) ? Number(raw) : raw;
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id <= 0) throw badRequest(`data.${index}.instrument_id: must be a positive integer`);
  return id;
}

function sourceOf(point: Record<string, unknown>, micros: number, index: number): ReadingSource {
  const quality = point.quality ?? null;
  const historical = point.historical === undefined ? false : point.historical;
  if (quality !== null && (typeof quality !== 'number' || !Number.isInteger(quality) || quality < 0 || quality > BULK_QUALITY_MAX)) {
    throw badRequest(`data.${index}.quality: must be an integer from 0 to ${BULK_QUALITY_MAX}, or null`);
  }
  if (typeof historical !== 'boolean') throw badRequest(`data.${index}.historical: must be true or false`);
  if (micros === 0 && quality === null && !historical) return NO_SOURCE_DETAILS;
  return { micros, quality, historical };
}

/**
 * Checks shapes, values and timestamps (instrument ownership is checked afterwards in one query);
 * answers the points, from which the writer derives instruments, range and key order.
 */
export function validateBulkPoints(data: unknown): ValidatedPoint[] {
  if (!Array.isArray(data)) throw badRequest('data: must be a list of points');
  if (data.length === 0) throw badRequest('data: data must hold at least one point');
  const points: ValidatedPoint[] = new Array(data.length);
  for (let index = 0; index < data.length; index += 1) {
    const point = data[index] as Record<string, unknown> | null;
    if (typeof point !== 'object' || point === null || Array.isArray(point)) throw badRequest(`data.${index}: must be an object`);
    const instrumentId = instrumentIdOf(point.instrument_id, index);
    const rawTimestamp = point.measured_at ?? point.ts;
    if (rawTimestamp === undefined) throw badRequest(`data.${index}.measured_at: a timestamp (measured_at or ts) is required`);
    if (typeof rawTimestamp !== 'string' && typeof rawTimestamp !== 'number') throw badRequest(`data.${index}.measured_at: Invalid date format.`);
    const { ms: ts, micros } = parseTimestampInputMicros(rawTimestamp);
    if (Number.isNaN(ts) || ts < MIN_TIMESTAMP_MS || ts > MAX_TIMESTAMP_MS) throw badRequest(`data.${index}.measured_at: Invalid date format.`);
    points[index] = [instrumentId, ts, pointValue(point, index), sourceOf(point, micros, index)];
  }
  return points;
}

/** The first index of a point whose instrument is not the caller's, or -1. */
export function firstForeignIndex(instruments: ReadonlyArray<[instrumentId: number, firstIndex: number]>, owned: Set<number>): number {
  let first = -1;
  for (const [instrumentId, index] of instruments) {
    if (!owned.has(instrumentId) && (first === -1 || index < first)) first = index;
  }
  return first;
}

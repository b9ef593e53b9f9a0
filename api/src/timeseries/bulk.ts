/**
 * The bulk write path: validates every point before anything is queued (the first bad index is
 * named, nothing is written), then splits the points into bounded chunks, one queued job each.
 * Posts carry up to about a million points, so validation is a hand-written loop over the shapes the
 * zod schema documents (bulkPointSchema), and the answer is written without an object per reading.
 */
import {
  BULK_CHUNK_POINTS,
  MAX_TIMESTAMP_MS,
  MIN_TIMESTAMP_MS,
  parseTimestampInput,
} from '@bioprocess/shared/timeseries';
import type { BulkChunkPayload } from '@bioprocess/shared/queues';
import { badRequest } from '../platform/http-error.ts';

/** [instrument_id, ts_ms, value] in request order. */
export type PointTriple = [number, number, number | null];

export interface ValidatedBulk {
  points: PointTriple[];
  instrumentIds: number[];
  startMs: number;
  endMs: number;
  /** Timestamps strictly increase per instrument: no key appears twice in the post. */
  increasing: boolean;
}

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

/** Checks shapes, values and timestamps (instrument ownership is checked afterwards in one query). */
export function validateBulkPoints(data: unknown): ValidatedBulk {
  if (!Array.isArray(data)) throw badRequest('data: must be a list of points');
  if (data.length === 0) throw badRequest('data: data must hold at least one point');
  const points: PointTriple[] = new Array(data.length);
  const lastTsByInstrument = new Map<number, number>();
  let increasing = true;
  let startMs = Number.POSITIVE_INFINITY;
  let endMs = Number.NEGATIVE_INFINITY;
  for (let index = 0; index < data.length; index += 1) {
    const point = data[index] as Record<string, unknown> | null;
    if (typeof point !== 'object' || point === null || Array.isArray(point)) throw badRequest(`data.${index}: must be an object`);
    const instrumentId = instrumentIdOf(point.instrument_id, index);
    const rawTimestamp = point.measured_at ?? point.ts;
    if (rawTimestamp === undefined) throw badRequest(`data.${index}.measured_at: a timestamp (measured_at or ts) is required`);
    if (typeof rawTimestamp !== 'string' && typeof rawTimestamp !== 'number') throw badRequest(`data.${index}.measured_at: Invalid date format.`);
    const ts = parseTimestampInput(rawTimestamp);
    if (Number.isNaN(ts) || ts < MIN_TIMESTAMP_MS || ts > MAX_TIMESTAMP_MS) throw badRequest(`data.${index}.measured_at: Invalid date format.`);
    points[index] = [instrumentId, ts, pointValue(point, index)];
    const last = lastTsByInstrument.get(instrumentId);
    if (last !== undefined && ts <= last) increasing = false;
    lastTsByInstrument.set(instrumentId, ts);
    if (ts < startMs) startMs = ts;
    if (ts > endMs) endMs = ts;
  }
  return { points, instrumentIds: [...lastTsByInstrument.keys()], startMs, endMs, increasing };
}

export function firstForeignInstrumentIndex(points: PointTriple[], owned: Set<number>): number {
  return points.findIndex(([instrumentId]) => !owned.has(instrumentId));
}

export function chunkPayloads(
  base: Pick<BulkChunkPayload, 'job_id' | 'organization_id' | 'version_seq'> & { increasing: boolean },
  points: PointTriple[],
): BulkChunkPayload[] {
  const chunkCount = Math.max(1, Math.ceil(points.length / BULK_CHUNK_POINTS));
  const chunks: BulkChunkPayload[] = [];
  for (let chunk = 0; chunk < chunkCount; chunk += 1) {
    const first = chunk * BULK_CHUNK_POINTS;
    chunks.push({
      job_id: base.job_id, organization_id: base.organization_id, version_seq: base.version_seq, unique_keys: base.increasing,
      chunk_index: chunk, chunk_count: chunkCount, first_index: first, points: points.slice(first, first + BULK_CHUNK_POINTS),
    });
  }
  return chunks;
}

const TWO_DIGITS = Array.from({ length: 100 }, (_, n) => String(n).padStart(2, '0'));
const THREE_DIGITS = Array.from({ length: 1000 }, (_, n) => String(n).padStart(3, '0'));

/** ISO 8601 like Date#toISOString, with the date-hour-minute prefix cached (feeds are time-ordered). */
function isoFormatter(): (ts: number) => string {
  let minuteStart = Number.NaN;
  let prefix = '';
  return (ts) => {
    const offset = ts - minuteStart;
    if (!(offset >= 0 && offset < 60_000)) {
      minuteStart = ts - (((ts % 60_000) + 60_000) % 60_000);
      prefix = new Date(minuteStart).toISOString().slice(0, 17);
      return isoFormatterTail(prefix, ts - minuteStart);
    }
    return isoFormatterTail(prefix, offset);
  };
}
const isoFormatterTail = (prefix: string, offsetMs: number) =>
  `${prefix}${TWO_DIGITS[Math.floor(offsetMs / 1000)]}.${THREE_DIGITS[offsetMs % 1000]}Z`;

/** The accepted readings as JSON, written by hand: a post may hold a million points. */
export function readingsJson(points: PointTriple[]): string {
  const iso = isoFormatter();
  const parts: string[] = new Array(points.length);
  for (let index = 0; index < points.length; index += 1) {
    const [instrumentId, ts, value] = points[index]!;
    parts[index] = `{"ts":"${iso(ts)}","instrument_id":${instrumentId},"value":${value === null ? 'null' : value}}`;
  }
  return `[${parts.join(',')}]`;
}

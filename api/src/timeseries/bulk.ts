/**
 * The bulk write path: validates every point before anything is queued (the first bad index is
 * named, nothing is written), then splits the points into bounded chunks, one queued job each.
 */
import {
  BULK_CHUNK_POINTS,
  MAX_TIMESTAMP_MS,
  MIN_TIMESTAMP_MS,
  parseTimestampInput,
  type BulkPoint,
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
}

function valueOf(point: BulkPoint, index: number): number | null {
  let found = 0;
  let value: number | null = null;
  for (const candidate of [point.int_value, point.float_value, point.value]) {
    if (candidate !== undefined) {
      found += 1;
      value = candidate;
    }
  }
  if (found !== 1) throw badRequest(`data.${index}: exactly one of int_value, float_value or value is required`);
  return value;
}

/** Checks values and timestamps (instrument ownership is checked afterwards in one query). */
export function validateBulkPoints(data: BulkPoint[]): ValidatedBulk {
  const points: PointTriple[] = new Array(data.length);
  const instruments = new Set<number>();
  let startMs = Number.POSITIVE_INFINITY;
  let endMs = Number.NEGATIVE_INFINITY;
  for (let index = 0; index < data.length; index += 1) {
    const point = data[index]!;
    const rawTimestamp = point.measured_at ?? point.ts;
    if (rawTimestamp === undefined) throw badRequest(`data.${index}.measured_at: a timestamp (measured_at or ts) is required`);
    const ts = parseTimestampInput(rawTimestamp);
    if (Number.isNaN(ts) || ts < MIN_TIMESTAMP_MS || ts > MAX_TIMESTAMP_MS) {
      throw badRequest(`data.${index}.measured_at: Invalid date format.`);
    }
    const value = valueOf(point, index);
    points[index] = [point.instrument_id, ts, value];
    instruments.add(point.instrument_id);
    if (ts < startMs) startMs = ts;
    if (ts > endMs) endMs = ts;
  }
  return { points, instrumentIds: [...instruments], startMs, endMs };
}

export function firstForeignInstrumentIndex(points: PointTriple[], owned: Set<number>): number {
  return points.findIndex(([instrumentId]) => !owned.has(instrumentId));
}

export function chunkPayloads(
  base: Pick<BulkChunkPayload, 'job_id' | 'organization_id' | 'version_seq'>,
  points: PointTriple[],
): BulkChunkPayload[] {
  const chunkCount = Math.max(1, Math.ceil(points.length / BULK_CHUNK_POINTS));
  const chunks: BulkChunkPayload[] = [];
  for (let chunk = 0; chunk < chunkCount; chunk += 1) {
    const first = chunk * BULK_CHUNK_POINTS;
    chunks.push({ ...base, chunk_index: chunk, chunk_count: chunkCount, first_index: first, points: points.slice(first, first + BULK_CHUNK_POINTS) });
  }
  return chunks;
}

/** The accepted readings as JSON, written by hand: a post may hold a million points. */
export function readingsJson(points: PointTriple[]): string {
  const parts: string[] = new Array(points.length);
  for (let index = 0; index < points.length; index += 1) {
    const [instrumentId, ts, value] = points[index]!;
    parts[index] = `{"ts":"${new Date(ts).toISOString()}","instrument_id":${instrumentId},"value":${value === null ? 'null' : value}}`;
  }
  return `[${parts.join(',')}]`;
}

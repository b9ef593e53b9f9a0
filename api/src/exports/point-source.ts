/**
 * Reads an export section's points from ClickHouse as the read endpoints see them: per key the row of
 * the highest version (argMax, never FINAL), tombstones dropped. The range is read in time windows of
 * about WINDOW_POINTS points (planned from the hourly rollups), each one query ordered by time, so
 * ClickHouse never deduplicates or sorts the whole export at once and the first bytes leave early.
 * Rows arrive as TabSeparated text and are handed on as lines; the consumer pulls, so a slow client
 * slows the ClickHouse read (backpressure) instead of filling memory. SQL holds validated integers only.
 */
import type { ClickHouseClient } from '@bioprocess/shared/server/clickhouse';
import { countReadings } from '../timeseries/read-series.ts';
import type { ExportSection } from './scope.ts';

const HOUR_MS = 3_600_000;
const WINDOW_POINTS = 1_000_000;

function int(value: number): string {
  if (!Number.isSafeInteger(value)) throw new Error(`not a safe integer: ${value}`);
  return String(value);
}

const floorTo = (value: number, width: number) => value - (((value % width) + width) % width);

function scopeFilter(organizationId: number, section: ExportSection): string {
  return `organization_id = ${int(organizationId)} AND instrument_id IN (${section.instruments.map((instrument) => int(instrument.id)).join(',')})`;
}

/** Stored points of the section (exact: rollups where whole, points at the edges). */
export async function countSectionPoints(clickhouse: ClickHouseClient, organizationId: number, section: ExportSection): Promise<number> {
  if (section.instruments.length === 0 || section.endMs < section.startMs) return 0;
  const counts = await countReadings(clickhouse, { organizationId, instrumentIds: section.instruments.map((instrument) => instrument.id) },
    [{ startMs: section.startMs, endMs: section.endMs }]);
  let total = 0;
  for (const count of counts.values()) total += count;
  return total;
}

/** Inclusive [from, to] windows covering the section, cut at hours (multiples of `alignMs`). */
async function planWindows(clickhouse: ClickHouseClient, organizationId: number, section: ExportSection, alignMs: number): Promise<Array<[number, number]>> {
  const result = await clickhouse.query({
    query: `SELECT hour, sum(p) FROM (
              SELECT instrument_id, hour, argMax(points, version) AS p FROM points_rollup_1h
               WHERE ${scopeFilter(organizationId, section)} AND hour >= ${int(floorTo(section.startMs, HOUR_MS))} AND hour <= ${int(section.endMs)}
               GROUP BY instrument_id, hour)
             GROUP BY hour ORDER BY hour`,
    format: 'JSONCompact',
  });
  const hours = (await result.json<[string | number, string | number]>()).data;
  const windows: Array<[number, number]> = [];
  let from = section.startMs;
  let held = 0;
  for (const [hourText, pointsText] of hours) {
    const cut = floorTo(Number(hourText), Math.max(alignMs, 1));
    if (held >= WINDOW_POINTS && cut > from && cut <= section.endMs) {
      windows.push([from, cut - 1]);
      from = cut;
      held = 0;
    }
    held += Number(pointsText);
  }
  windows.push([from, section.endMs]);
  return windows;
}

function dedupedPoints(organizationId: number, section: ExportSection, from: number, to: number): string {
  return `SELECT instrument_id, ts, argMax(value, version) AS v, argMax(is_deleted, version) AS d
            FROM points WHERE ${scopeFilter(organizationId, section)} AND ts >= ${int(from)} AND ts <= ${int(to)}
           GROUP BY instrument_id, ts`;
}

/**
 * The section's rows in time order, as TabSeparated lines: raw `ts, instrument_id, value`, or with a
 * bucket width `bucket_start, instrument_id, avg, min, max` (buckets aligned to multiples of the width,
 * as the read endpoints align them). A missing value is `\N`.
 */
export async function* sectionLines(
  clickhouse: ClickHouseClient,
  organizationId: number,
  section: ExportSection,
  bucketMs: number | null,
): AsyncGenerator<string[]> {
  if (section.instruments.length === 0 || section.endMs < section.startMs) return;
  for (const [from, to] of await planWindows(clickhouse, organizationId, section, bucketMs ?? 1)) {
    const query = bucketMs === null
      ? `SELECT ts, instrument_id, v FROM (${dedupedPoints(organizationId, section, from, to)}) WHERE d = 0 ORDER BY ts, instrument_id`
      : `SELECT (ts - modulo(modulo(ts, toInt64(${int(bucketMs)})) + toInt64(${int(bucketMs)}), toInt64(${int(bucketMs)}))) AS bucket,
                instrument_id, avg(v), min(v), max(v)
           FROM (${dedupedPoints(organizationId, section, from, to)}) WHERE d = 0
          GROUP BY bucket, instrument_id ORDER BY bucket, instrument_id`;
    const result = await clickhouse.query({ query, format: 'TabSeparated' });
    for await (const rows of result.stream()) {
      const lines = new Array<string>(rows.length);
      for (let index = 0; index < rows.length; index += 1) lines[index] = rows[index]!.text;
      yield lines;
    }
  }
}

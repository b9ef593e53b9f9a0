/**
 * Sample analytes in Analyze: a unit operation's samples of one analyte are sparse (a few a day), so
 * they are not averaged per grid step like readings. Each unit operation's measured results, by drawn
 * time inside its window, are interpolated linearly onto the start of every grid step between its
 * first and last sample (no extrapolation before the first or after the last); the envelope is then the
 * same per-step statistics over the references as for derived parameters (derivedStatistics), and a
 * target is compared on the same grid. A flagged result (`< 0.5`) is a limit, not a value: left out.
 */
import type pg from 'pg';
import { gridOrigin } from './resample.ts';
import type { DerivedGrid, DerivedMember } from './derived-grid.ts';

interface SampleValueRow {
  unit_operation_id: string;
  drawn_ms: number;
  value: number;
  unit: string;
}

/**
 * The values at the grid step starts between the first and last of `points` (ascending by time; two
 * samples drawn at the same time count as their mean), linear between neighbours.
 */
export function interpolateOntoGrid(points: ReadonlyArray<[number, number]>, origin: number, stepMs: number): Array<[number, number]> {
  const byTime = new Map<number, { sum: number; count: number }>();
  for (const [time, value] of points) {
    const entry = byTime.get(time) ?? { sum: 0, count: 0 };
    entry.sum += value;
    entry.count += 1;
    byTime.set(time, entry);
  }
  const merged = [...byTime].sort(([a], [b]) => a - b).map(([time, entry]): [number, number] => [time, entry.sum / entry.count]);
  if (merged.length === 0) return [];
  const first = Math.ceil((merged[0]![0] - origin) / stepMs);
  const lastIndex = Math.floor((merged[merged.length - 1]![0] - origin) / stepMs);
  const values: Array<[number, number]> = [];
  let segment = 0;
  for (let cell = first; cell <= lastIndex; cell += 1) {
    const time = origin + cell * stepMs;
    while (segment < merged.length - 2 && merged[segment + 1]![0] < time) segment += 1;
    const [t0, v0] = merged[segment]!;
    const [t1, v1] = merged[Math.min(segment + 1, merged.length - 1)]!;
    values.push([cell, t1 === t0 ? v0 : v0 + ((v1 - v0) * (time - t0)) / (t1 - t0)]);
  }
  return values;
}

/**
 * The analyte (any case) on the grid of each unit operation. The unit is the one most of the
 * results are in; results in another unit are not converted and so are left out.
 */
export async function sampleGridValues(
  db: pg.Pool, organizationId: number, analyte: string, members: readonly DerivedMember[], stepMs: number,
): Promise<DerivedGrid & { unit: string | null }> {
  const values = new Map<number, Array<[number, number]>>();
  if (members.length === 0) return { values, leftOut: new Map(), unit: null };
  const { rows } = await db.query<SampleValueRow>(
    `SELECT s.unit_operation_id, (extract(epoch FROM s.drawn_at) * 1000)::float8 AS drawn_ms, r.value, r.unit
       FROM samples s JOIN sample_results r ON r.sample_row_id = s.id
      WHERE s.organization_id = $1 AND s.unit_operation_id = ANY($2::bigint[]) AND lower(r.analyte) = lower($3) AND r.flag IS NULL
      ORDER BY s.drawn_at, s.id`,
    [organizationId, members.map((member) => member.unitOperation.id), analyte],
  );
  const unitCounts = new Map<string, number>();
  for (const row of rows) unitCounts.set(row.unit, (unitCounts.get(row.unit) ?? 0) + 1);
  const unit = [...unitCounts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))[0]?.[0] ?? null;
  for (const { unitOperation, timeZeroMs } of members) {
    const points = rows
      .filter((row) => Number(row.unit_operation_id) === unitOperation.id && row.unit === unit
        && row.drawn_ms >= unitOperation.startMs! && row.drawn_ms <= unitOperation.endMs)
      .map((row): [number, number] => [row.drawn_ms, row.value]);
    const series = interpolateOntoGrid(points, gridOrigin(timeZeroMs, stepMs), stepMs);
    if (series.length > 0) values.set(unitOperation.id, series);
  }
  return { values, leftOut: new Map(), unit };
}

/**
 * Fixtures of the analysis tests: unit operations on their own equipment with instruments of chosen
 * types, readings written through the ingest-worker's own store functions (versions, tombstones,
 * rollups), and a brute-force envelope computed here from the readings the test wrote.
 */
import { randomBytes } from 'node:crypto';
import type { InstrumentType } from '@bioprocess/shared/enums';
import { insertPoints } from '@bioprocess/ingest-worker';
import { writeTombstones } from '@bioprocess/ingest-worker';
import { recomputeRollups } from '@bioprocess/ingest-worker';
import { pointVersion } from '@bioprocess/shared/ingest/versions';
import type { TestContext, TestUser } from '../support/test-context.ts';

export interface Site {
  organizationId: number;
  facilityId: number;
  editor: TestUser;
  viewer: TestUser;
  admin: TestUser;
}

export async function createSite(ctx: TestContext): Promise<Site> {
  const organizationId = await ctx.createOrganization();
  const [editor, viewer, admin] = await Promise.all([
    ctx.createUser({ organizationId, role: 'editor' }),
    ctx.createUser({ organizationId, role: 'viewer' }),
    ctx.createUser({ organizationId, role: 'admin' }),
  ]);
  const facility = await ctx.deps.pg.query(
    `INSERT INTO facilities (organization_id, name, type) VALUES ($1, 'Pilot hall', 'pilot plant') RETURNING id`, [organizationId]);
  return { organizationId, facilityId: Number(facility.rows[0].id), editor, viewer, admin };
}

export interface PlacedUnitOperation {
  id: number;
  runId: number;
  equipmentId: number;
  instruments: Partial<Record<InstrumentType, number>>;
}

export async function addUnitOperation(
  ctx: TestContext,
  site: Site,
  options: { startMs: number | null; endMs: number | null; types: InstrumentType[]; unitOperationType?: string; runName?: string },
): Promise<PlacedUnitOperation> {
  const { pg } = ctx.deps;
  const equipment = await pg.query(
    `INSERT INTO equipment (organization_id, facility_id, name, type) VALUES ($1, $2, $3, 'bioreactor') RETURNING id`,
    [site.organizationId, site.facilityId, `Reactor ${randomBytes(3).toString('hex')}`]);
  const equipmentId = Number(equipment.rows[0].id);
  const instruments: Partial<Record<InstrumentType, number>> = {};
  for (const type of options.types) {
    const { rows } = await pg.query(
      `INSERT INTO instruments (organization_id, equipment_id, name, type) VALUES ($1, $2, $3, $4) RETURNING id`,
      [site.organizationId, equipmentId, `${type} probe`, type]);
    instruments[type] = Number(rows[0].id);
  }
  const run = await pg.query(
    `INSERT INTO runs (organization_id, facility_id, name, target) VALUES ($1, $2, $3, 'titer') RETURNING id`,
    [site.organizationId, site.facilityId, options.runName ?? `Run ${randomBytes(2).toString('hex')}`]);
  const toIso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
  const { rows } = await pg.query(
    `INSERT INTO unit_operations (organization_id, run_id, type, equipment_id, start_time, end_time)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
    [site.organizationId, run.rows[0].id, options.unitOperationType ?? 'fermentation', equipmentId, toIso(options.startMs), toIso(options.endMs)]);
  return { id: Number(rows[0].id), runId: Number(run.rows[0].id), equipmentId, instruments };
}

let versionSeq = 1_000;

export type Readings = Array<[ts: number, value: number | null]>;

/** Stores readings as one accepted write would, then recomputes the rollups of their range. */
export async function writeReadings(ctx: TestContext, organizationId: number, instrumentId: number, readings: Readings): Promise<void> {
  if (readings.length === 0) return;
  versionSeq += 1;
  const seq = versionSeq;
  const lines = readings.map(([ts, value], index) => `${organizationId}\t${instrumentId}\t${ts}\t${value ?? '\\N'}\t${pointVersion(seq, index)}\t0\n`);
  await insertPoints(ctx.deps.clickhouse, lines.join(''), 'TabSeparated');
  const times = readings.map(([ts]) => ts);
  await recomputeRollups(ctx.deps.clickhouse, ctx.deps.pg, [{
    range: { organizationId, instrumentIds: [instrumentId], startMs: Math.min(...times), endMs: Math.max(...times) },
  }]);
}

/** Deletes a range as a range deletion does: tombstones with a newer version, then the rollups again. */
export async function deleteReadings(ctx: TestContext, organizationId: number, instrumentId: number, startMs: number, endMs: number): Promise<void> {
  versionSeq += 1;
  const range = { organizationId, instrumentIds: [instrumentId], startMs, endMs };
  await writeTombstones(ctx.deps.clickhouse, range, versionSeq);
  await recomputeRollups(ctx.deps.clickhouse, ctx.deps.pg, [{ range }]);
}

/** Readings every `everyMs` over [fromMs, toMs), valued by `shape(ms since fromMs)`. */
export function sampled(fromMs: number, toMs: number, everyMs: number, shape: (elapsedMs: number) => number | null): Readings {
  const readings: Readings = [];
  for (let ts = fromMs; ts < toMs; ts += everyMs) readings.push([ts, shape(ts - fromMs)]);
  return readings;
}

/** Linear interpolation between the sorted values at rank (n - 1) * level, as ClickHouse's `quantiles` does. */
export function percentile(sorted: readonly number[], level: number): number {
  const rank = (sorted.length - 1) * level;
  const below = Math.floor(rank);
  const above = Math.min(sorted.length - 1, below + 1);
  return sorted[below]! + (sorted[above]! - sorted[below]!) * (rank - below);
}

export interface BruteMember {
  readings: Readings;
  startMs: number;
  endMs: number;
  timeZeroMs: number;
}

/** Grid index -> each member's average of its non-null readings in the cell (inside its window). */
export function bruteCells(member: BruteMember, stepMs: number): Map<number, number> {
  const origin = stepMs % 60_000 === 0 ? Math.floor(member.timeZeroMs / 60_000) * 60_000 : member.timeZeroMs;
  const sums = new Map<number, { sum: number; n: number }>();
  for (const [ts, value] of member.readings) {
    if (value === null || ts < member.startMs || ts > member.endMs) continue;
    const cell = Math.floor((ts - origin) / stepMs);
    const entry = sums.get(cell) ?? { sum: 0, n: 0 };
    entry.sum += value;
    entry.n += 1;
    sums.set(cell, entry);
  }
  return new Map([...sums].map(([cell, { sum, n }]) => [cell, sum / n]));
}

export interface BrutePoint { t: number; median: number; mean: number; lower: number | null; upper: number | null; min: number; max: number; count: number }

export function bruteEnvelope(
  members: readonly BruteMember[],
  stepMs: number,
  band: { kind: 'percentiles'; lower: number; upper: number } | { kind: 'sigma'; k: number },
): BrutePoint[] {
  const byCell = new Map<number, number[]>();
  for (const member of members) {
    for (const [cell, value] of bruteCells(member, stepMs)) byCell.set(cell, [...(byCell.get(cell) ?? []), value]);
  }
  return [...byCell].sort(([a], [b]) => a - b).map(([cell, values]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const mean = values.reduce((sum, value) => sum + value, 0) / values.length;
    const sigma = values.length < 2 ? null : Math.sqrt(values.reduce((sum, value) => sum + (value - mean) ** 2, 0) / (values.length - 1));
    return {
      t: (cell * stepMs) / 1000,
      median: percentile(sorted, 0.5),
      mean,
      lower: band.kind === 'percentiles' ? percentile(sorted, band.lower / 100) : sigma === null ? null : mean - band.k * sigma,
      upper: band.kind === 'percentiles' ? percentile(sorted, band.upper / 100) : sigma === null ? null : mean + band.k * sigma,
      min: sorted[0]!,
      max: sorted[sorted.length - 1]!,
      count: values.length,
    };
  });
}

/**
 * The tolerance as the api defines it (docs/analysis.md): TOLERANCE_NOISE_MULTIPLE x the median over
 * the members of each one's median absolute difference between neighbouring cells / (0.6745 sqrt 2),
 * and at least TOLERANCE_RANGE_SHARE of the range the centre spans.
 */
export function bruteTolerance(members: readonly BruteMember[], stepMs: number, envelope: readonly BrutePoint[], centre: 'mean' | 'median'): number {
  const median = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const middle = Math.floor(sorted.length / 2);
    return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  };
  const noises = members.flatMap((member) => {
    const cells = bruteCells(member, stepMs);
    const differences = [...cells].flatMap(([cell, value]) => (cells.has(cell - 1) ? [Math.abs(value - cells.get(cell - 1)!)] : []));
    return differences.length === 0 ? [] : [median(differences) / (0.6745 * Math.SQRT2)];
  });
  const centres = envelope.map((point) => point[centre]);
  return Math.max(3 * (noises.length === 0 ? 0 : median(noises)), 0.02 * (Math.max(...centres) - Math.min(...centres)));
}

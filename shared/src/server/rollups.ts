/**
 * Per-minute and per-hour rollups of the points. Four ways to the same figures: a write's own
 * figures added to the rows this process last stored (rollup-chains.ts), its own figures stored as
 * they are (only when nothing else is in its minutes), a plain aggregation of its own rows (only when
 * each key is there once), and the deduplicating recomputation from the points. The rule every fast
 * path keeps: it writes exactly what the recomputation would, and it checks in the database, before
 * writing, the condition that makes this so; otherwise it falls back. Every way holds the
 * organizations' rollup lock (rollup-locks.ts): shared here, alone for a composition.
 */
import { Readable } from 'node:stream';
import type { MinuteFigure } from '../minute-figures.ts';
import type { ClickHouseClient } from './clickhouse.ts';
import type { Pool, Queryable } from './postgres.ts';
import { minuteFiguresOf, ROLLUP_COLUMNS, rollupRows } from './rollup-figures.ts';
import { floorToMinute, MINUTE_MS, minuteExpr } from '../points-sql.ts';
import { insertRows, type RangeOnInstruments } from './points-store.ts';
import { composeRollups, type ComposableWrite, type RollupChains } from './rollup-chains.ts';
import { whileRecomputing } from './rollup-locks.ts';
import { nextRollupVersion, ownRowsOf, rollupScope, writeHourlyRollups, writeMinuteRollups, type OwnRows, type RollupScope } from './rollup-statements.ts';

export type { OwnRows } from './rollup-statements.ts';

/** Instruments per rollup statement: bounds the memory of one deduplicating aggregation. */
const ROLLUP_INSTRUMENT_BATCH = 4;

/**
 * Recomputes the per-minute rollups of the range from the deduplicated points. Its version comes
 * from a sequence read after the caller's inserts, so the newest recomputation of a minute has seen
 * every write that finished before it. Minutes that no longer hold points get an empty row.
 * `ownRows`, when given, says that only the caller's own rows can be in the range and each key has one
 * row: then a plain aggregation is exact and much cheaper; this is checked in the database first.
 */
export async function recomputeRollups(clickhouse: ClickHouseClient, pool: Pool, range: RangeOnInstruments, ownRows?: OwnRows): Promise<void> {
  if (range.instrumentIds.length === 0) return;
  await whileRecomputing(pool, [range.organizationId], (db) => recomputeRange(clickhouse, db, range, ownRows));
}

/** recomputeRollups, its lock held; `db` draws the versions. */
async function recomputeRange(clickhouse: ClickHouseClient, db: Queryable, range: RangeOnInstruments, ownRows?: OwnRows): Promise<void> {
  const minuteVersion = await nextRollupVersion(db);
  for (let offset = 0; offset < range.instrumentIds.length; offset += ROLLUP_INSTRUMENT_BATCH) {
    const part = { ...range, instrumentIds: range.instrumentIds.slice(offset, offset + ROLLUP_INSTRUMENT_BATCH) };
    const scope = rollupScope([part]);
    const clean = ownRows !== undefined && (await minutesWithOtherRows(clickhouse, scope, [{ range: part, ownRows }]))?.length === 0;
    await writeMinuteRollups(clickhouse, scope, minuteVersion, clean);
    await writeHourlyRollups(clickhouse, scope, await nextRollupVersion(db));
  }
}

export interface RollupRequest {
  range: RangeOnInstruments;
  /** Points the write stored (bounds how many writes one deduplicating pass takes); the range's seconds when absent. */
  points?: number;
  ownRows?: OwnRows;
  /** The write's own per-minute figures, when it stored each key once (with ownRows). */
  minuteFigures?: readonly MinuteFigure[];
}

/**
 * Writes that stored at most this many points together are recomputed from the points at once rather
 * than first asked whether their own figures would do: the question scans the same minutes and costs
 * a round trip, and what it can save grows with their own points (feeds' small posts share minutes
 * with their previous post, and fail it anyway).
 */
const RECOMPUTE_WITHOUT_ASKING_MAX_POINTS = 20_000;
/** Points one deduplicating pass over several writes' minutes takes at most: bounds ClickHouse's aggregation memory. */
const UNION_MAX_POINTS = 500_000;

export interface RollupPassOptions {
  /** Writes that stored more points than this together are checked for the fast ways first (default RECOMPUTE_WITHOUT_ASKING_MAX_POINTS). */
  askAbovePoints?: number;
  /** The rows this committer last stored by composing: given, writes that bring their figures compose onto them. */
  chains?: RollupChains;
}

/**
 * Recomputes the rollups of several writes at once, the cheapest way the database allows. When each
 * stored only its own rows (`ownRows`) and brought its minute figures, and the caller keeps chains
 * (a committer of feeds' posts), their figures are added to the rows it last stored where that is
 * exact, and the rest recomputed (rollup-chains.ts), unless another writer holds the lock. Otherwise,
 * when each stored only its own rows, together more points than `askAbovePoints` (below that the
 * question costs what it could save), and one query shows that no other row is in their minutes:
 *   - they all brought their minute figures: the figures are stored as they are, with no aggregation
 *     of points in ClickHouse;
 *   - else one plain aggregation covers them all;
 *   - otherwise their minutes are recomputed from the deduplicated points in one pass per table for
 *     as many writes as UNION_MAX_POINTS allows, and a large write on its own.
 * Writes that may share a key never compose nor take the two fast ways.
 */
export async function recomputeRollupsTogether(clickhouse: ClickHouseClient, pool: Pool, requests: readonly RollupRequest[], options: RollupPassOptions = {}): Promise<void> {
  const writes = requests.filter((request) => request.range.instrumentIds.length > 0);
  if (writes.length === 0) return;
  const apart = !keysMayOverlap(writes.map((request) => request.range));
  // Bounded as one deduplicating pass is: the minutes a composition cannot take are recomputed in one.
  const composable = writes.reduce((sum, request) => sum + weightOf(request), 0) <= UNION_MAX_POINTS
    && writes.every((request) => request.ownRows && request.minuteFigures);
  if (options.chains && apart && composable) {
    if (await composeRollups(clickhouse, pool, options.chains, writes as ComposableWrite[])) return;
  }
  await whileRecomputing(pool, writes.map((request) => request.range.organizationId), async (db) => {
    // One check decides both fast ways (feeds fail it on every flush: one question, not two). It reads
    // the writes' minutes as a recomputation does, so it pays only when their own points are many.
    const asking = writes.reduce((sum, request) => sum + (request.points ?? weightOf(request)), 0) > (options.askAbovePoints ?? RECOMPUTE_WITHOUT_ASKING_MAX_POINTS);
    if (asking && apart && writes.every((request) => request.ownRows)) {
      if (await storeOwnRollups(clickhouse, db, writes as Array<RollupRequest & Required<Pick<RollupRequest, 'ownRows'>>>)) return;
    }
    const large = writes.filter((request) => weightOf(request) > UNION_MAX_POINTS);
    for (const request of large) await recomputeRange(clickhouse, db, request.range, request.ownRows);
    let union: RollupRequest[] = [];
    let weight = 0;
    const recomputeUnion = async () => {
      if (union.length === 0) return;
      // Exact whatever the writes share: every key of their minutes is deduplicated (its newest row wins),
      // and the version, drawn after all of them were stored, is above that of any earlier recomputation.
      const minuteVersion = await nextRollupVersion(db);
      const scope = rollupScope(union.map((request) => request.range));
      await writeMinuteRollups(clickhouse, scope, minuteVersion, false);
      await writeHourlyRollups(clickhouse, scope, await nextRollupVersion(db));
      union = [];
      weight = 0;
    };
    for (const request of writes) {
      if (weightOf(request) > UNION_MAX_POINTS) continue;
      if (weight + weightOf(request) > UNION_MAX_POINTS) await recomputeUnion();
      union.push(request);
      weight += weightOf(request);
    }
    await recomputeUnion();
  });
}

/** The points a recomputation of the write's minutes reads, about (its own points and its minutes' neighbours). */
function weightOf(request: RollupRequest): number {
  const { range } = request;
  const minutes = (floorToMinute(range.endMs) - floorToMinute(range.startMs)) / MINUTE_MS + 1;
  return Math.max(request.points ?? 0, minutes * 60 * range.instrumentIds.length);
}

/**
 * Whether two ranges share an instrument and overlap in time (they could hold the same key). Each
 * instrument's earlier spans are kept by instrument: a feeds flush of 150 posts compared every pair of
 * posts and their instruments, a million steps, a sixth of the rollups thread's time.
 */
export function keysMayOverlap(ranges: readonly RangeOnInstruments[]): boolean {
  const spansOf = new Map<number, Map<number, Array<[range: number, startMs: number, endMs: number]>>>();
  for (const [index, range] of ranges.entries()) {
    let byInstrument = spansOf.get(range.organizationId);
    if (!byInstrument) spansOf.set(range.organizationId, byInstrument = new Map());
    for (const instrumentId of range.instrumentIds) {
      const spans = byInstrument.get(instrumentId);
      if (!spans) {
        byInstrument.set(instrumentId, [[index, range.startMs, range.endMs]]);
        continue;
      }
      if (spans.some(([other, startMs, endMs]) => other !== index && startMs <= range.endMs && range.startMs <= endMs)) return true;
      spans.push([index, range.startMs, range.endMs]);
    }
  }
  return false;
}

/** Minutes shared with other writes that one flush recomputes from the points beside its own figures; more go the general way. */
const SHARED_MINUTES_MAX = 32;
/** Instrument-minutes the check reads back at most (a flush of many instruments sharing those minutes). */
const SHARED_ROWS_MAX = 10_000;

/**
 * When no other row is in the writes' minutes: stores their own minute figures as the minute rollups
 * (when every write brought them), or a plain aggregation of their rows; then aggregates their hours
 * from the minute rollups (at most 60 rows per instrument and hour, however long the feed has run).
 * When other rows are in a few of their minutes (a backfill in posts that do not end on a minute: each
 * post shares its edge minutes with the next) and every write brought its figures, those minutes alone
 * are recomputed from the deduplicated points and the others take the figures.
 * Answers false, having written nothing, otherwise.
 */
async function storeOwnRollups(clickhouse: ClickHouseClient, db: Queryable, writes: ReadonlyArray<RollupRequest & Required<Pick<RollupRequest, 'ownRows'>>>): Promise<boolean> {
  // Drawn before the check: a write that lands in these minutes after it sees these rows in its own
  // check, recomputes from the points, and draws a later version, which wins.
  const minuteVersion = await nextRollupVersion(db);
  const scope = rollupScope(writes.map((write) => write.range));
  const shared = await minutesWithOtherRows(clickhouse, scope, writes);
  const withFigures = writes.every((write) => write.minuteFigures);
  if (shared === null || (shared.length > 0 && !withFigures)) return false;
  if (withFigures) {
    const isShared = new Set(shared.map((key) => `${key.organizationId}:${key.instrumentId}:${key.minute}`));
    const minutes = minuteFiguresOf(writes.map((write) => ({ organizationId: write.range.organizationId, minutes: write.minuteFigures! })))
      .filter((figure) => !isShared.has(`${figure.organizationId}:${figure.instrumentId}:${figure.start}`));
    if (minutes.length > 0) await insertRows(clickhouse, 'points_rollup_1m', ROLLUP_COLUMNS('minute'), 'RowBinary', Readable.from([rollupRows(minutes, minuteVersion)]));
    if (shared.length > 0) {
      const sharedScope = rollupScope(shared.map((key) => ({
        organizationId: key.organizationId, instrumentIds: [key.instrumentId], startMs: key.minute, endMs: key.minute + MINUTE_MS - 1,
      })));
      // The same version as the figures: every write that reached these minutes before it was drawn is in the points.
      await writeMinuteRollups(clickhouse, sharedScope, minuteVersion, false);
    }
  } else {
    await writeMinuteRollups(clickhouse, scope, minuteVersion, true);
  }
  // Drawn after the minute rows are stored, as for any hourly recomputation.
  await writeHourlyRollups(clickhouse, scope, await nextRollupVersion(db));
  return true;
}

interface MinuteKey {
  organizationId: number;
  instrumentId: number;
  minute: number;
}

/**
 * The minutes of the scope that hold a row other than the writes' own (none: every row there is
 * theirs); null when they fall in more than SHARED_MINUTES_MAX distinct minutes (each becomes a
 * condition of a recomputation).
 */
async function minutesWithOtherRows(clickhouse: ClickHouseClient, scope: RollupScope, writes: ReadonlyArray<Required<Pick<RollupRequest, 'range' | 'ownRows'>>>): Promise<MinuteKey[] | null> {
  const result = await clickhouse.query({
    query: `SELECT organization_id, instrument_id, ${minuteExpr('ts')} AS m FROM points
             WHERE (${scope.points}) AND NOT (${ownRowsOf(writes)})
             GROUP BY organization_id, instrument_id, m
             LIMIT ${SHARED_ROWS_MAX + 1}`,
    format: 'JSONCompact',
  });
  const keys = (await result.json<[string, string, string]>()).data.map(([organizationId, instrumentId, minute]) => ({
    organizationId: Number(organizationId), instrumentId: Number(instrumentId), minute: Number(minute),
  }));
  return keys.length > SHARED_ROWS_MAX || new Set(keys.map((key) => key.minute)).size > SHARED_MINUTES_MAX ? null : keys;
}

/**
 * Rollups composed from stored figures. A feed posts a few seconds at a time, so each post lands in
 * minutes that already hold its earlier posts' rows, and recomputing those minutes from the points
 * reads all their readings again for every post (a minute of 1 Hz readings in 5 s posts is read 6.5
 * times over, its hour's minute rows 12 times). Count, sum, minimum and maximum compose instead: a
 * minute's new row is its stored row plus the post's own figures, exactly, when
 *   - the stored row counts every other reading of the minute: it is the row this process last stored
 *     there by composing (a chain link, kept here with its version), or there is no row yet, so every
 *     reading there is of a write whose rollups are still owed, which adds itself when its turn comes
 *     (composing, or recomputing from the points);
 *   - none of the post's readings replaces one the stored row counts: on each instrument, its seconds
 *     meet none of the writes composed into the link (kept with it). The points cannot tell this: a
 *     merge of ReplacingMergeTree may already have dropped the rows the post replaced. A write still
 *     owed whose readings the post replaced meets the post's seconds when its turn comes, and
 *     recomputes;
 *   - no other writer stores a row for the minute meanwhile: the organization's rollup lock is held
 *     alone (rollup-locks.ts).
 * The newest stored version must be the link's: any other writer (a recomputation here or in another
 * process, a deletion, the backlog pass) breaks the chain, and the minute is recomputed from the points
 * until the feed reaches its next minute. Hours compose the same way from the minutes' figures, and
 * are recomputed from the minute rows when one of their minutes was or their link is broken. A row so
 * recomputed here, under the lock, is a link again: it counts the minute rows, and a minute row that
 * counts a write still owed was recomputed, so that write's turn recomputes its minute and its hour.
 */
import { Readable } from 'node:stream';
import type { MinuteFigure } from '../minute-figures.ts';
import type { ClickHouseClient } from './clickhouse.ts';
import type { Pool, PoolClient } from './postgres.ts';
import { insertRows, type RangeOnInstruments } from './points-store.ts';
import { addFigures, hourFiguresOf, minuteFiguresOf, ROLLUP_COLUMNS, rollupRows, type RollupFigure } from './rollup-figures.ts';
import { ifAlone } from './rollup-locks.ts';
import { nextRollupVersions, rollupScope, writeHourlyRollups, writeMinuteRollups, type OwnRows } from './rollup-statements.ts';
import { floorTo, floorToMinute, HOUR_MS, MINUTE_MS } from '../points-sql.ts';

/** Links kept at most: two per instrument a feed posts to (its minute and its hour), for many feeds. */
const CHAIN_MAX_LINKS = 50_000;

/** A row this process stored by composing: its version, what it counts, and (minutes) the seconds of the writes it counts. */
interface ChainLink {
  version: string;
  figure: RollupFigure;
  spans?: readonly Span[];
}

/** Timestamps from `[0]` to `[1]`, both included, on one instrument. */
type Span = readonly [from: number, to: number];

/** A link composed by a flush, with its key in the chains. */
interface KeyedLink {
  key: string;
  link: ChainLink;
}

const meets = (spans: readonly Span[], others: readonly Span[]) =>
  spans.some(([from, to]) => others.some(([otherFrom, otherTo]) => from <= otherTo && otherFrom <= to));

type Period = 'minute' | 'hour';
const linkKey = (period: Period, figure: Pick<RollupFigure, 'organizationId' | 'instrumentId' | 'start'>) =>
  `${period}:${figure.organizationId}:${figure.instrumentId}:${figure.start}`;

/** The rows this process last stored by composing, per minute and hour; one per committer of rollups. */
export class RollupChains {
  private readonly links = new Map<string, ChainLink>();

  constructor(private readonly maxLinks = CHAIN_MAX_LINKS) {}

  get(key: string): ChainLink | undefined {
    return this.links.get(key);
  }

  set(key: string, link: ChainLink): void {
    // Re-inserted, so the oldest link is the first to go.
    this.links.delete(key);
    this.links.set(key, link);
    if (this.links.size <= this.maxLinks) return;
    // The oldest quarter at once: a Map's iteration steps over the slots its deletions left, so
    // evicting one link per insert scanned them all each time (a backfill spent seconds on it).
    let excess = this.links.size - Math.floor(this.maxLinks * 0.75);
    for (const oldest of this.links.keys()) {
      if (excess-- <= 0) break;
      this.links.delete(oldest);
    }
  }

  forget(keys: Iterable<string>): void {
    for (const key of keys) this.links.delete(key);
  }
}

/** A write that stored only its own rows, each key once, with its per-minute figures. */
export interface ComposableWrite {
  range: RangeOnInstruments;
  ownRows: OwnRows;
  minuteFigures: readonly MinuteFigure[];
}

/**
 * Stores the writes' rollups: composed where the conditions above hold, recomputed from the points
 * (minutes) or the minute rows (hours) elsewhere. Answers false, having written nothing, when another
 * writer holds one of their organizations' rollup lock.
 */
export async function composeRollups(clickhouse: ClickHouseClient, pool: Pool, chains: RollupChains, writes: readonly ComposableWrite[]): Promise<boolean> {
  const minutes = minuteFiguresOf(writes.map((write) => ({ organizationId: write.range.organizationId, minutes: write.minuteFigures })));
  const hours = hourFiguresOf(minutes);
  const done = await ifAlone(pool, writes.map((write) => write.range.organizationId), async (client) => {
    try {
      await composeHoldingLock(clickhouse, client, chains, writes, minutes, hours);
    } catch (error) {
      // Some rows may be stored and others not: these minutes and hours are recomputed next time.
      chains.forget([...minutes.map((figure) => linkKey('minute', figure)), ...hours.map((figure) => linkKey('hour', figure))]);
      throw error;
    }
    return true;
  });
  return done === true;
}

async function composeHoldingLock(
  clickhouse: ClickHouseClient, client: PoolClient, chains: RollupChains, writes: readonly ComposableWrite[],
  minutes: readonly RollupFigure[], hours: readonly RollupFigure[],
): Promise<void> {
  // Both drawn at once: with the lock held alone, no write lands in these minutes before the hours.
  const [minuteVersion, hourVersion] = await nextRollupVersions(client, 2) as [string, string];
  const newest = await newestVersions(clickhouse, writes);
  // Each figure's key is made once: a flush composes thousands of rows, and a new string is hashed anew.
  const base = (key: string, figure: RollupFigure): ChainLink | null => {
    const link = chains.get(key);
    const stored = newest.get(key);
    if (stored === undefined) return link === undefined ? { version: '', figure: { ...figure, points: 0, count: 0, sum: 0, min: null, max: null }, spans: [] } : null;
    return link?.version === stored ? link : null;
  };
  const spans = writeSpansByMinute(writes);

  const composedMinutes: KeyedLink[] = [];
  const recomputedMinutes: RollupFigure[] = [];
  for (const figure of minutes) {
    const key = linkKey('minute', figure);
    const onto = base(key, figure);
    const own = spans.get(key) ?? [];
    if (onto?.spans && !meets(own, onto.spans)) {
      const row = { ...onto.figure };
      addFigures(row, figure);
      composedMinutes.push({ key, link: { version: minuteVersion, figure: row, spans: [...onto.spans, ...own] } });
    } else {
      recomputedMinutes.push(figure);
    }
  }
  const hourOf = (figure: RollupFigure) => linkKey('hour', { ...figure, start: floorTo(figure.start, HOUR_MS) });
  const hoursWithRecomputedMinutes = new Set(recomputedMinutes.map(hourOf));
  const composedHours: KeyedLink[] = [];
  const recomputedHours: RollupFigure[] = [];
  for (const figure of hours) {
    const key = linkKey('hour', figure);
    const onto = hoursWithRecomputedMinutes.has(key) ? null : base(key, figure);
    if (onto) {
      const row = { ...onto.figure };
      addFigures(row, figure);
      composedHours.push({ key, link: { version: hourVersion, figure: row } });
    } else {
      recomputedHours.push(figure);
    }
  }

  await storeRows(clickhouse, 'minute', composedMinutes, recomputedMinutes, minuteVersion, chains);
  await storeRows(clickhouse, 'hour', composedHours, recomputedHours, hourVersion, chains);
}

/** Inserts the composed rows, recomputes the others, and keeps the chains to what is stored. */
async function storeRows(
  clickhouse: ClickHouseClient, period: Period, composed: readonly KeyedLink[], recomputed: readonly RollupFigure[], rollupVersion: string, chains: RollupChains,
): Promise<void> {
  const width = period === 'minute' ? MINUTE_MS : HOUR_MS;
  if (composed.length > 0) {
    await insertRows(clickhouse, `points_rollup_1${period === 'minute' ? 'm' : 'h'}`, ROLLUP_COLUMNS(period), 'RowBinary', Readable.from([rollupRows(composed.map(({ link }) => link.figure), rollupVersion)]));
  }
  chains.forget(recomputed.map((figure) => linkKey(period, figure)));
  if (recomputed.length > 0) {
    const scope = rollupScope(recomputed.map((figure) => ({
      organizationId: figure.organizationId, instrumentIds: [figure.instrumentId], startMs: figure.start, endMs: figure.start + width - 1,
    })));
    if (period === 'minute') {
      // From the deduplicated points, which may count writes still owed: no link.
      await writeMinuteRollups(clickhouse, scope, rollupVersion, false);
    } else {
      await writeHourlyRollups(clickhouse, scope, rollupVersion);
      for (const figure of await hourRowsOfVersion(clickhouse, scope.hours, rollupVersion)) chains.set(linkKey('hour', figure), { version: rollupVersion, figure });
    }
  }
  for (const { key, link } of composed) chains.set(key, link);
}

/** The hour rows stored with `rollupVersion` in the hours `condition` selects. */
async function hourRowsOfVersion(clickhouse: ClickHouseClient, condition: string, rollupVersion: string): Promise<RollupFigure[]> {
  const result = await clickhouse.query({
    query: `SELECT organization_id, instrument_id, hour, points, value_count, value_sum, value_min, value_max
              FROM points_rollup_1h WHERE (${condition}) AND version = ${rollupVersion}`,
    format: 'JSONCompact',
  });
  // ClickHouse writes doubles in their shortest form that reads back to the same double.
  return (await result.json<[string, string, string, string, string, number, number | null, number | null]>()).data.map(
    ([organizationId, instrumentId, hour, points, count, sum, min, max]) => ({
      organizationId: Number(organizationId), instrumentId: Number(instrumentId), start: Number(hour), points: Number(points), count: Number(count), sum, min, max,
    }),
  );
}

/** Each write's seconds on each of its instruments, cut at minutes, by the minute's link key. */
function writeSpansByMinute(writes: readonly ComposableWrite[]): Map<string, Span[]> {
  const spans = new Map<string, Span[]>();
  for (const { range } of writes) {
    for (let minute = floorToMinute(range.startMs); minute <= range.endMs; minute += MINUTE_MS) {
      const span: Span = [Math.max(range.startMs, minute), Math.min(range.endMs, minute + MINUTE_MS - 1)];
      for (const instrumentId of range.instrumentIds) {
        const key = linkKey('minute', { organizationId: range.organizationId, instrumentId, start: minute });
        const known = spans.get(key);
        if (known) known.push(span);
        else spans.set(key, [span]);
      }
    }
  }
  return spans;
}

/** The newest stored version of each minute and hour of the writes that has a row, by link key: one question for the flush. */
async function newestVersions(clickhouse: ClickHouseClient, writes: readonly ComposableWrite[]): Promise<Map<string, string>> {
  const scope = rollupScope(writes.map((write) => write.range));
  const result = await clickhouse.query({
    query: `SELECT 'minute' AS period, organization_id, instrument_id, minute AS at, toString(max(version)) AS v
              FROM points_rollup_1m WHERE ${scope.minutes} GROUP BY organization_id, instrument_id, minute
            UNION ALL
            SELECT 'hour' AS period, organization_id, instrument_id, hour AS at, toString(max(version)) AS v
              FROM points_rollup_1h WHERE ${scope.hours} GROUP BY organization_id, instrument_id, hour`,
    format: 'JSONCompact',
  });
  const newest = new Map<string, string>();
  for (const [period, organizationId, instrumentId, at, storedVersion] of (await result.json<[Period, string, string, string, string]>()).data) {
    newest.set(linkKey(period, { organizationId: Number(organizationId), instrumentId: Number(instrumentId), start: Number(at) }), storedVersion);
  }
  return newest;
}

/**
 * Rollups: the one way they are written.
 *
 * The invariant: for every minute (hour) of an instrument, the rollup row with the highest version
 * holds exactly the aggregation of the deduplicated points of that minute (of the newest minute rows
 * of that hour). It holds because:
 *   1. every write (bulk post, CSV upload, deletion) asks, after its points are stored, for the
 *      recomputation of the whole minutes and hours it touched (a write whose process died first is
 *      recomputed by the backlog pass, or when its job runs again);
 *   2. a recomputation aggregates what is stored, never the write's own figures, so it is exact
 *      whatever other writes share its minutes (minutes where every key has one row and none is a
 *      tombstone are aggregated without the per-key deduplication, which is the identity there:
 *      statements.ts checks that in the statement that aggregates them);
 *   3. its version is drawn from a PostgreSQL sequence after the write's points were stored, and the
 *      minutes are read after the draw: the recomputation with the highest version has seen every
 *      write that drew before it, and a write stored later draws a higher version of its own. Hours
 *      draw their version after their minute rows are written, by the same argument.
 * On a cluster, "what is stored" is read from every replica (sources.ts): a row is visible there as
 * soon as the replica that took it acknowledged it. While a replica does not answer, its range is
 * recorded for a recheck (recheck.ts) and recomputed from the replicas that do.
 * The property tests (ingest-worker/test/rollups-*.test.ts, feed-rollups.test.ts) compare the newest
 * rollups with an aggregation of the deduplicated points.
 */
import type { ClickHouseClient } from '@bioprocess/shared/server/clickhouse';
import type { Pool } from '@bioprocess/shared/server/postgres';
import { floorTo, floorToMinute, HOUR_MS, MINUTE_MS } from '@bioprocess/shared/points-sql';
import type { RangeOnInstruments } from '../points-store.ts';
import { recordRecheck } from './recheck-ranges.ts';
import { rollupLayout, serverDidNotAnswer, TABLE_SOURCES, type RollupSources } from './sources.ts';
import { nextRollupVersion, rollupScope, writeHourlyRollups, writeMinuteRollups } from './statements.ts';

/** Points one recomputation reads at most, about: bounds ClickHouse's deduplicating aggregation memory. */
const RECOMPUTATION_MAX_POINTS = 2_000_000;
/** Instruments per recomputation of a range heavier than that (a long upload of many instruments). */
const INSTRUMENTS_PER_HEAVY_SLICE = 4;

/** A write's range and, when known, how many points it stored (or, for a deletion, removed). */
export interface RollupRequest {
  range: RangeOnInstruments;
  points?: number;
}

/**
 * The rows a recomputation of the request's minutes reads, about: its points and as many again (rows
 * they replaced, or their minutes' neighbours); unknown, a reading a second on each instrument.
 */
function weightOf(request: RollupRequest): number {
  if (request.points !== undefined) return 2 * request.points;
  const { range } = request;
  const minutes = (floorToMinute(range.endMs) - floorToMinute(range.startMs)) / MINUTE_MS + 1;
  return minutes * 60 * range.instrumentIds.length;
}

/**
 * A range too heavy for one recomputation, cut into slices of a few instruments over whole hours, as
 * many as its weight needs: each slice recomputes whole minutes and hours, so the slices together
 * recompute exactly the range's. A sparse range (months with a few readings a day) stays one slice
 * per group of instruments.
 */
function* heavySlices(range: RangeOnInstruments, weight: number): Generator<RangeOnInstruments> {
  const firstHour = floorTo(range.startMs, HOUR_MS);
  const hours = (floorTo(range.endMs, HOUR_MS) - firstHour) / HOUR_MS + 1;
  for (let offset = 0; offset < range.instrumentIds.length; offset += INSTRUMENTS_PER_HEAVY_SLICE) {
    const instrumentIds = range.instrumentIds.slice(offset, offset + INSTRUMENTS_PER_HEAVY_SLICE);
    const sliceWeight = (weight * instrumentIds.length) / range.instrumentIds.length;
    const sliceMs = Math.ceil(hours / Math.ceil(sliceWeight / RECOMPUTATION_MAX_POINTS)) * HOUR_MS;
    for (let startMs = firstHour; startMs <= range.endMs; startMs += sliceMs) {
      yield { ...range, instrumentIds, startMs: Math.max(startMs, range.startMs), endMs: Math.min(startMs + sliceMs - 1, range.endMs) };
    }
  }
}

async function writeScope(clickhouse: ClickHouseClient, pool: Pool, ranges: readonly RangeOnInstruments[], sources: RollupSources): Promise<void> {
  const scope = rollupScope(ranges);
  await writeMinuteRollups(clickhouse, scope, await nextRollupVersion(pool), sources);
  await writeHourlyRollups(clickhouse, scope, await nextRollupVersion(pool), sources);
}

export interface RecomputeOptions {
  /**
   * On a cluster, fail rather than recompute from fewer than every replica (the recheck pass, which
   * waits for them all).
   */
  everyReplicaOnly?: boolean;
}

async function recomputeScope(clickhouse: ClickHouseClient, pool: Pool, ranges: readonly RangeOnInstruments[], options: RecomputeOptions): Promise<void> {
  const layout = await rollupLayout(clickhouse);
  if (layout.cluster === null) {
    await writeScope(clickhouse, pool, ranges, TABLE_SOURCES);
    return;
  }
  try {
    await writeScope(clickhouse, pool, ranges, layout.everyReplica);
  } catch (error) {
    // Only a server that does not answer makes the recomputation settle for fewer replicas; any other
    // failure is the caller's to retry.
    if (options.everyReplicaOnly || !serverDidNotAnswer(error)) throw error;
    // Recorded first: a process dying after the figures below are written leaves the recheck owed.
    await recordRecheck(pool, ranges);
    // From the first replica of each shard that answers (the Distributed tables), with versions drawn
    // after the failed attempt's, so that figures it wrote before failing (from every replica) are
    // replaced by these until the recheck replaces these in turn.
    await writeScope(clickhouse, pool, ranges, TABLE_SOURCES);
  }
}

/**
 * Recomputes the minute and hour rollups of the writes' ranges, after their points are stored. Writes
 * asked for together share statements (one pair per RECOMPUTATION_MAX_POINTS of them); a heavier one
 * goes alone, in slices of a few instruments and hours.
 */
export async function recomputeRollups(clickhouse: ClickHouseClient, pool: Pool, requests: readonly RollupRequest[], options: RecomputeOptions = {}): Promise<void> {
  let together: RangeOnInstruments[] = [];
  let weight = 0;
  for (const request of requests) {
    const { range } = request;
    if (range.instrumentIds.length === 0) continue;
    const requestWeight = weightOf(request);
    if (requestWeight > RECOMPUTATION_MAX_POINTS) {
      for (const slice of heavySlices(range, requestWeight)) await recomputeScope(clickhouse, pool, [slice], options);
      continue;
    }
    if (weight + requestWeight > RECOMPUTATION_MAX_POINTS) {
      await recomputeScope(clickhouse, pool, together, options);
      together = [];
      weight = 0;
    }
    together.push(range);
    weight += requestWeight;
  }
  if (together.length > 0) await recomputeScope(clickhouse, pool, together, options);
}

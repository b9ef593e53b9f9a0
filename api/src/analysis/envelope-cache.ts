/**
 * Envelope statistics of saved golden batches, kept in memory between requests. A deviation against a
 * golden batch then reads only its targets. An entry is found by everything the statistics depend on:
 * the organisation, each reference's window, time zero and instrument per parameter (these follow
 * from the batch's definition and the unit operations as they are now, so an edit of either gives
 * another key), the grid step, the band, and the newest version of the references' stored data.
 *
 * Every write or deletion of readings recomputes the rollups of its range and stores hourly rows
 * under a version drawn after the data was written, so the highest hourly version of the reference
 * instruments changes whenever any of their readings does. It is read before the statistics are
 * computed: data that changes during the computation makes the next request miss, never a stale hit.
 */
import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import type { Band } from '@bioprocess/shared/analysis';
import type { ClickHouseClient } from '@bioprocess/shared/server/clickhouse';
import type { CellStatistics, GridMember } from './resample.ts';

/**
 * Grid cells held at most (about 0.5 KB each): a golden batch of 30 parameters x 1,000 grid times is
 * 30,000, so three such batches stay at hand for about 50 MB of the api's memory.
 */
const MAX_CELLS = 100_000;
/** Entries also expire, so memory held for batches nobody opens is given back. */
const TTL_MS = 6 * 3_600_000;

// One cache per ClickHouse client: tests build several apps on other databases in one process.
const caches = new WeakMap<ClickHouseClient, LRUCache<string, CellStatistics[]>>();

function cacheOf(clickhouse: ClickHouseClient): LRUCache<string, CellStatistics[]> {
  let cache = caches.get(clickhouse);
  if (!cache) {
    cache = new LRUCache<string, CellStatistics[]>({ maxSize: MAX_CELLS, sizeCalculation: (cells) => Math.max(1, cells.length), ttl: TTL_MS });
    caches.set(clickhouse, cache);
  }
  return cache;
}

export async function cachedEnvelopeStatistics(
  clickhouse: ClickHouseClient,
  organizationId: number,
  members: readonly GridMember[],
  stepMs: number,
  band: Band,
  version: string,
  compute: () => Promise<CellStatistics[]>,
): Promise<CellStatistics[]> {
  const key = createHash('sha256').update(JSON.stringify({ organizationId, members, stepMs, band, version })).digest('hex');
  const cache = cacheOf(clickhouse);
  const hit = cache.get(key);
  if (hit) return hit;
  const statistics = await compute();
  cache.set(key, statistics);
  return statistics;
}

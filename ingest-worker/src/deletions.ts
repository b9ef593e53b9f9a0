/**
 * Range deletions in ClickHouse: tombstones over every existing key of a range, the live readings a
 * deletion removes, and deletions accepted after a write that must be applied again once it lands.
 */
import type { ClickHouseClient } from '@bioprocess/shared/server/clickhouse';
import { POINTS_TABLE } from '@bioprocess/shared/server/clickhouse-tables';
import type { Pool } from '@bioprocess/shared/server/postgres';
import { int, oneOf, version } from '@bioprocess/shared/points-sql';
import { tombstoneVersion } from '@bioprocess/shared/ingest/versions';
import type { RangeOnInstruments } from './points-store.ts';

/** Tombstones (with the request's tombstone version) over every existing key of the range. */
export async function writeTombstones(clickhouse: ClickHouseClient, range: RangeOnInstruments, versionSeq: number): Promise<void> {
  const tombstone = version(tombstoneVersion(versionSeq));
  await clickhouse.command({
    query: `INSERT INTO ${POINTS_TABLE} (organization_id, instrument_id, ts, value, version, is_deleted)
      SELECT organization_id, instrument_id, ts, CAST(NULL AS Nullable(Float64)), toUInt64(${tombstone}), toUInt8(1)
        FROM ${POINTS_TABLE}
       WHERE organization_id = ${int(range.organizationId)} AND ${oneOf('instrument_id', range.instrumentIds)}
         AND ts >= ${int(range.startMs)} AND ts <= ${int(range.endMs)}
       GROUP BY organization_id, instrument_id, ts
      HAVING max(version) < toUInt64(${tombstone})`,
  });
}

/** Readings of the range a deletion accepted at `versionSeq` removes (live keys older than its tombstones). */
export async function countLiveReadings(clickhouse: ClickHouseClient, range: RangeOnInstruments, versionSeq: number): Promise<number> {
  const tombstone = version(tombstoneVersion(versionSeq));
  const result = await clickhouse.query({
    query: `SELECT count() FROM (
      SELECT argMax(is_deleted, version) AS deleted, max(version) AS newest FROM ${POINTS_TABLE}
       WHERE organization_id = ${int(range.organizationId)} AND ${oneOf('instrument_id', range.instrumentIds)}
         AND ts >= ${int(range.startMs)} AND ts <= ${int(range.endMs)}
       GROUP BY instrument_id, ts) WHERE deleted = 0 AND newest < toUInt64(${tombstone})`,
    format: 'JSONCompact',
  });
  const rows = (await result.json<[string | number]>()).data;
  return Number(rows[0]?.[0] ?? 0);
}

export interface DeletionRecord {
  versionSeq: number;
  instrumentIds: number[];
  startMs: number;
  endMs: number;
}

/**
 * Deletions accepted after `versionSeq` that overlap the range. A write re-applies them after its own
 * insert: either the deletion's job already ran (and missed these rows) or it will run later; both
 * ways the later-accepted deletion wins.
 */
export async function laterDeletions(pool: Pool, range: RangeOnInstruments, versionSeq: number): Promise<DeletionRecord[]> {
  const { rows } = await pool.query(
    `SELECT version_seq, instrument_ids, start_ms, end_ms FROM time_series_deletions
      WHERE organization_id = $1 AND version_seq > $2 AND instrument_ids && $3::bigint[]
        AND start_ms <= $5 AND end_ms >= $4
      ORDER BY version_seq`,
    [range.organizationId, versionSeq, range.instrumentIds, range.startMs, range.endMs],
  );
  return rows.map((row) => ({
    versionSeq: Number(row.version_seq),
    instrumentIds: (row.instrument_ids as Array<string | number>).map(Number),
    startMs: Number(row.start_ms),
    endMs: Number(row.end_ms),
  }));
}

export async function applyLaterDeletions(clickhouse: ClickHouseClient, pool: Pool, range: RangeOnInstruments, versionSeq: number): Promise<number> {
  const deletions = await laterDeletions(pool, range, versionSeq);
  for (const deletion of deletions) {
    const instrumentIds = deletion.instrumentIds.filter((id) => range.instrumentIds.includes(id));
    await writeTombstones(clickhouse, {
      organizationId: range.organizationId,
      instrumentIds,
      startMs: Math.max(deletion.startMs, range.startMs),
      endMs: Math.min(deletion.endMs, range.endMs),
    }, deletion.versionSeq);
  }
  return deletions.length;
}

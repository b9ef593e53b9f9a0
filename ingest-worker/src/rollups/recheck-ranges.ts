/**
 * On a cluster: ranges whose rollups were recomputed while a replica did not answer (recompute.ts),
 * from the replicas that did, so without the rows that replica alone held. Kept in PostgreSQL
 * (`rollup_recheck`) until a recheck pass (owed.ts) recomputes them from every replica.
 */
import type { Queryable } from '@bioprocess/shared/server/postgres';
import type { RangeOnInstruments } from '../points-store.ts';

export async function recordRecheck(db: Queryable, ranges: readonly RangeOnInstruments[]): Promise<void> {
  if (ranges.length === 0) return;
  await db.query(
    `INSERT INTO rollup_recheck (organization_id, instrument_ids, start_ms, end_ms)
     SELECT o, i::bigint[], s, e FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::bigint[]) AS r(o, i, s, e)`,
    [ranges.map((range) => range.organizationId), ranges.map((range) => `{${range.instrumentIds.join(',')}}`),
      ranges.map((range) => range.startMs), ranges.map((range) => range.endMs)],
  );
}

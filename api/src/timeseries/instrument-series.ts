/**
 * Deleting an instrument deletes its readings too, so no series outlives its instrument. The range
 * deletion spans exactly the instrument's stored readings (looked up in ClickHouse), which keeps the
 * worker's tombstone and rollup work proportional to the data.
 */
import type { FastifyRequest } from 'fastify';
import type { AppDeps } from '../platform/deps.ts';
import { principalOf } from '../auth/authenticate.ts';
import { queueRangeDeletion } from './routes.ts';

export async function queueInstrumentSeriesDeletion(
  deps: AppDeps,
  request: FastifyRequest,
  instrument: { id: number; organization_id: number },
): Promise<void> {
  try {
    // Both ids are validated integers from PostgreSQL, never request text.
    const result = await deps.clickhouse.query({
      query: `SELECT count() AS n, min(ts) AS first, max(ts) AS last FROM points
              WHERE organization_id = ${Number(instrument.organization_id)} AND instrument_id = ${Number(instrument.id)}`,
      format: 'JSONEachRow',
    });
    const [range] = await result.json<{ n: string; first: string; last: string }>();
    if (!range || Number(range.n) === 0) return;
    await queueRangeDeletion(deps, principalOf(request), {
      instrumentIds: [instrument.id],
      startMs: Number(range.first),
      endMs: Number(range.last),
    });
  } catch (error) {
    // The instrument is already gone; the request still succeeds, and the failure is logged.
    request.log.error({ err: error, instrumentId: instrument.id }, 'the time series of a deleted instrument could not be queued for deletion');
  }
}

/**
 * Deleting an instrument deletes its readings too, so no series outlives its instrument. The range
 * deletion spans exactly the instrument's stored readings (looked up in ClickHouse), which keeps the
 * worker's tombstone and rollup work proportional to the data.
 */
import type { FastifyRequest } from 'fastify';
import type { AppDeps } from '../platform/deps.ts';
import { principalOf } from '../auth/authenticate.ts';
import { storedSpan } from './points-read.ts';
import { queueRangeDeletion } from './routes.ts';

export async function queueInstrumentSeriesDeletion(
  deps: AppDeps,
  request: FastifyRequest,
  instrument: { id: number; organization_id: number },
): Promise<void> {
  try {
    const span = await storedSpan(deps.clickhouse, Number(instrument.organization_id), Number(instrument.id));
    if (!span) return;
    await queueRangeDeletion(deps, principalOf(request), { instrumentIds: [instrument.id], startMs: span[0], endMs: span[1] });
  } catch (error) {
    // The instrument is already gone; the request still succeeds, and the failure is logged.
    request.log.error({ err: error, instrumentId: instrument.id }, 'the time series of a deleted instrument could not be queued for deletion');
  }
}

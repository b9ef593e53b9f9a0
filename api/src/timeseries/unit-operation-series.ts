/**
 * Deleting a unit operation deletes its time series (spec/02 §4): a queued range deletion of the
 * instruments on its equipment over its start..end (now when it has no end). A unit operation without
 * a start has no window of its own (its readings are the equipment's), so nothing is deleted for it.
 */
import type { FastifyRequest } from 'fastify';
import type { AppDeps } from '../platform/deps.ts';
import { principalOf } from '../auth/authenticate.ts';
import { instrumentsOfEquipment } from './instruments.ts';
import { queueRangeDeletion } from './routes.ts';

export interface DeletedUnitOperation {
  id: number;
  organization_id: number;
  equipment_id: number | null;
  start_time: Date | null;
  end_time: Date | null;
}

export async function queueUnitOperationSeriesDeletion(
  deps: AppDeps,
  request: FastifyRequest,
  unitOperations: readonly DeletedUnitOperation[],
): Promise<void> {
  const principal = principalOf(request);
  for (const unitOperation of unitOperations) {
    if (unitOperation.equipment_id === null || unitOperation.start_time === null) continue;
    try {
      const instrumentIds = await instrumentsOfEquipment(deps.pg, unitOperation.organization_id, unitOperation.equipment_id);
      if (instrumentIds.length === 0) continue;
      await queueRangeDeletion(deps, { ...principal, organizationId: unitOperation.organization_id }, {
        instrumentIds,
        startMs: unitOperation.start_time.getTime(),
        endMs: (unitOperation.end_time ?? new Date()).getTime(),
      });
    } catch (error) {
      // The unit operation is already gone; the request still succeeds, and the failure is logged.
      request.log.error({ err: error, unitOperationId: unitOperation.id }, 'the time series of a deleted unit operation could not be queued for deletion');
    }
  }
}

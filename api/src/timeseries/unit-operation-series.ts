/**
 * Deleting a unit operation deletes the readings it owns (unit-operations/owned-windows.ts): a queued
 * range deletion of its equipment's instruments over each part of its window that no other unit
 * operation on the equipment claims. A unit operation without a start owns nothing, so nothing of its
 * equipment is deleted for it.
 */
import type { FastifyRequest } from 'fastify';
import type { AppDeps } from '../platform/deps.ts';
import { principalOf } from '../auth/authenticate.ts';
import { ownedWindows, type WindowedUnitOperation } from '../unit-operations/owned-windows.ts';
import { instrumentsOfEquipment } from './instruments.ts';
import { queueRangeDeletion } from './routes.ts';

export async function queueUnitOperationSeriesDeletion(
  deps: AppDeps,
  request: FastifyRequest,
  unitOperations: readonly WindowedUnitOperation[],
): Promise<void> {
  const principal = principalOf(request);
  // Read once the rows are gone, so unit operations deleted together (a run's) do not shield each other.
  const nowMs = Date.now();
  for (const unitOperation of unitOperations) {
    if (unitOperation.equipment_id === null || unitOperation.start_time === null) continue;
    try {
      const instrumentIds = await instrumentsOfEquipment(deps.pg, unitOperation.organization_id, unitOperation.equipment_id);
      if (instrumentIds.length === 0) continue;
      for (const window of await ownedWindows(deps.pg, unitOperation, nowMs)) {
        await queueRangeDeletion(deps, { ...principal, organizationId: unitOperation.organization_id }, {
          instrumentIds, startMs: window.startMs, endMs: window.endMs, unitOperationId: unitOperation.id,
        });
      }
    } catch (error) {
      // The unit operation is already gone; the request still succeeds, and the failure is logged.
      request.log.error({ err: error, unitOperationId: unitOperation.id }, 'the time series of a deleted unit operation could not be queued for deletion');
    }
  }
}

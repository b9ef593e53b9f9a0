/**
 * What follows the removal of unit operation rows, wherever they are removed (a unit operation
 * deleted on its own, or the unit operations of a deleted run). Called after the transaction that
 * deleted the rows has committed, with the rows as they were, so work that lives outside PostgreSQL
 * (the audit trail, the unit operations' time series in ClickHouse) only follows a delete that
 * really happened.
 */
import type { FastifyRequest } from 'fastify';
import type { AppDeps } from '../platform/deps.ts';
import { emitAudit } from '../audit/emit.ts';
import { toUnitOperation, type UnitOperationRow } from './store.ts';
import { queueUnitOperationSeriesDeletion } from '../timeseries/unit-operation-series.ts';

export async function afterUnitOperationsDeleted(
  deps: AppDeps,
  request: FastifyRequest,
  deletedUnitOperations: readonly UnitOperationRow[],
): Promise<void> {
  for (const row of deletedUnitOperations) {
    emitAudit(deps, request, {
      event_type: 'data', action: 'delete', resource_type: 'unit_operation', resource_id: row.id,
      changes: { before: toUnitOperation(row), after: null },
    });
  }
  await queueUnitOperationSeriesDeletion(deps, request, deletedUnitOperations);
}

/**
 * What follows the removal of unit operation rows, wherever they are removed (a unit operation
 * deleted on its own, or the unit operations of a deleted run). Their audit events are recorded in
 * the transaction that deletes the rows; their time series in ClickHouse are queued for deletion
 * only once that transaction has committed, so work outside PostgreSQL only follows a delete that
 * really happened.
 */
import type { FastifyRequest } from 'fastify';
import type { PoolClient } from '@bioprocess/shared/server/postgres';
import type { AppDeps } from '../platform/deps.ts';
import { recordAudit } from '../audit/record.ts';
import type { UnitOperationRow } from '@bioprocess/shared/server/unit-operations-repository';
import { toUnitOperation } from './repository.ts';
import { queueUnitOperationSeriesDeletion } from '../timeseries/unit-operation-series.ts';

/** Inside the deleting transaction: one audit event per removed unit operation. */
export async function recordUnitOperationsDeleted(
  client: PoolClient,
  request: FastifyRequest,
  deletedUnitOperations: readonly UnitOperationRow[],
): Promise<void> {
  for (const row of deletedUnitOperations) {
    await recordAudit(client, request, {
      event_type: 'data', action: 'delete', resource_type: 'unit_operation', resource_id: row.id,
      changes: { before: toUnitOperation(row), after: null },
    });
  }
}

/** After the commit: the removed unit operations' time series. */
export async function afterUnitOperationsDeleted(
  deps: AppDeps,
  request: FastifyRequest,
  deletedUnitOperations: readonly UnitOperationRow[],
): Promise<void> {
  await queueUnitOperationSeriesDeletion(deps, request, deletedUnitOperations);
}

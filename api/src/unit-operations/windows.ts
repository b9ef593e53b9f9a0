/**
 * One piece of equipment runs one unit operation at a time: every write of a window (create, edit,
 * and the create that goes with an upload) locks the equipment row and refuses, with 409, a window
 * overlapping another unit operation's on the same equipment. The ingest-worker applies the same rule
 * when an upload gives a unit operation its window (shared/src/server/unit-operation-windows.ts).
 */
import { toIsoTimestamp, type UnitOperationCreate } from '@bioprocess/shared/entities';
import { overlapMessage } from '@bioprocess/shared/unit-operation-windows';
import { findOverlappingUnitOperation } from '@bioprocess/shared/server/unit-operations-repository';
import { lockEquipmentForWindows } from '@bioprocess/shared/server/unit-operation-windows';
import type { PoolClient } from '@bioprocess/shared/server/postgres';
import { conflict } from '../platform/http-error.ts';
import { requireRun } from '../runs/repository.ts';
import { requireEquipment } from '../equipment/repository.ts';
import { insertUnitOperationRow, type UnitOperationRow } from '@bioprocess/shared/server/unit-operations-repository';
import { mergeProperties } from './repository.ts';

/** Throws 409 when start..end overlaps another unit operation on the equipment; takes the equipment's lock. */
export async function refuseOverlap(
  client: PoolClient,
  window: { organizationId: number; equipmentId: number; startTime: string | null; endTime: string | null; excludeId?: number },
): Promise<void> {
  await lockEquipmentForWindows(client, window.organizationId, window.equipmentId);
  if (window.startTime === null) return;
  const other = await findOverlappingUnitOperation(client, {
    organizationId: window.organizationId,
    equipmentId: window.equipmentId,
    startMs: Date.parse(window.startTime),
    endMs: window.endTime === null ? null : Date.parse(window.endTime),
    excludeId: window.excludeId ?? null,
  });
  if (other) throw conflict(overlapMessage(other));
}

/** Inserts a unit operation after checking its run, its equipment and the one-at-a-time rule. */
export async function insertUnitOperation(client: PoolClient, organizationId: number, body: UnitOperationCreate): Promise<UnitOperationRow> {
  await requireRun(client, organizationId, body.run_id, { lock: 'share' });
  await requireEquipment(client, organizationId, body.equipment_id, { lock: 'update' });
  const startTime = toIsoTimestamp(body.start_time ?? null);
  const endTime = toIsoTimestamp(body.end_time ?? null);
  await refuseOverlap(client, { organizationId, equipmentId: body.equipment_id, startTime, endTime });
  return insertUnitOperationRow(client, organizationId, {
    run_id: body.run_id, type: body.type, equipment_id: body.equipment_id, start_time: startTime, end_time: endTime,
    properties: mergeProperties({}, body.properties),
  });
}

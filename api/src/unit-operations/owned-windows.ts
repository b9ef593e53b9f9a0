/**
 * The readings a unit operation owns: its equipment's instruments inside its window, minus any part
 * of that window another unit operation on the same equipment also claims (windows saved before the
 * one-at-a-time rule may overlap; deleting one of them must not take the other's readings). A unit
 * operation without a start owns nothing. Deletion, its dry run and a replacing upload all use this.
 */
import { effectiveWindow, subtractWindows, type TimeWindow } from '@bioprocess/shared/unit-operation-windows';
import { otherWindowsOnEquipment } from '@bioprocess/shared/server/unit-operations-repository';
import type { Pool } from '@bioprocess/shared/server/postgres';

export interface WindowedUnitOperation {
  id: number;
  organization_id: number;
  equipment_id: number | null;
  start_time: Date | null;
  end_time: Date | null;
}

export async function ownedWindows(pool: Pool, unitOperation: WindowedUnitOperation, nowMs = Date.now()): Promise<TimeWindow[]> {
  if (unitOperation.equipment_id === null) return [];
  const window = effectiveWindow(unitOperation.start_time?.getTime() ?? null, unitOperation.end_time?.getTime() ?? null, nowMs);
  if (!window) return [];
  const others = await otherWindowsOnEquipment(pool, {
    organizationId: unitOperation.organization_id, equipmentId: unitOperation.equipment_id, excludeId: unitOperation.id,
  }, nowMs);
  return subtractWindows(window, others);
}

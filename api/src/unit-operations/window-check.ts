/**
 * The upload wizard's first step asks whether the file fits before anything is mapped or sent: the
 * window the unit operation would hold after the upload (shared windowAfterUpload, the worker's rule)
 * and the other unit operation on the same equipment it would overlap, by name. The upload itself
 * checks again under the equipment's lock; this answer only spares the user a wizard that cannot end well.
 */
import { overlapMessage, UNIT_OPERATION_WINDOW_MESSAGES, windowAfterUpload, type WindowCheck } from '@bioprocess/shared/unit-operation-windows';
import { findOverlappingUnitOperation } from '@bioprocess/shared/server/unit-operations-repository';
import type { z } from 'zod';
import type { windowCheckQuerySchema } from '@bioprocess/shared/unit-operation-windows';
import type { AppDeps } from '../platform/deps.ts';
import { badRequest } from '../platform/http-error.ts';
import { requireEquipment } from '../equipment/repository.ts';
import { requireUnitOperation } from './repository.ts';

type WindowCheckQuery = z.infer<typeof windowCheckQuerySchema>;

const epochMs = (text: string | undefined | null): number | null => (text ? Date.parse(text) : null);

export async function checkUploadWindow(deps: AppDeps, organizationId: number, query: WindowCheckQuery): Promise<WindowCheck> {
  let equipmentId: number | null;
  let own: { startMs: number | null; endMs: number | null };
  let excludeId: number | null = null;
  if (query.unit_operation_id !== undefined) {
    const row = await requireUnitOperation(deps.pg, organizationId, query.unit_operation_id);
    equipmentId = row.equipment_id;
    own = { startMs: row.start_time?.getTime() ?? null, endMs: row.end_time?.getTime() ?? null };
    excludeId = row.id;
  } else {
    equipmentId = (await requireEquipment(deps.pg, organizationId, query.equipment_id!)).id;
    own = { startMs: epochMs(query.start_time), endMs: epochMs(query.end_time) };
    if (own.startMs !== null && own.endMs !== null && own.endMs < own.startMs) throw badRequest('end_time must be after start_time');
  }
  const window = windowAfterUpload(own, { firstMs: Date.parse(query.first_reading), lastMs: Date.parse(query.last_reading) }, query.close_open_end === 'true');
  const other = equipmentId === null ? null : await findOverlappingUnitOperation(deps.pg, {
    organizationId, equipmentId, startMs: window.startMs, endMs: window.endMs, excludeId,
  });
  return {
    window: { start_time: new Date(window.startMs).toISOString(), end_time: window.endMs === null ? null : new Date(window.endMs).toISOString() },
    conflict: other ? { unit_operation_id: other.id, message: UNIT_OPERATION_WINDOW_MESSAGES.overlapsOnUpload(overlapMessage(other)) } : null,
  };
}

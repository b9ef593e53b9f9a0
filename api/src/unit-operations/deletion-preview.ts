/** The dry run of a unit operation's deletion (or of an upload replacing some instruments' readings). */
import type { DeletionPreview } from '@bioprocess/shared/unit-operation-windows';
import type { AppDeps } from '../platform/deps.ts';
import { badRequest } from '../platform/http-error.ts';
import { countReadings } from '../timeseries/points-read.ts';
import { listInstrumentsOfEquipment } from '@bioprocess/shared/server/instruments-repository';
import { ownedWindows, type WindowedUnitOperation } from './owned-windows.ts';

export { deletionPreviewQuerySchema, deletionPreviewSchema } from '@bioprocess/shared/unit-operation-windows';

export async function deletionPreview(deps: AppDeps, unitOperation: WindowedUnitOperation, onlyInstrumentIds: number[] | null): Promise<DeletionPreview> {
  const instruments = unitOperation.equipment_id === null
    ? []
    : await listInstrumentsOfEquipment(deps.pg, unitOperation.organization_id, [unitOperation.equipment_id]);
  let chosen = instruments;
  if (onlyInstrumentIds) {
    const onEquipment = new Set(instruments.map((instrument) => instrument.id));
    const foreign = onlyInstrumentIds.find((id) => !onEquipment.has(id));
    if (foreign !== undefined) throw badRequest(`Instrument ${foreign} is not on this unit operation's equipment`);
    chosen = instruments.filter((instrument) => onlyInstrumentIds.includes(instrument.id));
  }
  const windows = await ownedWindows(deps.pg, unitOperation);
  const counts = await countReadings(deps.clickhouse, { organizationId: unitOperation.organization_id, instrumentIds: chosen.map((i) => i.id) }, windows);
  const perInstrument = chosen.map((instrument) => ({ instrument_id: instrument.id, name: instrument.name, readings: counts.get(instrument.id) ?? 0 }));
  return {
    unit_operation_id: unitOperation.id,
    ranges: windows.map((window) => ({ start_time: new Date(window.startMs).toISOString(), end_time: new Date(window.endMs).toISOString() })),
    instruments: perInstrument,
    total_readings: perInstrument.reduce((sum, instrument) => sum + instrument.readings, 0),
  };
}

/**
 * The unit operations an analysis reads: organisation-scoped lookups, their windows, and the
 * instrument each one gives for a parameter (an instrument type of its equipment, or an explicit
 * instrument that overrides it).
 */
import type pg from 'pg';
import { ANALYSIS_MESSAGES, type InstrumentOverride } from '@bioprocess/shared/analysis';
import type { InstrumentType } from '@bioprocess/shared/enums';
import { badRequest, notFound } from '../platform/http-error.ts';
import { listUnitOperationsWithRunName } from '@bioprocess/shared/server/unit-operations-repository';
import { UNIT_OPERATION_NOT_FOUND } from '../unit-operations/repository.ts';
import { firstInstrumentOfEachType, listInstrumentsById } from '@bioprocess/shared/server/instruments-repository';
import { INSTRUMENT_NOT_FOUND } from '../instruments/repository.ts';

export interface AnalysedUnitOperation {
  id: number;
  runId: number;
  runName: string;
  type: string;
  equipmentId: number | null;
  startMs: number | null;
  /** The end, or the moment of the request for a unit operation still running. */
  endMs: number;
}

/**
 * The unit operations of the organisation, in the order asked. An id of another organisation (or
 * none) is a 404 unless `skipMissing` (a saved golden batch whose reference was deleted since).
 */
export async function loadUnitOperations(
  db: pg.Pool,
  organizationId: number,
  ids: readonly number[],
  options: { skipMissing?: boolean; nowMs: number },
): Promise<AnalysedUnitOperation[]> {
  const unique = [...new Set(ids)];
  const rows = await listUnitOperationsWithRunName(db, organizationId, { ids: unique });
  if (rows.length !== unique.length && !options.skipMissing) throw notFound(UNIT_OPERATION_NOT_FOUND);
  const byId = new Map(rows.map((row) => [Number(row.id), row]));
  return unique.flatMap((id) => {
    const row = byId.get(id);
    if (!row) return [];
    return [{
      id,
      runId: Number(row.run_id),
      runName: row.run_name,
      type: row.type,
      equipmentId: row.equipment_id === null ? null : Number(row.equipment_id),
      startMs: row.start_time ? row.start_time.getTime() : null,
      endMs: row.end_time ? row.end_time.getTime() : options.nowMs,
    }];
  });
}

export function requireOneType(unitOperations: readonly AnalysedUnitOperation[]): string {
  const types = new Set(unitOperations.map((unitOperation) => unitOperation.type));
  if (types.size > 1) throw badRequest(ANALYSIS_MESSAGES.mixedTypes);
  const [type] = types;
  if (type === undefined) throw notFound(UNIT_OPERATION_NOT_FOUND);
  return type;
}

/** Per unit operation, the instrument of each type it reads (unit operation id -> type -> instrument id). */
export type InstrumentChoice = Map<number, Map<string, number>>;

export async function chooseInstruments(
  db: pg.Pool,
  organizationId: number,
  unitOperations: readonly AnalysedUnitOperation[],
  overrides: readonly InstrumentOverride[],
): Promise<InstrumentChoice> {
  const equipmentIds = [...new Set(unitOperations.flatMap((unitOperation) => unitOperation.equipmentId === null ? [] : [unitOperation.equipmentId]))];
  const rows = await firstInstrumentOfEachType(db, organizationId, equipmentIds);
  const byEquipment = new Map<number, Map<string, number>>();
  for (const row of rows) {
    const types = byEquipment.get(Number(row.equipment_id)) ?? new Map<string, number>();
    types.set(row.type, Number(row.id));
    byEquipment.set(Number(row.equipment_id), types);
  }
  const choice: InstrumentChoice = new Map(unitOperations.map((unitOperation) => [
    unitOperation.id, new Map(unitOperation.equipmentId === null ? [] : byEquipment.get(unitOperation.equipmentId) ?? []),
  ]));
  const relevant = overrides.filter((override) => choice.has(override.unit_operation_id));
  if (relevant.length > 0) {
    const instrumentIds = [...new Set(relevant.map((override) => override.instrument_id))];
    const found = await listInstrumentsById(db, organizationId, instrumentIds);
    if (found.length !== instrumentIds.length) throw notFound(INSTRUMENT_NOT_FOUND);
    const typeOf = new Map(found.map((row) => [Number(row.id), row.type]));
    for (const override of relevant) choice.get(override.unit_operation_id)!.set(typeOf.get(override.instrument_id)!, override.instrument_id);
  }
  return choice;
}

/** The instrument types at least `minimum` of the listed unit operations have an instrument for. */
export function typesSharedBy(choice: InstrumentChoice, unitOperationIds: readonly number[], minimum: number): Set<InstrumentType> {
  const counts = new Map<string, number>();
  for (const id of unitOperationIds) {
    for (const type of choice.get(id)?.keys() ?? []) counts.set(type, (counts.get(type) ?? 0) + 1);
  }
  return new Set([...counts].filter(([, count]) => count >= minimum).map(([type]) => type as InstrumentType));
}

/**
 * What a time-series export covers, resolved in PostgreSQL and always scoped by organisation: one
 * section per unit operation (its equipment's instruments within its window, clamped to the requested
 * range), or one section for a selection of instruments over a range. A foreign or unknown id is 404.
 */
import type { Pool } from '@bioprocess/shared/server/postgres';
import { instrumentColumnTitle, type TimeSeriesExportQuery } from '@bioprocess/shared/exports';
import { MAX_TIMESTAMP_MS, MIN_TIMESTAMP_MS, parseTimestampInput } from '@bioprocess/shared/timeseries';
import { notFound } from '../platform/http-error.ts';
import { listInstrumentsById, listInstrumentsOfEquipment } from '@bioprocess/shared/server/instruments-repository';
import { listUnitOperationsWithRunName, type UnitOperationWithRunName } from '@bioprocess/shared/server/unit-operations-repository';
import { UNIT_OPERATION_NOT_FOUND } from '../unit-operations/repository.ts';
import { ownedInstrumentIds } from '../timeseries/instruments.ts';
import { requireRun } from '../runs/repository.ts';

export interface ExportInstrument {
  id: number;
  name: string;
  unit: string | null;
  /** `name [unit]`, made unique within the export as the CSV upload names repeated headers. */
  title: string;
}

export interface ExportSection {
  unitOperation: { id: number; type: string; runId: number; runName: string } | null;
  instruments: ExportInstrument[];
  startMs: number;
  endMs: number;
  /** What `elapsed_s` counts from: the unit operation's start, else the start of the range. */
  originMs: number;
}

export interface ExportScope {
  resourceType: 'unit_operation' | 'run' | 'instrument';
  resourceId: number | null;
  sections: ExportSection[];
  instruments: ExportInstrument[];
}

function withUniqueTitles(instruments: Array<Omit<ExportInstrument, 'title'>>): ExportInstrument[] {
  const seen = new Map<string, number>();
  return instruments.map((instrument) => {
    const base = instrumentColumnTitle(instrument.name, instrument.unit);
    const count = (seen.get(base.toLowerCase()) ?? 0) + 1;
    seen.set(base.toLowerCase(), count);
    return { ...instrument, title: count === 1 ? base : `${base} (${count})` };
  });
}

export async function resolveExportScope(pool: Pool, organizationId: number, query: TimeSeriesExportQuery, nowMs: number): Promise<ExportScope> {
  const requestedStart = query.start_time === undefined ? null : parseTimestampInput(query.start_time);
  const requestedEnd = query.end_time === undefined ? null : parseTimestampInput(query.end_time);
  let filter: Set<number> | null = null;
  if (query.instrument_ids !== undefined) {
    const owned = await ownedInstrumentIds(pool, organizationId, query.instrument_ids);
    if (owned.size !== new Set(query.instrument_ids).size) throw notFound('Instrument not found');
    filter = owned;
  }

  if (query.unit_operation_id === undefined && query.run_id === undefined) {
    const rows = await listInstrumentsById(pool, organizationId, [...filter!]);
    const instruments = withUniqueTitles(rows.map((row) => ({ id: Number(row.id), name: row.name, unit: row.unit })));
    const startMs = requestedStart ?? MIN_TIMESTAMP_MS;
    const section: ExportSection = { unitOperation: null, instruments, startMs, endMs: requestedEnd ?? MAX_TIMESTAMP_MS, originMs: startMs };
    return { resourceType: 'instrument', resourceId: null, sections: [section], instruments };
  }

  let unitOperations: UnitOperationWithRunName[];
  if (query.unit_operation_id !== undefined) {
    unitOperations = await listUnitOperationsWithRunName(pool, organizationId, { ids: [query.unit_operation_id] });
    if (unitOperations.length === 0) throw notFound(UNIT_OPERATION_NOT_FOUND);
  } else {
    await requireRun(pool, organizationId, query.run_id!);
    unitOperations = await listUnitOperationsWithRunName(pool, organizationId, { runId: query.run_id! });
  }

  const equipmentIds = [...new Set(unitOperations.flatMap((row) => (row.equipment_id === null ? [] : [Number(row.equipment_id)])))];
  const instrumentRows = await listInstrumentsOfEquipment(pool, organizationId, equipmentIds);
  const instruments = withUniqueTitles(instrumentRows
    .filter((row) => filter === null || filter.has(Number(row.id)))
    .map((row) => ({ id: Number(row.id), name: row.name, unit: row.unit })));
  const byId = new Map(instruments.map((instrument) => [instrument.id, instrument]));

  const sections: ExportSection[] = [];
  for (const row of unitOperations) {
    // Without a start a unit operation owns no readings.
    if (row.start_time === null) continue;
    const windowStart = row.start_time.getTime();
    const windowEnd = row.end_time?.getTime() ?? nowMs;
    const startMs = Math.max(windowStart, requestedStart ?? windowStart);
    const endMs = Math.min(windowEnd, requestedEnd ?? windowEnd);
    const own = instrumentRows
      .filter((instrument) => Number(instrument.equipment_id) === Number(row.equipment_id) && byId.has(Number(instrument.id)))
      .map((instrument) => byId.get(Number(instrument.id))!);
    sections.push({
      unitOperation: { id: Number(row.id), type: row.type, runId: Number(row.run_id), runName: row.run_name },
      instruments: own,
      startMs,
      endMs,
      originMs: windowStart,
    });
  }
  return {
    resourceType: query.unit_operation_id !== undefined ? 'unit_operation' : 'run',
    resourceId: query.unit_operation_id ?? query.run_id ?? null,
    sections,
    instruments,
  };
}

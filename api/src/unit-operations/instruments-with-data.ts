/**
 * The instruments that hold readings in a unit operation's own window (owned-windows.ts), with their
 * counts and the first and last reading among them: what the console offers in a unit operation's
 * pickers, exports and formula references, and the span its chart is drawn over while the window is
 * open. Counted from the rollups where whole hours and minutes allow; only the first and last
 * period holding readings are read from the points themselves, to find the exact times.
 */
import type { InstrumentsWithData } from '@bioprocess/shared/unit-operation-windows';
import type { TimeWindow } from '@bioprocess/shared/unit-operation-windows';
import { HOUR_MS } from '@bioprocess/shared/points-sql';
import { listInstrumentsOfEquipment } from '@bioprocess/shared/server/instruments-repository';
import type { AppDeps } from '../platform/deps.ts';
import { coverParts, dedupedPoints, queryRows, windowsOn, type Span } from '../timeseries/points-read.ts';
import { ownedWindows, type WindowedUnitOperation } from './owned-windows.ts';

/** The parts of the owned windows inside one period (an hour from its start). */
function periodInWindows(periodStartMs: number, windows: readonly TimeWindow[]): Span[] {
  const periodEnd = periodStartMs + HOUR_MS - 1;
  return windows
    .filter((window) => window.startMs <= periodEnd && periodStartMs <= window.endMs)
    .map((window) => [Math.max(window.startMs, periodStartMs), Math.min(window.endMs, periodEnd)] as const);
}

async function exactReading(deps: AppDeps, organizationId: number, instrumentIds: number[], spans: Span[], which: 'min' | 'max'): Promise<number | null> {
  if (spans.length === 0) return null;
  const [row] = await queryRows<[string | number, string | number]>(deps.clickhouse, `
    SELECT ${which}(ts), count() FROM (${dedupedPoints(organizationId, windowsOn(instrumentIds, spans))}) WHERE d = 0`);
  return row && Number(row[1]) > 0 ? Number(row[0]) : null;
}

export async function instrumentsWithData(deps: AppDeps, unitOperation: WindowedUnitOperation): Promise<InstrumentsWithData> {
  const empty: InstrumentsWithData = { unit_operation_id: unitOperation.id, first_reading: null, last_reading: null, instruments: [] };
  if (unitOperation.equipment_id === null) return empty;
  const instruments = await listInstrumentsOfEquipment(deps.pg, unitOperation.organization_id, [unitOperation.equipment_id]);
  const windows = await ownedWindows(deps.pg, unitOperation);
  if (instruments.length === 0 || windows.length === 0) return empty;
  const parts = coverParts(unitOperation.organization_id, windowsOn(instruments.map((i) => i.id), windows.map((w) => [w.startMs, w.endMs])), {
    coarsest: 'hour', figures: ['p'],
  });
  const rows = await queryRows<[string | number, string | number, string | number, string | number]>(deps.clickhouse, `
    SELECT instrument_id, sum(p), min(t), max(t) FROM (${parts.join(' UNION ALL ')}) WHERE p > 0 GROUP BY instrument_id`);
  const byInstrument = new Map(rows.map(([id, readings, first, last]) => [Number(id), { readings: Number(readings), first: Number(first), last: Number(last) }]));
  const holding = instruments.filter((instrument) => (byInstrument.get(instrument.id)?.readings ?? 0) > 0);
  if (holding.length === 0) return empty;
  const ids = holding.map((instrument) => instrument.id);
  const firstPeriod = Math.min(...ids.map((id) => byInstrument.get(id)!.first));
  const lastPeriod = Math.max(...ids.map((id) => byInstrument.get(id)!.last));
  const [firstMs, lastMs] = await Promise.all([
    exactReading(deps, unitOperation.organization_id, ids, periodInWindows(firstPeriod, windows), 'min'),
    exactReading(deps, unitOperation.organization_id, ids, periodInWindows(lastPeriod, windows), 'max'),
  ]);
  return {
    unit_operation_id: unitOperation.id,
    first_reading: firstMs === null ? null : new Date(firstMs).toISOString(),
    last_reading: lastMs === null ? null : new Date(lastMs).toISOString(),
    instruments: holding.map((instrument) => ({ instrument_id: instrument.id, name: instrument.name, readings: byInstrument.get(instrument.id)!.readings })),
  };
}

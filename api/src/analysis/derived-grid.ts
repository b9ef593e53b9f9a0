/**
 * Derived parameters in Analyze: each unit operation's formula inputs are resolved on its equipment
 * (as for its derived series), resampled onto the analysis grid (the average of each input per grid
 * step), and the formula is evaluated there, one value per grid time. The envelope statistics over
 * the references are then computed here with the same definitions ClickHouse uses for instrument
 * parameters: linear interpolation between sorted values for percentiles, the sample deviation for sigma.
 */
import type pg from 'pg';
import type { Band, LeftOut } from '@bioprocess/shared/analysis';
import type { ClickHouseClient } from '@bioprocess/shared/server/clickhouse';
import { propertyValueOf } from '@bioprocess/shared/derived/properties';
import { badRequest, HttpError } from '../platform/http-error.ts';
import { listInstrumentsOfEquipment } from '@bioprocess/shared/server/instruments-repository';
import { unitOperationProperties } from '@bioprocess/shared/server/unit-operations-repository';
import { parseOrRefuse, resolveReferences } from '../derived/series.ts';
import { evaluate } from '../derived/evaluate.ts';
import { gridOrigin, resampledValues, type CellStatistics, type GridMember } from './resample.ts';
import type { AnalysedUnitOperation } from './unit-operations.ts';

export interface DerivedMember {
  unitOperation: AnalysedUnitOperation;
  timeZeroMs: number;
}

export interface DerivedGrid {
  /** unit operation id -> [grid index, value][] (ascending, finite values only) */
  values: Map<number, Array<[number, number]>>;
  /** Why a unit operation has no values: an input its equipment lacks, or a missing property. */
  leftOut: Map<number, LeftOut['reason']>;
}

/** The formula evaluated on the grid of each unit operation (references or targets). */
export async function derivedGridValues(
  deps: { pg: pg.Pool; clickhouse: ClickHouseClient },
  organizationId: number,
  expression: string,
  members: readonly DerivedMember[],
  stepMs: number,
): Promise<DerivedGrid> {
  const parsed = parseOrRefuse(expression);
  // Envelopes of sparse sample values need rules of their own (not built yet): refused, never drawn as gaps.
  if (parsed.samples.length > 0) throw badRequest('Analyze does not take formulas over samples yet: this formula reads sample analytes');
  const values = new Map<number, Array<[number, number]>>();
  const leftOut = new Map<number, LeftOut['reason']>();
  if (members.length === 0) return { values, leftOut };
  const equipmentIds = [...new Set(members.flatMap(({ unitOperation }) => (unitOperation.equipmentId === null ? [] : [unitOperation.equipmentId])))];
  const instruments = await listInstrumentsOfEquipment(deps.pg, organizationId, equipmentIds);
  const propertiesOf = await unitOperationProperties(deps.pg, organizationId, members.map(({ unitOperation }) => unitOperation.id));

  const gridMembers: GridMember[] = [];
  const ready: Array<{ member: DerivedMember; inputs: string[]; properties: Map<string, number | null> }> = [];
  for (const member of members) {
    const { unitOperation } = member;
    let inputIds: number[];
    try {
      const own = instruments.filter((instrument) => instrument.equipment_id === unitOperation.equipmentId);
      inputIds = resolveReferences(parsed.references, own).map((input) => input.instrument.id);
    } catch (error) {
      // An input the equipment lacks (or names twice) leaves this unit operation out, not the request.
      if (!(error instanceof HttpError)) throw error;
      leftOut.set(unitOperation.id, 'no_instrument');
      continue;
    }
    const properties = new Map<string, number | null>();
    for (const name of parsed.properties) properties.set(name, propertyValueOf(propertiesOf.get(unitOperation.id) ?? {}, name));
    if ([...properties.values()].some((value) => value === null)) {
      leftOut.set(unitOperation.id, 'no_property');
      continue;
    }
    gridMembers.push({
      unitOperationId: unitOperation.id, startMs: unitOperation.startMs!, endMs: unitOperation.endMs, timeZeroMs: member.timeZeroMs,
      instruments: inputIds.map((instrumentId, index): [number, number] => [instrumentId, index]),
    });
    ready.push({ member, inputs: parsed.references, properties });
  }

  const resampled = await resampledValues(deps.clickhouse, organizationId, gridMembers, stepMs);
  for (const { member, inputs, properties } of ready) {
    const id = member.unitOperation.id;
    const byInput = resampled.get(id) ?? new Map<number, Array<[number, number]>>();
    const cells = [...byInput.values()].flat().map(([cell]) => cell);
    if (cells.length === 0) continue;
    const first = Math.min(...cells);
    const length = Math.max(...cells) - first + 1;
    const origin = gridOrigin(member.timeZeroMs, stepMs);
    // Grid times as instants (the start of each step), so time-based functions see real time.
    const times = Float64Array.from({ length }, (_, index) => origin + (first + index) * stepMs);
    const references = new Map(inputs.map((reference, index) => {
      const column = new Float64Array(length).fill(Number.NaN);
      for (const [cell, value] of byInput.get(index) ?? []) column[cell - first] = value;
      return [reference, column];
    }));
    const evaluated = evaluate(parsed.tree, { times, references, properties });
    const series: Array<[number, number]> = [];
    evaluated.forEach((value, index) => { if (Number.isFinite(value)) series.push([first + index, value]); });
    values.set(id, series);
  }
  return { values, leftOut };
}

/** Linear interpolation between the sorted values at rank (n - 1) * level, as ClickHouse's quantiles. */
function percentile(sorted: readonly number[], level: number): number {
  const rank = (sorted.length - 1) * level;
  const below = Math.floor(rank);
  const above = Math.min(sorted.length - 1, below + 1);
  return sorted[below]! + (sorted[above]! - sorted[below]!) * (rank - below);
}

/** Per grid cell over the references' derived values: the same statistics as envelopeStatistics. */
export function derivedStatistics(values: ReadonlyMap<number, ReadonlyArray<[number, number]>>, parameterIndex: number, band: Band): CellStatistics[] {
  const byCell = new Map<number, Array<{ id: number; value: number }>>();
  for (const [id, series] of values) {
    for (const [cell, value] of series) {
      const entries = byCell.get(cell) ?? [];
      entries.push({ id, value });
      byCell.set(cell, entries);
    }
  }
  return [...byCell].sort(([a], [b]) => a - b).map(([cell, entries]) => {
    const sorted = entries.map((entry) => entry.value).sort((a, b) => a - b);
    const count = sorted.length;
    const mean = sorted.reduce((sum, value) => sum + value, 0) / count;
    const sigma = count < 2 ? null : Math.sqrt(Math.max(0, sorted.reduce((sum, value) => sum + (value - mean) ** 2, 0) / (count - 1)));
    const spread = band.kind === 'sigma' && sigma !== null ? band.k * sigma : null;
    // Values near the float limit can overflow a sum or a square: such a statistic is left empty
    // (null), never an infinity the response could not carry.
    const finite = (value: number | null) => (value !== null && Number.isFinite(value) ? value : null);
    const lower = band.kind === 'percentiles' ? percentile(sorted, band.lower / 100) : spread === null ? null : mean - spread;
    const upper = band.kind === 'percentiles' ? percentile(sorted, band.upper / 100) : spread === null ? null : mean + spread;
    return {
      parameterIndex,
      gridIndex: cell,
      count,
      median: finite(percentile(sorted, 0.5)),
      mean: finite(mean),
      lower: finite(upper) === null ? null : finite(lower),
      upper: finite(lower) === null ? null : finite(upper),
      min: sorted[0]!,
      max: sorted[count - 1]!,
      unitOperationIds: entries.map((entry) => entry.id),
      values: entries.map((entry) => entry.value),
    };
  });
}

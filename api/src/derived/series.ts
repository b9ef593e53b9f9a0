/**
 * Computes a derived series for one unit operation: resolves the formula's references to the
 * instruments of the unit operation's equipment, reads them on one common grid with the readings'
 * own downsampling rules, and evaluates the formula there.
 *
 * The grid: the inputs' own readings when there are few and they share their timestamps; otherwise
 * bucket averages of one width for every input (the coarsest input's sampling interval when raw
 * readings do not line up, so a 10 s analyser and a 1 s controller meet every 10 s). Gaps stay gaps.
 * Sample analytes are put on that grid by the formula's choice (interpolated or the last value); a
 * formula over samples alone is computed at the samples' drawn times.
 */
import type pg from 'pg';
import type { ClickHouseClient } from '@bioprocess/shared/server/clickhouse';
import { parseExpression, sampleReferenceText, type DerivedNode, type SampleReference } from '@bioprocess/shared/derived/expression';
import { propertyValueOf, UNIT_OPERATION_PROPERTIES, type UnitOperationPropertyName } from '@bioprocess/shared/derived/properties';
import type { DerivedSeries } from '@bioprocess/shared/derived/contracts';
import type { Reading } from '@bioprocess/shared/timeseries';
import { floorTo } from '@bioprocess/shared/points-sql';
import { badRequest } from '../platform/http-error.ts';
import { readSeries, seriesBucketWidth } from '../timeseries/read-series.ts';
import { requireWithinReadCaps } from '../timeseries/read-caps.ts';
import type { UnitOperationRow } from '@bioprocess/shared/server/unit-operations-repository';
import { listInstrumentsOfEquipment, type InstrumentRow } from '@bioprocess/shared/server/instruments-repository';
import { evaluate } from './evaluate.ts';
import { sampleValuesOn, type SampleValueMode } from '@bioprocess/shared/derived/sample-values';
import { resolveSampleInputs, type SampleInput } from './sample-inputs.ts';

export interface FormulaSource {
  id: number | null;
  version: number | null;
  name: string;
  unit: string | null;
  expression: string;
  sample_values: SampleValueMode;
}

type EquipmentInstrument = Pick<InstrumentRow, 'id' | 'name' | 'type' | 'alias'>;

export interface ResolvedInput {
  reference: string;
  instrument: EquipmentInstrument;
}

/** A bad formula answers 400 with the problem and its position (1-based in the message). */
export function parseOrRefuse(expression: string): { tree: DerivedNode; references: string[]; samples: SampleReference[]; properties: UnitOperationPropertyName[] } {
  const parsed = parseExpression(expression);
  if (!parsed.ok) throw badRequest(`Expression error at position ${parsed.error.position + 1}: ${parsed.error.message}`);
  return parsed;
}

/**
 * Each reference matched against the equipment's instruments: by alias, then name (both ignoring
 * case), then instrument type. Only instruments of this equipment, hence of this organisation, can match.
 */
export function resolveReferences(references: string[], instruments: EquipmentInstrument[]): ResolvedInput[] {
  return references.map((reference) => {
    const wanted = reference.toLowerCase();
    const levels = [
      instruments.filter((instrument) => instrument.alias?.toLowerCase() === wanted),
      instruments.filter((instrument) => instrument.name.toLowerCase() === wanted),
      instruments.filter((instrument) => instrument.type.toLowerCase() === wanted),
    ];
    const matches = levels.find((level) => level.length > 0) ?? [];
    if (matches.length === 0) {
      throw badRequest(`Unknown reference [${reference}]: the unit operation's equipment has no instrument with that alias, name or type`);
    }
    if (matches.length > 1) {
      const names = matches.map((instrument) => `"${instrument.name}"`).join(', ');
      throw badRequest(`Reference [${reference}] matches ${matches.length} instruments (${names}): refer to one by its name or alias`);
    }
    return { reference, instrument: matches[0]! };
  });
}

function medianInterval(times: number[]): number {
  if (times.length < 2) return 0;
  const gaps = times.slice(1).map((time, index) => time - times[index]!).sort((a, b) => a - b);
  return gaps[Math.floor(gaps.length / 2)]!;
}

interface Grid {
  times: Float64Array;
  bucketMs: number | null;
  series: Map<number, Float64Array>;
}

function gridOf(times: number[], readings: Reading[], instrumentIds: number[], bucketMs: number | null): Grid {
  const index = new Map(times.map((time, position) => [time, position]));
  const series = new Map(instrumentIds.map((id) => [id, new Float64Array(times.length).fill(Number.NaN)]));
  for (const reading of readings) {
    const position = index.get(Date.parse(reading.ts));
    const values = series.get(reading.instrument_id);
    if (position !== undefined && values && reading.value !== null) values[position] = reading.value;
  }
  return { times: Float64Array.from(times), bucketMs, series };
}

async function readGrid(
  clickhouse: ClickHouseClient,
  organizationId: number,
  instrumentIds: number[],
  window: { startMs: number; endMs: number; limit: number },
): Promise<Grid> {
  const request = { organizationId, instrumentIds, startMs: window.startMs, endMs: window.endMs, limit: window.limit };
  const first = await readSeries(clickhouse, { ...request, bucketMs: null });
  const bucketed = first.some((reading) => reading.min !== undefined);
  let readings = first;
  let width: number;
  if (bucketed) {
    width = seriesBucketWidth(window.startMs, window.endMs, window.limit, null);
  } else {
    const timesOf = (id: number) => first.filter((reading) => reading.instrument_id === id).map((reading) => Date.parse(reading.ts));
    const perInput = instrumentIds.map(timesOf);
    const shared = perInput.every((times) => times.length === perInput[0]!.length && times.every((time, i) => time === perInput[0]![i]));
    if (shared) {
      return gridOf(perInput[0] ?? [], first, instrumentIds, null);
    }
    const coarsest = Math.max(1, ...perInput.map(medianInterval));
    width = seriesBucketWidth(window.startMs, window.endMs, window.limit, coarsest);
    readings = await readSeries(clickhouse, { ...request, bucketMs: width });
  }
  const times: number[] = [];
  for (let time = floorTo(window.startMs, width); time <= window.endMs; time += width) times.push(time);
  return gridOf(times, readings, instrumentIds, width);
}

/** The drawn times of the samples a formula reads, within the window, each once and in order. */
function sampleTimes(inputs: readonly SampleInput[], startMs: number, endMs: number): Float64Array {
  const times = new Set<number>();
  for (const input of inputs) for (const point of input.points) if (point.t >= startMs && point.t <= endMs) times.add(point.t);
  return Float64Array.from([...times].sort((a, b) => a - b));
}

/** The derived series of a formula over the unit operation's window (clipped to the asked range). */
export async function computeDerivedSeries(
  deps: { pg: pg.Pool; clickhouse: ClickHouseClient },
  organizationId: number,
  unitOperation: UnitOperationRow,
  formula: FormulaSource,
  range: { startMs: number | null; endMs: number | null; limit: number },
): Promise<DerivedSeries> {
  const parsed = parseOrRefuse(formula.expression);
  const sampleInputs = await resolveSampleInputs(deps.pg, organizationId, unitOperation.id, parsed.samples);
  const empty: DerivedSeries = {
    derived_parameter_id: formula.id, version: formula.version, name: formula.name, unit: formula.unit,
    expression: formula.expression, inputs: [], bucket_ms: null, points: [], sample_values: formula.sample_values,
    sample_inputs: sampleInputs.map((input) => ({ reference: sampleReferenceText(input.reference), analyte: input.analyte, unit: input.unit, samples: input.points.length })),
  };
  // Without equipment or a start a unit operation has no readings of its own.
  const ownsReadings = unitOperation.equipment_id !== null && unitOperation.start_time !== null;
  if (!ownsReadings && parsed.references.length > 0) throw badRequest(`Unknown reference [${parsed.references[0]}]: the unit operation has no equipment or no start`);
  if (!ownsReadings && sampleInputs.length === 0) return empty;
  const inputs = ownsReadings ? resolveReferences(parsed.references, await listInstrumentsOfEquipment(deps.pg, organizationId, [unitOperation.equipment_id!])) : [];
  const properties = new Map<string, number | null>();
  for (const name of parsed.properties) {
    const value = propertyValueOf(unitOperation.properties, name);
    if (value === null) {
      throw badRequest(`The unit operation has no ${name} (${UNIT_OPERATION_PROPERTIES[name].label}, ${UNIT_OPERATION_PROPERTIES[name].unit}): set it on the unit operation`);
    }
    properties.set(name, value);
  }
  const withInputs = { ...empty, inputs: inputs.map((input) => ({ reference: input.reference, instrument_id: input.instrument.id, instrument_name: input.instrument.name })) };
  const ownStart = unitOperation.start_time?.getTime() ?? Number.NEGATIVE_INFINITY;
  const ownEnd = unitOperation.end_time?.getTime() ?? (unitOperation.start_time ? Date.now() : Number.POSITIVE_INFINITY);
  const startMs = Math.max(ownStart, range.startMs ?? ownStart);
  const endMs = Math.min(ownEnd, range.endMs ?? ownEnd);
  if (endMs < startMs || (inputs.length === 0 && sampleInputs.length === 0)) return withInputs;
  const onGrid = (times: Float64Array) => new Map(sampleInputs.map((input) => [input.reference.key, sampleValuesOn(times, input.points, formula.sample_values)]));
  const pointsOf = (times: Float64Array, values: Float64Array) => Array.from(times, (time, i) => ({
    ts: new Date(time).toISOString(),
    value: Number.isNaN(values[i]!) ? null : values[i]!,
  }));
  if (inputs.length === 0) {
    const times = sampleTimes(sampleInputs, startMs, endMs);
    const values = evaluate(parsed.tree, { times, references: new Map(), samples: onGrid(times), properties });
    return { ...withInputs, points: pointsOf(times, values) };
  }

  const instrumentIds = [...new Set(inputs.map((input) => input.instrument.id))];
  requireWithinReadCaps({ instruments: instrumentIds.length, limit: range.limit }, 'Use a formula with fewer inputs.');
  const grid = await readGrid(deps.clickhouse, organizationId, instrumentIds, { startMs, endMs, limit: range.limit });
  const references = new Map(inputs.map((input) => [input.reference, grid.series.get(input.instrument.id)!]));
  const values = evaluate(parsed.tree, { times: grid.times, references, samples: onGrid(grid.times), properties });
  return { ...withInputs, bucket_ms: grid.bucketMs, points: pointsOf(grid.times, values) };
}

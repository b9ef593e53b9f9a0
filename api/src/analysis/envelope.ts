/**
 * Golden-batch envelopes and the deviation of targets from them. References and targets are aligned
 * and resampled on one grid; the envelope statistics come from ClickHouse, the comparison of a
 * target's few thousand grid values with its envelope happens here.
 */
import {
  ANALYSIS_MESSAGES,
  DEFAULT_GRID_POINTS,
  FLAG_SCORE,
  MAX_ANSWER_VALUES,
  MIN_RECOMMENDED_REFERENCES,
  MAX_GRID_POINTS,
  MIN_CONTRIBUTING_RUNS,
  derivedParameterIdOf,
  sampleAnalyteOf,
  deviationReason,
  type Alignment,
  type AnalysisParameter,
  type Band,
  type Deviation,
  type Envelope,
  type EnvelopePoint,
  type Excursion,
  type InstrumentOverride,
  type LeftOut,
  type ParameterDeviation,
  type Tolerances,
} from '@bioprocess/shared/analysis';
import type { AppDeps } from '../platform/deps.ts';
import { badRequest } from '../platform/http-error.ts';
import pLimit from 'p-limit';
import { alignUnitOperations } from './alignment.ts';
import { cachedEnvelopeStatistics } from './envelope-cache.ts';
import { hourlyRollupsVersion } from '../timeseries/points-read.ts';
import { derivedGridValues, derivedStatistics, type DerivedGrid } from './derived-grid.ts';
import { sampleGridValues } from './sample-grid.ts';
import { requireDerivedParameter, type DerivedParameterRow } from '../derived/repository.ts';
import { envelopeStatistics, gridOrigin, resampledValues, type GridMember } from './resample.ts';
import { comparedBand, toleranceOf } from './tolerance.ts';
import {
  chooseInstruments, loadUnitOperations, requireOneType, typesSharedBy, type AnalysedUnitOperation, type InstrumentChoice,
} from './unit-operations.ts';

type Deps = Pick<AppDeps, 'pg' | 'clickhouse'>;

export interface EnvelopeDefinition {
  referenceIds: readonly number[];
  alignment: Alignment;
  gridStepSeconds: number | null;
  band: Band;
  showMinMax: boolean;
  overrides: readonly InstrumentOverride[];
  /** The least half-width of the band per parameter; a parameter left out takes its default from the references' noise. */
  tolerances: Tolerances;
  /** A saved golden batch tolerates references deleted since it was saved. */
  skipMissingReferences?: boolean;
  /** A saved golden batch keeps its statistics between requests (see envelope-cache.ts). */
  cacheStatistics?: boolean;
}

const MINUTE_S = 60;

/** About DEFAULT_GRID_POINTS steps over the longest window, in whole minutes once a step exceeds one. */
export function defaultGridStepSeconds(longestSpanMs: number): number {
  const seconds = Math.max(1, Math.ceil(longestSpanMs / 1000 / DEFAULT_GRID_POINTS));
  return seconds > MINUTE_S ? Math.ceil(seconds / MINUTE_S) * MINUTE_S : seconds;
}

interface Prepared {
  type: string;
  members: Map<number, AnalysedUnitOperation>;
  choice: InstrumentChoice;
  timeZeroMs: Map<number, number>;
  leftOut: Map<number, LeftOut>;
  stepMs: number;
  /** Grid times of the longest aligned unit operation: what one series holds at most. */
  gridTimes: number;
}

/** Loads, aligns and picks the grid step of references (and targets, aligned the same way). */
async function prepare(deps: Deps, organizationId: number, definition: EnvelopeDefinition, targetIds: readonly number[]): Promise<Prepared & { references: AnalysedUnitOperation[]; targets: AnalysedUnitOperation[] }> {
  const nowMs = Date.now();
  const references = await loadUnitOperations(deps.pg, organizationId, definition.referenceIds, { nowMs, skipMissing: definition.skipMissingReferences });
  const targets = await loadUnitOperations(deps.pg, organizationId, targetIds, { nowMs });
  const type = requireOneType(references);
  if (targets.some((target) => target.type !== type)) throw badRequest(ANALYSIS_MESSAGES.targetType);
  const everyone = [...references, ...targets];
  const choice = await chooseInstruments(deps.pg, organizationId, everyone, definition.overrides);
  const aligned = await alignUnitOperations(deps, organizationId, everyone, choice, definition.alignment);
  const alignedReferences = references.filter((reference) => aligned.timeZeroMs.has(reference.id));
  if (alignedReferences.length === 0 && references.every((reference) => reference.startMs === null)) throw badRequest(ANALYSIS_MESSAGES.noReferenceData);
  const longest = Math.max(0, ...alignedReferences.map((reference) => reference.endMs - reference.startMs!));
  const stepMs = (definition.gridStepSeconds ?? defaultGridStepSeconds(longest)) * 1000;
  const comparedTargets = targetsWithinReferences(targets, alignedReferences, aligned.timeZeroMs, stepMs);
  everyone.splice(references.length, targets.length, ...comparedTargets);
  let gridTimes = 0;
  for (const unitOperation of everyone) {
    const zero = aligned.timeZeroMs.get(unitOperation.id);
    if (zero === undefined) continue;
    const origin = gridOrigin(zero, stepMs);
    const cells = Math.floor((unitOperation.endMs - origin) / stepMs) - Math.floor((unitOperation.startMs! - origin) / stepMs) + 1;
    if (cells > MAX_GRID_POINTS) throw badRequest(ANALYSIS_MESSAGES.tooManyGridPoints);
    gridTimes = Math.max(gridTimes, cells);
  }
  return {
    type,
    references,
    targets: comparedTargets,
    members: new Map(everyone.map((unitOperation) => [unitOperation.id, unitOperation])),
    choice,
    timeZeroMs: aligned.timeZeroMs,
    leftOut: new Map(aligned.leftOut.map((entry) => [entry.unit_operation_id, entry])),
    stepMs,
    gridTimes,
  };
}

/**
 * Each target's window cut to the grid times the references cover: beyond them there is no band to
 * compare with, and a target left open for months (or started long before its event) would
 * otherwise ask for more grid times than an answer may hold, and fail although its comparable part
 * is small.
 */
function targetsWithinReferences(
  targets: readonly AnalysedUnitOperation[], references: readonly AnalysedUnitOperation[], timeZeroMs: ReadonlyMap<number, number>, stepMs: number,
): AnalysedUnitOperation[] {
  let first = Infinity;
  let last = -Infinity;
  for (const reference of references) {
    const origin = gridOrigin(timeZeroMs.get(reference.id)!, stepMs);
    first = Math.min(first, Math.floor((reference.startMs! - origin) / stepMs));
    last = Math.max(last, Math.floor((reference.endMs - origin) / stepMs));
  }
  if (!Number.isFinite(first)) return [...targets];
  return targets.map((target) => {
    const zero = timeZeroMs.get(target.id);
    if (zero === undefined || target.startMs === null) return target;
    const origin = gridOrigin(zero, stepMs);
    const startMs = Math.max(target.startMs, origin + first * stepMs);
    const endMs = Math.max(startMs, Math.min(target.endMs, origin + (last + 1) * stepMs - 1));
    return { ...target, startMs, endMs };
  });
}

function gridMembers(prepared: Prepared, unitOperations: readonly AnalysedUnitOperation[], parameters: readonly AnalysisParameter[]): GridMember[] {
  return unitOperations.flatMap((unitOperation) => {
    const timeZeroMs = prepared.timeZeroMs.get(unitOperation.id);
    if (timeZeroMs === undefined) return [];
    const instruments = parameters.flatMap((parameter, index): Array<[number, number]> => {
      const instrumentId = prepared.choice.get(unitOperation.id)?.get(parameter);
      return instrumentId === undefined ? [] : [[instrumentId, index]];
    });
    return [{ unitOperationId: unitOperation.id, startMs: unitOperation.startMs!, endMs: unitOperation.endMs, timeZeroMs, instruments }];
  });
}

const iso = (ms: number) => new Date(ms).toISOString();

/** Parameters whose statistics are computed at once (the machine has two cores). */
const STATISTICS_CONCURRENCY = 2;

/** The derived parameters among the parameters, each the organisation's (else 404). */
async function derivedFormulas(deps: Deps, organizationId: number, parameters: readonly AnalysisParameter[]): Promise<Map<AnalysisParameter, DerivedParameterRow>> {
  const formulas = new Map<AnalysisParameter, DerivedParameterRow>();
  for (const parameter of parameters) {
    const id = derivedParameterIdOf(parameter);
    if (id !== null && !formulas.has(parameter)) formulas.set(parameter, await requireDerivedParameter(deps.pg, organizationId, id));
  }
  return formulas;
}

/**
 * The parameters computed here rather than read as instrument readings, on the grid of the aligned
 * unit operations (by parameter): each derived parameter evaluated, each sample analyte interpolated.
 */
async function derivedGrids(
  deps: Deps, organizationId: number, prepared: Prepared, unitOperations: readonly AnalysedUnitOperation[], formulas: ReadonlyMap<AnalysisParameter, DerivedParameterRow>,
  parameters: readonly AnalysisParameter[],
): Promise<Map<AnalysisParameter, DerivedGrid>> {
  const members = unitOperations.flatMap((unitOperation) => {
    const timeZeroMs = prepared.timeZeroMs.get(unitOperation.id);
    return timeZeroMs === undefined ? [] : [{ unitOperation, timeZeroMs }];
  });
  const grids = new Map<AnalysisParameter, DerivedGrid>();
  for (const [parameter, formula] of formulas) {
    grids.set(parameter, await derivedGridValues(deps, organizationId, formula.expression, members, prepared.stepMs));
  }
  for (const parameter of parameters) {
    const analyte = sampleAnalyteOf(parameter);
    if (analyte !== null && !grids.has(parameter)) grids.set(parameter, await sampleGridValues(deps.pg, organizationId, analyte, members, prepared.stepMs));
  }
  return grids;
}

async function buildEnvelopes(
  deps: Deps,
  organizationId: number,
  definition: EnvelopeDefinition,
  prepared: Prepared & { references: AnalysedUnitOperation[] },
  parameters: readonly AnalysisParameter[],
  formulas: ReadonlyMap<AnalysisParameter, DerivedParameterRow>,
): Promise<Envelope[]> {
  const members = gridMembers(prepared, prepared.references, parameters);
  const limit = pLimit(STATISTICS_CONCURRENCY);
  const version = definition.cacheStatistics
    ? await hourlyRollupsVersion(deps.clickhouse, organizationId, members.flatMap((member) => member.instruments.map(([instrument]) => instrument)))
    : '';
  // One query (and one kept entry) per parameter: each stays well inside the query time limit on a
  // busy machine, and a batch whose statistics were only partly computed keeps the parameters done.
  const statisticsOf = (index: number) => {
    const own = members.map((member) => ({ ...member, instruments: member.instruments.filter(([, parameterIndex]) => parameterIndex === index) }))
      .filter((member) => member.instruments.length > 0);
    if (own.length === 0) return Promise.resolve([]);
    const compute = () => envelopeStatistics(deps.clickhouse, organizationId, own, prepared.stepMs, definition.band);
    return definition.cacheStatistics
      ? cachedEnvelopeStatistics(deps.clickhouse, organizationId, own, prepared.stepMs, definition.band, version, compute)
      : compute();
  };
  const [instrumentStatistics, grids] = await Promise.all([
    Promise.all(parameters.map((_, index) => limit(() => statisticsOf(index)))).then((parts) => parts.flat()),
    derivedGrids(deps, organizationId, prepared, prepared.references, formulas, parameters),
  ]);
  const statistics = [
    ...instrumentStatistics,
    ...parameters.flatMap((parameter, index) => { const grid = grids.get(parameter); return grid ? derivedStatistics(grid.values, index, definition.band) : []; }),
  ];
  const contributed = new Set(statistics.flatMap((cell) => cell.unitOperationIds.map((id) => `${id}:${cell.parameterIndex}`)));
  return parameters.map((parameter, index) => {
    const formula = formulas.get(parameter);
    const grid = grids.get(parameter);
    const leftOut: LeftOut[] = [];
    const references: Envelope['references'] = [];
    for (const reference of prepared.references) {
      const missing = prepared.leftOut.get(reference.id);
      const instrumentId = grid ? null : prepared.choice.get(reference.id)?.get(parameter);
      const derivedMissing = grid?.leftOut.get(reference.id);
      if (missing) leftOut.push(missing);
      else if (instrumentId === undefined) leftOut.push({ unit_operation_id: reference.id, reason: 'no_instrument' });
      else if (derivedMissing) leftOut.push({ unit_operation_id: reference.id, reason: derivedMissing });
      else if (!contributed.has(`${reference.id}:${index}`)) leftOut.push({ unit_operation_id: reference.id, reason: 'no_data' });
      else references.push({ unit_operation_id: reference.id, run_id: reference.runId, run_name: reference.runName, instrument_id: instrumentId, time_zero: iso(prepared.timeZeroMs.get(reference.id)!) });
    }
    const cells = statistics.filter((cell) => cell.parameterIndex === index);
    const tolerance = toleranceOf(cells, definition.band, definition.tolerances[parameter]);
    const points: EnvelopePoint[] = cells.map((cell) => {
      const compared = comparedBand(cell, definition.band, tolerance.value);
      return {
      t: (cell.gridIndex * prepared.stepMs) / 1000,
      median: cell.median,
      mean: cell.mean,
      lower: cell.lower,
      upper: cell.upper,
      min: definition.showMinMax ? cell.min : null,
      max: definition.showMinMax ? cell.max : null,
      count: cell.count,
      compared_lower: compared.lower,
      compared_upper: compared.upper,
      };
    });
    return {
      parameter,
      derived_parameter: formula ? { id: Number(formula.id), name: formula.name, unit: formula.unit, version: Number(formula.version) } : null,
      unit_operation_type: prepared.type, grid_step_seconds: prepared.stepMs / 1000,
      band: definition.band, alignment: definition.alignment, references, left_out: leftOut, tolerance,
      warnings: references.length < MIN_RECOMMENDED_REFERENCES ? [ANALYSIS_MESSAGES.fewReferences(references.length)] : [],
      points,
    };
  });
}

export async function envelopeOf(deps: Deps, organizationId: number, definition: EnvelopeDefinition, parameter: AnalysisParameter): Promise<Envelope> {
  const formulas = await derivedFormulas(deps, organizationId, [parameter]);
  const prepared = await prepare(deps, organizationId, definition, []);
  const [envelope] = await buildEnvelopes(deps, organizationId, definition, prepared, [parameter], formulas);
  return envelope!;
}

type Comparison = Omit<ParameterDeviation, 'parameter' | 'instrument_id' | 'series' | 'reason'>;

/**
 * A target's grid values against the compared band. The score is the area outside the band: at each
 * grid time outside, the distance beyond the bound in widths of the band there, times the step in
 * hours. A far and long excursion scores high; a brush with the bound, or a moment of noise, stays
 * near zero however often it happens.
 */
function compare(series: ReadonlyArray<[number, number]>, points: readonly EnvelopePoint[], stepMs: number): Comparison {
  const envelopeAt = new Map(points.filter((point) => point.count >= MIN_CONTRIBUTING_RUNS && point.compared_lower !== null && point.compared_upper !== null)
    .map((point) => [Math.round((point.t * 1000) / stepMs), point]));
  const stepHours = stepMs / 3_600_000;
  let compared = 0;
  let outside = 0;
  let score = 0;
  let first: Excursion | null = null;
  let largest: Excursion | null = null;
  let stretch: { from: number; to: number } | null = null;
  let longest: { from: number; to: number } | null = null;
  for (const [gridIndex, value] of series) {
    const point = envelopeAt.get(gridIndex);
    if (!point) continue;
    compared += 1;
    const lower = point.compared_lower!;
    const upper = point.compared_upper!;
    const below = value < lower;
    const above = value > upper;
    if (!below && !above) continue;
    outside += 1;
    const distance = below ? lower - value : value - upper;
    // The tolerance keeps the width above zero; a band of none (a tolerance of zero cannot be set) counts as one unit.
    const bandWidths = distance / (upper - lower > 0 ? upper - lower : 1);
    score += bandWidths * stepHours;
    const excursion: Excursion = { t: point.t, value, bound: below ? 'lower' : 'upper', bound_value: below ? lower : upper, distance, band_widths: bandWidths };
    first ??= excursion;
    if (!largest || excursion.band_widths > largest.band_widths) largest = excursion;
    stretch = stretch && stretch.to === gridIndex - 1 ? { from: stretch.from, to: gridIndex } : { from: gridIndex, to: gridIndex };
    if (!longest || stretch.to - stretch.from > longest.to - longest.from) longest = stretch;
  }
  const stepSeconds = stepMs / 1000;
  return {
    compared, outside, share_outside: compared === 0 ? null : outside / compared, first_excursion: first, largest_excursion: largest,
    hours_outside: outside * stepHours,
    longest_excursion: longest === null ? null : { from_t: longest.from * stepSeconds, to_t: (longest.to + 1) * stepSeconds, hours: (longest.to - longest.from + 1) * stepHours },
    score,
    flagged: score >= FLAG_SCORE,
  };
}

export async function deviationOf(
  deps: Deps,
  organizationId: number,
  definition: EnvelopeDefinition,
  wanted: readonly AnalysisParameter[] | 'all',
  targetIds: readonly number[],
): Promise<Deviation> {
  const formulas = await derivedFormulas(deps, organizationId, wanted === 'all' ? [] : wanted);
  const prepared = await prepare(deps, organizationId, definition, targetIds);
  const alignedTargets = prepared.targets.filter((target) => prepared.timeZeroMs.has(target.id));
  const parameters = wanted === 'all'
    ? [...typesSharedBy(prepared.choice, prepared.references.filter((reference) => prepared.timeZeroMs.has(reference.id)).map((reference) => reference.id), MIN_CONTRIBUTING_RUNS)]
      .filter((type) => alignedTargets.some((target) => prepared.choice.get(target.id)?.has(type))).sort()
    : [...wanted];
  // Checked before any statistics are read: the answer holds an envelope and each target's series per parameter.
  const series = 1 + alignedTargets.length;
  if (prepared.gridTimes * parameters.length * series > MAX_ANSWER_VALUES) {
    throw badRequest(ANALYSIS_MESSAGES.tooManyValues(prepared.gridTimes, parameters.length, series));
  }
  const [envelopes, targetValues, targetGrids] = await Promise.all([
    buildEnvelopes(deps, organizationId, definition, prepared, parameters, formulas),
    resampledValues(deps.clickhouse, organizationId, gridMembers(prepared, alignedTargets, parameters), prepared.stepMs),
    derivedGrids(deps, organizationId, prepared, alignedTargets, formulas, parameters),
  ]);
  const targets: Deviation['targets'] = alignedTargets.map((target) => ({
    unit_operation_id: target.id,
    run_id: target.runId,
    run_name: target.runName,
    time_zero: iso(prepared.timeZeroMs.get(target.id)!),
    parameters: parameters.flatMap((parameter, index) => {
      const grid = targetGrids.get(parameter);
      const instrumentId = grid ? null : prepared.choice.get(target.id)?.get(parameter);
      if (instrumentId === undefined || grid?.leftOut.has(target.id)) return [];
      const series = (grid ? grid.values.get(target.id) : targetValues.get(target.id)?.get(index)) ?? [];
      const comparison = compare(series, envelopes[index]!.points, prepared.stepMs);
      return [{
        parameter, instrument_id: instrumentId,
        ...comparison,
        reason: deviationReason(comparison),
        series: series.map(([gridIndex, value]): [number, number] => [(gridIndex * prepared.stepMs) / 1000, value]),
      }];
    }),
  }));
  const ranking = targets.flatMap((target) => target.parameters.map((deviation) => ({ target, deviation })))
    .sort((a, b) => b.deviation.score - a.deviation.score
      || (b.deviation.largest_excursion?.band_widths ?? 0) - (a.deviation.largest_excursion?.band_widths ?? 0)
      || (b.deviation.compared > 0 ? 1 : 0) - (a.deviation.compared > 0 ? 1 : 0))
    .map(({ target, deviation }) => ({
      parameter: deviation.parameter, unit_operation_id: target.unit_operation_id, share_outside: deviation.share_outside,
      score: deviation.score, flagged: deviation.flagged, reason: deviation.reason,
    }));
  const comparedEnvelopes = envelopes.filter((envelope) => envelope.references.length > 0);
  const fewestReferences = comparedEnvelopes.length === 0 ? 0 : Math.min(...comparedEnvelopes.map((envelope) => envelope.references.length));
  return {
    unit_operation_type: prepared.type,
    grid_step_seconds: prepared.stepMs / 1000,
    band: definition.band,
    alignment: definition.alignment,
    envelopes,
    targets,
    targets_left_out: prepared.targets.flatMap((target) => { const entry = prepared.leftOut.get(target.id); return entry ? [entry] : []; }),
    references: fewestReferences,
    warnings: fewestReferences < MIN_RECOMMENDED_REFERENCES ? [ANALYSIS_MESSAGES.fewReferences(fewestReferences)] : [],
    flag_score: FLAG_SCORE,
    ranking,
  };
}

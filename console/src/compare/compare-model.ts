/**
 * The pure logic of Compare runs: unit-operation types as tabs, run search, the
 * parameters of the selected runs grouped by type and unit, one series per run and parameter in the
 * run's colour, and the comments of the selected runs on the same minute axis.
 */
import { UNIT_OPERATION_TYPES } from '@bioprocess/shared/enums';
import { paletteColor, MINUTE_MS, SMALL_MULTIPLES_MIN_SERIES } from '../charts/chart-constants.ts';
import {
  DASH_STYLES, dashStyleAt, parameterLabel, rangeEndMs, readingsToPoints, seriesStyle, type ChartPoint, type ChartSeries, type DashStyle, type Reading,
} from '../charts/series-model.ts';
import { commentMinute, toEpochMs } from '../charts/time-axis.ts';
import { authorLabel, sortByMinute, type ApiComment } from '../unit-operations/comments-model.ts';

export const COMPARE_MESSAGES = {
  title: 'Compare runs',
  selectRuns: 'Select runs to compare',
  searchPlaceholder: 'Search runs by name, ID, strain, description...',
  noRuns: 'No runs found.',
  noParameters: 'Select runs to see available parameters.',
  chartTitle: 'Overlayed Time Series',
  loading: 'Loading...',
  loadingComments: 'Loading comments...',
  noUnitOperations: 'No unit operations found across runs.',
  fetchFailed: 'Failed to fetch runs or unit operations.',
  seriesFailed: 'Failed to fetch time series data.',
} as const;

export function selectedCountLabel(count: number): string {
  return `${count} run(s) selected`;
}

export function commentsHeading(type: string): string {
  return `Comments and annotations for the selected runs and ${typeLabel(type)} unit operation`;
}

export function noCommentsMessage(type: string): string {
  return `No comments found for the selected runs and ${typeLabel(type)} unit operation.`;
}

/** Underscores shown as spaces (the tab labels). */
export function typeLabel(type: string): string {
  return type.replace(/_/g, ' ');
}

export interface CompareRun {
  id: number;
  name: string | null;
  strain?: string | null;
  description?: string | null;
  startTime?: string | null;
  endTime?: string | null;
}

export interface CompareUnitOperation {
  id: number;
  runId: number;
  type: string;
  equipmentId: number | null;
  startTime: string | null;
  endTime: string | null;
}

export interface CompareInstrument {
  id: number;
  equipmentId: number;
  type: string;
  unit: string | null;
  name?: string;
  /** The instrument's choice to be drawn as steps (setpoints, values logged on change). */
  drawAsSteps?: boolean;
}

export function runLabel(run: Pick<CompareRun, 'id' | 'name'>): string {
  return run.name && run.name.trim() ? run.name : `Run ${run.id}`;
}

/** The types found across all runs, in the order of UNIT_OPERATION_TYPES (unknown types last, by name). */
export function unitOperationTypesOf(operations: readonly Pick<CompareUnitOperation, 'type'>[]): string[] {
  const found = new Set(operations.map((o) => o.type));
  const known = UNIT_OPERATION_TYPES.filter((type) => found.has(type));
  const unknown = [...found].filter((type) => !(UNIT_OPERATION_TYPES as readonly string[]).includes(type)).sort();
  return [...known, ...unknown];
}

/** Runs that have a unit operation of the type, in the runs' order. */
export function runsWithType<R extends CompareRun>(runs: readonly R[], operations: readonly CompareUnitOperation[], type: string): R[] {
  const runIds = new Set(operations.filter((o) => o.type === type).map((o) => o.runId));
  return runs.filter((run) => runIds.has(run.id));
}

/** The search box: a case-insensitive substring of name, id, strain or description. */
export function searchRuns<R extends CompareRun>(runs: readonly R[], query: string): R[] {
  const needle = query.trim().toLowerCase();
  if (!needle) return [...runs];
  return runs.filter((run) => [run.name, String(run.id), run.strain, run.description]
    .some((field) => typeof field === 'string' && field.toLowerCase().includes(needle)));
}

/** The run's unit operation of a type: the earliest started one when a run repeats the step. */
export function operationOfRun(operations: readonly CompareUnitOperation[], runId: number, type: string): CompareUnitOperation | null {
  const matches = operations.filter((o) => o.runId === runId && o.type === type);
  matches.sort((a, b) => (toEpochMs(a.startTime ?? '') || Infinity) - (toEpochMs(b.startTime ?? '') || Infinity) || a.id - b.id);
  return matches[0] ?? null;
}

export interface ParameterGroup {
  /** `${type}|${unit}`: the same measurement on different equipment is one parameter. */
  key: string;
  type: string;
  unit: string | null;
  label: string;
}

export function parameterKey(type: string, unit: string | null): string {
  return `${type}|${unit ?? ''}`;
}

/** Parameters grouped by instrument type and unit, sorted by type then unit. */
export function parameterGroups(instruments: readonly CompareInstrument[]): ParameterGroup[] {
  const groups = new Map<string, ParameterGroup>();
  for (const instrument of instruments) {
    const key = parameterKey(instrument.type, instrument.unit);
    if (!groups.has(key)) groups.set(key, { key, type: instrument.type, unit: instrument.unit, label: parameterLabel(instrument.type, instrument.unit) });
  }
  return [...groups.values()].sort((a, b) => a.type.localeCompare(b.type) || (a.unit ?? '').localeCompare(b.unit ?? ''));
}

/**
 * The parameter shown before the user picks one: the first (in the chooser's order) that every
 * selected run measured, else the first any run measured; null without parameters.
 */
export function firstSharedParameter(groups: readonly ParameterGroup[], instrumentsPerRun: ReadonlyArray<readonly CompareInstrument[]>): string | null {
  const shared = groups.find((group) => instrumentsPerRun.length > 0
    && instrumentsPerRun.every((instruments) => instruments.some((i) => parameterKey(i.type, i.unit) === group.key)));
  return (shared ?? groups[0])?.key ?? null;
}

/** One colour per selected run, in selection order, cycling through the palette. */
export function runColors(selectedRunIds: readonly number[]): Map<number, string> {
  return new Map(selectedRunIds.map((id, index) => [id, paletteColor(index)]));
}

export interface RunSeriesInput {
  run: CompareRun;
  operation: CompareUnitOperation;
  /** Instruments of the operation's equipment. */
  instruments: readonly CompareInstrument[];
  readings: readonly Reading[];
  /**
   * Minute 0 of this run when it is aligned on an event or a threshold crossing (epoch ms); left
   * out, the run's own anchor (its start) is minute 0.
   */
  timeZeroMs?: number;
}

/**
 * The x anchor of a run: its unit operation's start, or when it has none the earliest reading.
 * Null when there is neither.
 */
export function anchorMs(operation: Pick<CompareUnitOperation, 'startTime'>, readings: readonly Reading[]): number | null {
  const start = toEpochMs(operation.startTime ?? null);
  if (!Number.isNaN(start)) return start;
  let earliest = Number.POSITIVE_INFINITY;
  for (const reading of readings) {
    const ms = toEpochMs(reading.ts);
    if (!Number.isNaN(ms) && ms < earliest) earliest = ms;
  }
  return Number.isFinite(earliest) ? earliest : null;
}

/**
 * Readings inside a window as [whole minutes since time zero, value], sorted: before an event the
 * minutes are negative, so runs line up on the event rather than on their starts.
 */
export function pointsSinceTimeZero(readings: readonly Pick<Reading, 'ts' | 'value'>[], windowStartMs: number, windowEndMs: number, timeZeroMs: number): ChartPoint[] {
  const shift = (windowStartMs - timeZeroMs) / MINUTE_MS;
  return readingsToPoints(readings.map((reading) => ({ ...reading, instrumentId: 0 })), windowStartMs, windowEndMs)
    .map(([minute, value]): ChartPoint => [Math.round(minute + shift), value]);
}

/**
 * One series per run and chosen parameter, named 'run name - instrument name': points inside the
 * operation's start..end (now when open), x as whole minutes since the run's time zero (its anchor
 * unless aligned), the run's colour, and the parameter's dash style and point style so two
 * parameters of one run stay distinguishable.
 */
export function buildCompareSeries(inputs: readonly RunSeriesInput[], selectedKeys: readonly string[], colors: ReadonlyMap<number, string>, nowMs = Date.now()): ChartSeries[] {
  const series: ChartSeries[] = [];
  inputs.forEach((input, runIndex) => {
    const start = anchorMs(input.operation, input.readings);
    if (start === null) return;
    const end = rangeEndMs(input.operation.endTime, nowMs);
    const timeZero = input.timeZeroMs ?? start;
    selectedKeys.forEach((key, parameterIndex) => {
      const instrumentIds = new Set(input.instruments.filter((i) => parameterKey(i.type, i.unit) === key).map((i) => i.id));
      if (instrumentIds.size === 0) return;
      const instrument = input.instruments.find((i) => instrumentIds.has(i.id))!;
      const points = pointsSinceTimeZero(input.readings.filter((r) => instrumentIds.has(r.instrumentId)), start, end, timeZero);
      const style = seriesStyle(runIndex, parameterIndex);
      series.push({
        id: `run-${input.run.id}-${key}`,
        name: `${runLabel(input.run)} - ${instrument.name ?? parameterLabel(instrument.type, instrument.unit)}`,
        detail: parameterLabel(instrument.type, instrument.unit),
        unit: instrument.unit,
        color: colors.get(input.run.id) ?? style.color,
        symbol: style.symbol,
        opacity: 1,
        dashStyle: dashStyleAt(parameterIndex),
        step: instrument.drawAsSteps ?? false,
        parameter: { key, label: parameterLabel(instrument.type, instrument.unit) },
        data: points,
      });
    });
  });
  return series;
}

export interface CompareDerived {
  id: number;
  name: string;
  unit: string | null;
}

export interface DerivedSeriesInput {
  run: CompareRun;
  operation: CompareUnitOperation;
  derived: CompareDerived;
  /** The server's computed values (camelCased); a null value is a gap. */
  points: ReadonlyArray<{ ts: string; value: number | null }>;
  timeZeroMs?: number;
}

/** A derived parameter is always dashed, as on the unit-operation chart: the dash styles after 'Solid'. */
export function derivedDashStyle(index: number): DashStyle {
  return DASH_STYLES[1 + (index % (DASH_STYLES.length - 1))]!;
}

/**
 * One dashed series per run and chosen derived parameter, in the run's colour, on the same minute
 * axis as the instrument series; `firstIndex` continues the point styles after the instruments'.
 */
export function buildDerivedCompareSeries(inputs: readonly DerivedSeriesInput[], derivedIds: readonly number[], colors: ReadonlyMap<number, string>, firstIndex: number, nowMs = Date.now()): ChartSeries[] {
  const runOrder = [...new Set(inputs.map((input) => input.run.id))];
  return inputs.flatMap((input) => {
    const derivedIndex = derivedIds.indexOf(input.derived.id);
    const start = anchorMs(input.operation, []);
    if (derivedIndex < 0 || start === null) return [];
    const style = seriesStyle(runOrder.indexOf(input.run.id), firstIndex + derivedIndex);
    return [{
      id: `run-${input.run.id}-derived-${input.derived.id}`,
      name: `${runLabel(input.run)} - ${input.derived.name}`,
      detail: input.derived.unit ? `derived [${input.derived.unit}]` : 'derived',
      unit: input.derived.unit,
      color: colors.get(input.run.id) ?? style.color,
      symbol: style.symbol,
      opacity: 1,
      dashStyle: derivedDashStyle(derivedIndex),
      parameter: { key: `derived-${input.derived.id}`, label: input.derived.unit ? `${input.derived.name} [${input.derived.unit}]` : input.derived.name },
      data: pointsSinceTimeZero(input.points, start, rangeEndMs(input.operation.endTime, nowMs), input.timeZeroMs ?? start),
    }];
  });
}

export interface ParameterPanel {
  key: string;
  label: string;
  series: ChartSeries[];
}

/**
 * Compare's small multiples: one panel per parameter, runs as colours, once there are `minSeries`
 * series or more over more than one parameter (one overlaid plot of 20 lines cannot be read); null
 * keeps the one overlaid chart. Panels follow the parameters' first appearance.
 */
export function parameterPanels(series: readonly ChartSeries[], minSeries: number = SMALL_MULTIPLES_MIN_SERIES): ParameterPanel[] | null {
  const panels = new Map<string, ParameterPanel>();
  for (const s of series) {
    const key = s.parameter?.key ?? s.id;
    const panel = panels.get(key);
    if (panel) panel.series.push(s);
    else panels.set(key, { key, label: s.parameter?.label ?? s.name, series: [s] });
  }
  return series.length >= minSeries && panels.size > 1 ? [...panels.values()] : null;
}

export interface CompareCommentView {
  id: number;
  runId: number;
  minute: number;
  content: string;
  author: string;
  createdAt: string;
  timestamp: string;
  color: string;
}

/** Comments of the selected runs on the minute axis of their own unit operation, sorted by minute. */
export function compareComments(comments: readonly ApiComment[], colors: ReadonlyMap<number, string>, operationStartByRun: ReadonlyMap<number, number | null>): CompareCommentView[] {
  const views = comments
    .filter((c) => c.runId !== undefined && colors.has(c.runId))
    .map((c) => {
      const runId = c.runId!;
      const start = operationStartByRun.get(runId) ?? toEpochMs(c.unitOperationStartTime ?? null);
      return {
        id: c.id,
        runId,
        minute: commentMinute(c.timestamp, start === null || Number.isNaN(start) ? null : start),
        content: c.content,
        author: authorLabel(c),
        createdAt: c.createdAt,
        timestamp: c.timestamp,
        color: colors.get(runId)!,
      };
    });
  return sortByMinute(views);
}

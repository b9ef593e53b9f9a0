import { describe, expect, it } from 'vitest';
import {
  anchorMs, buildCompareSeries, parameterPanels, buildDerivedCompareSeries, commentsHeading, derivedDashStyle, pointsSinceTimeZero, compareComments, firstSharedParameter, noCommentsMessage, operationOfRun, parameterGroups, runColors, runLabel,
  runsWithType, searchRuns, selectedCountLabel, typeLabel, unitOperationTypesOf, type CompareUnitOperation,
} from './compare-model.ts';
import { nextPanelLayout } from './panel-keyboard.ts';
import { paletteColor } from '../charts/chart-constants.ts';

const t0 = Date.parse('2025-03-01T08:00:00Z');
const iso = (minutes: number, base = t0) => new Date(base + minutes * 60_000).toISOString();

const runs = [
  { id: 1, name: 'Batch A', strain: 'E. coli BL21', description: 'baseline' },
  { id: 2, name: '', strain: null, description: 'High feed rate' },
  { id: 3, name: 'Batch C', strain: 'P. pastoris', description: null },
];
const operations: CompareUnitOperation[] = [
  { id: 10, runId: 1, type: 'fermentation', equipmentId: 100, startTime: iso(0), endTime: iso(600) },
  { id: 11, runId: 2, type: 'fermentation', equipmentId: 200, startTime: iso(0, t0 + 86_400_000), endTime: null },
  { id: 12, runId: 3, type: 'centrifugation', equipmentId: 300, startTime: null, endTime: null },
  { id: 13, runId: 1, type: 'spray_drying', equipmentId: 400, startTime: null, endTime: null },
];

describe('compare runs model', () => {
  it('lists unit-operation types across runs in the order of the type list, shown with spaces', () => {
    expect(unitOperationTypesOf(operations)).toEqual(['fermentation', 'centrifugation', 'spray_drying']);
    expect(typeLabel('spray_drying')).toBe('spray drying');
  });

  it('keeps the runs that have the type', () => {
    expect(runsWithType(runs, operations, 'fermentation').map((r) => r.id)).toEqual([1, 2]);
    expect(runsWithType(runs, operations, 'centrifugation').map((r) => r.id)).toEqual([3]);
  });

  it('searches name, id, strain and description case-insensitively', () => {
    expect(searchRuns(runs, 'batch').map((r) => r.id)).toEqual([1, 3]);
    expect(searchRuns(runs, '3').map((r) => r.id)).toEqual([3]);
    expect(searchRuns(runs, 'PASTORIS').map((r) => r.id)).toEqual([3]);
    expect(searchRuns(runs, 'feed rate').map((r) => r.id)).toEqual([2]);
    expect(searchRuns(runs, '')).toHaveLength(3);
  });

  it('labels runs and writes the counter and comment texts', () => {
    expect(runLabel(runs[1]!)).toBe('Run 2');
    expect(selectedCountLabel(2)).toBe('2 run(s) selected');
    expect(commentsHeading('spray_drying')).toBe('Comments and annotations for the selected runs and spray drying unit operation');
    expect(noCommentsMessage('fermentation')).toBe('No comments found for the selected runs and fermentation unit operation.');
  });

  it('groups parameters by type and unit', () => {
    const groups = parameterGroups([
      { id: 1, equipmentId: 100, type: 'temperature', unit: 'celsius' },
      { id: 2, equipmentId: 200, type: 'temperature', unit: 'celsius' },
      { id: 3, equipmentId: 200, type: 'temperature', unit: 'fahrenheit' },
      { id: 4, equipmentId: 100, type: 'pH', unit: 'pH' },
    ]);
    expect(groups.map((g) => g.label)).toEqual(['pH [pH]', 'temperature [celsius]', 'temperature [fahrenheit]']);
  });

  it('picks the earliest unit operation of a type per run', () => {
    const extra = [...operations, { id: 14, runId: 1, type: 'fermentation', equipmentId: 100, startTime: iso(-60), endTime: null }];
    expect(operationOfRun(extra, 1, 'fermentation')?.id).toBe(14);
    expect(operationOfRun(extra, 3, 'fermentation')).toBeNull();
  });

  it('builds one series per run and parameter, in the run colour, in whole minutes from each run start', () => {
    const colors = runColors([1, 2]);
    const series = buildCompareSeries([
      {
        run: runs[0]!, operation: operations[0]!,
        instruments: [{ id: 1, equipmentId: 100, type: 'temperature', unit: 'celsius', name: 'TIC-101' }, { id: 5, equipmentId: 100, type: 'pH', unit: 'pH', name: 'AIC-102' }],
        readings: [
          { ts: iso(0.4), instrumentId: 1, value: 30 }, { ts: iso(10.6), instrumentId: 1, value: 31 }, { ts: iso(700), instrumentId: 1, value: 99 },
          { ts: iso(3), instrumentId: 5, value: 7 },
        ],
      },
      {
        run: runs[1]!, operation: operations[1]!,
        instruments: [{ id: 2, equipmentId: 200, type: 'temperature', unit: 'celsius' }],
        readings: [{ ts: iso(5, t0 + 86_400_000), instrumentId: 2, value: 37 }],
      },
    ], ['temperature|celsius', 'pH|pH'], colors, t0 + 10 * 86_400_000);
    // Named by run and instrument; an instrument without a name falls back to its type and unit.
    expect(series.map((s) => s.name)).toEqual(['Batch A - TIC-101', 'Batch A - AIC-102', 'Run 2 - temperature [celsius]']);
    expect(series[0]!.detail).toBe('temperature [celsius]');
    expect(series[0]!.data).toEqual([[0, 30], [11, 31]]);
    expect(series[2]!.data).toEqual([[5, 37]]);
    expect(series[0]!.color).toBe(paletteColor(0));
    expect(series[1]!.color).toBe(paletteColor(0));
    expect(series[2]!.color).toBe(paletteColor(1));
    // One run's parameters differ by dash and marker, not by colour.
    expect([series[0]!.dashStyle, series[1]!.dashStyle, series[2]!.dashStyle]).toEqual(['Solid', 'ShortDash', 'Solid']);
    expect([series[0]!.symbol, series[1]!.symbol]).toEqual(['circle', 'rect']);
  });

  it('draws an aligned run at minutes since its time zero, negative before it, inside its own window', () => {
    const colors = runColors([1]);
    const [series] = buildCompareSeries([{
      run: runs[0]!, operation: operations[0]!,
      instruments: [{ id: 1, equipmentId: 100, type: 'temperature', unit: 'celsius', name: 'TIC-101' }],
      readings: [
        { ts: iso(-5), instrumentId: 1, value: 1 }, { ts: iso(10), instrumentId: 1, value: 30 }, { ts: iso(200.4), instrumentId: 1, value: 31 },
        { ts: iso(601), instrumentId: 1, value: 99 },
      ],
      timeZeroMs: t0 + 120 * 60_000,
    }], ['temperature|celsius'], colors);
    // Before the window and after it nothing; the reading at minute 10 of the run is 110 minutes before time zero.
    expect(series!.data).toEqual([[-110, 30], [80, 31]]);
    expect(pointsSinceTimeZero([{ ts: iso(30), value: 2 }, { ts: iso(20), value: null }], t0, t0 + 3_600_000, t0 + 30 * 60_000)).toEqual([[0, 2]]);
  });

  it('draws derived parameters dashed in the run colour, after the instruments\' point styles', () => {
    const colors = runColors([1, 2]);
    const our = { id: 7, name: 'OUR', unit: 'mmol/L/h' };
    const rq = { id: 8, name: 'RQ', unit: null };
    const series = buildDerivedCompareSeries([
      { run: runs[0]!, operation: operations[0]!, derived: our, points: [{ ts: iso(0), value: 5 }, { ts: iso(1), value: null }, { ts: iso(2), value: 6 }] },
      { run: runs[0]!, operation: operations[0]!, derived: rq, points: [{ ts: iso(60), value: 1.05 }], timeZeroMs: t0 + 30 * 60_000 },
      { run: runs[1]!, operation: operations[1]!, derived: our, points: [{ ts: iso(3, t0 + 86_400_000), value: 4 }] },
    ], [7, 8], colors, 1);
    expect(series.map((s) => [s.name, s.detail, s.unit, s.color])).toEqual([
      ['Batch A - OUR', 'derived [mmol/L/h]', 'mmol/L/h', paletteColor(0)],
      ['Batch A - RQ', 'derived', null, paletteColor(0)],
      ['Run 2 - OUR', 'derived [mmol/L/h]', 'mmol/L/h', paletteColor(1)],
    ]);
    expect(series.map((s) => s.data)).toEqual([[[0, 5], [2, 6]], [[30, 1.05]], [[3, 4]]]);
    expect(series.every((s) => s.dashStyle !== 'Solid')).toBe(true);
    expect(series[0]!.dashStyle).not.toBe(series[1]!.dashStyle);
    expect(Array.from({ length: 12 }, (_, i) => derivedDashStyle(i))).not.toContain('Solid');
  });

  it('preselects the first parameter every selected run measured', () => {
    const groups = parameterGroups([
      { id: 1, equipmentId: 100, type: 'dissolved_o2', unit: '%' }, { id: 2, equipmentId: 100, type: 'pH', unit: 'pH' },
      { id: 3, equipmentId: 200, type: 'pH', unit: 'pH' },
    ]);
    const runA = [{ id: 1, equipmentId: 100, type: 'dissolved_o2', unit: '%' }, { id: 2, equipmentId: 100, type: 'pH', unit: 'pH' }];
    const runB = [{ id: 3, equipmentId: 200, type: 'pH', unit: 'pH' }];
    expect(firstSharedParameter(groups, [runA, runB])).toBe('pH|pH');
    // Nothing shared: the first parameter any run has.
    expect(firstSharedParameter(groups, [runA, []])).toBe('dissolved_o2|%');
    expect(firstSharedParameter([], [runA])).toBeNull();
  });

  it('anchors a run without a start time at its earliest reading', () => {
    expect(anchorMs({ startTime: null }, [{ ts: iso(9), instrumentId: 1, value: 1 }, { ts: iso(4), instrumentId: 1, value: 1 }])).toBe(t0 + 4 * 60_000);
    expect(anchorMs({ startTime: null }, [])).toBeNull();
  });

  it('places comments on their run\'s minute axis with the run colour, sorted by minute', () => {
    const colors = runColors([1, 2]);
    const views = compareComments([
      { id: 1, unitOperationsId: 10, runId: 1, timestamp: iso(120), content: 'late', author: 1, authorName: null, createdAt: iso(0) },
      { id: 2, unitOperationsId: 11, runId: 2, timestamp: iso(30, t0 + 86_400_000), content: 'early', author: 2, authorName: 'Bo', createdAt: iso(0) },
      { id: 3, unitOperationsId: 99, runId: 9, timestamp: iso(1), content: 'other run', author: 2, authorName: 'Bo', createdAt: iso(0) },
    ], colors, new Map([[1, t0], [2, t0 + 86_400_000]]));
    expect(views.map((v) => [v.id, v.minute, v.author, v.color])).toEqual([
      [2, 30, 'Bo', paletteColor(1)],
      [1, 120, 'User 1', paletteColor(0)],
    ]);
  });

  it('resizes the run panel by 10 % with the arrows, within 16-40 %', () => {
    const layout = { left: 28, right: 72 };
    expect(nextPanelLayout(layout, 'ArrowRight', 'left', 'right')).toEqual({ left: 38, right: 62 });
    expect(nextPanelLayout({ left: 38, right: 62 }, 'ArrowRight', 'left', 'right')).toEqual({ left: 40, right: 60 });
    expect(nextPanelLayout(layout, 'ArrowLeft', 'left', 'right')).toEqual({ left: 18, right: 82 });
    expect(nextPanelLayout({ left: 18, right: 82 }, 'ArrowLeft', 'left', 'right')).toEqual({ left: 16, right: 84 });
    expect(nextPanelLayout(layout, 'Home', 'left', 'right')).toBeNull();
  });
});

describe('small multiples', () => {
  const series = (run: number, key: string) => ({
    id: `run-${run}-${key}`, name: `Run ${run}`, unit: null, color: '#000000', symbol: 'circle' as const, opacity: 1, data: [],
    parameter: { key, label: key },
  });
  it('splits 4 runs x 5 parameters into one panel per parameter, runs kept in order', () => {
    const all = [1, 2, 3, 4].flatMap((run) => ['pH', 'DO', 'T', 'stir', 'feed'].map((key) => series(run, key)));
    const panels = parameterPanels(all)!;
    expect(panels.map((panel) => panel.key)).toEqual(['pH', 'DO', 'T', 'stir', 'feed']);
    expect(panels[0]!.series.map((s) => s.name)).toEqual(['Run 1', 'Run 2', 'Run 3', 'Run 4']);
  });
  it('keeps one overlaid chart for few series or one parameter', () => {
    expect(parameterPanels([1, 2].flatMap((run) => ['pH', 'DO'].map((key) => series(run, key))))).toBeNull();
    expect(parameterPanels(Array.from({ length: 12 }, (_, run) => series(run, 'pH')))).toBeNull();
  });
});

/**
 * Compare runs (/runs/compare): one tab per unit-operation type, a resizable run
 * picker on the left (28 % by default, 16-40 %, keyboard arrows/Home/End/F6), the parameter chooser and
 * the 'Overlayed Time Series' chart on the right (one colour per run, one dash style per parameter; past
 * eight series one panel per parameter on a shared time axis instead,
 * the first parameter the runs share shown until the user picks, the organisation's derived parameters drawn dashed), and the
 * comments of the selected runs below. Runs are drawn on process time: minutes since each run's time zero, its start unless the
 * user aligns them on a comment word or a threshold crossing (the server finds each time zero; a run without its event is left
 * out and listed). Selections are remembered per tab.
 */
import { useCallback, useEffect, useMemo, useState, type KeyboardEvent } from 'react';
import useSWR from 'swr';
import { Group, Panel, Separator, useDefaultLayout, useGroupRef } from 'react-resizable-panels';
import { Button, Callout, Card, Checkbox, Colors, H4, InputGroup, NonIdealState, Spinner, Tab, Tabs, Tag } from '@blueprintjs/core';
import { alignmentSchema, type Alignment } from '@bioprocess/shared/analysis';
import { alignmentResultSchema, type AlignmentResult } from '@bioprocess/shared/analysis-alignment';
import { INSTRUMENT_TYPES } from '@bioprocess/shared/enums';
import { useApi } from '../api/hooks.ts';
import { apiRequest } from '../api/client.ts';
import { PageHeader } from '../components/PageHeader.tsx';
import { formatDate, titleCaseType } from '../entities/format.ts';
import { instrumentListSchema, runListSchema, unitOperationListSchema, type Camelize, type Instrument, type Run, type UnitOperation } from '../entities/types.ts';
import { readingListSchema } from '@bioprocess/shared/timeseries';
import { TimeSeriesChart, type XRange } from '../charts/TimeSeriesChart.tsx';
import { COMPARE_SERIES_LIMIT, CHART_HEIGHT_PX, SMALL_MULTIPLE_HEIGHT_PX } from '../charts/chart-constants.ts';
import { seriesExtentMinutes } from '../charts/chart-options.ts';
import type { Reading } from '../charts/series-model.ts';
import { formatElapsed } from '../dates/elapsed-time.ts';
import type { ApiComment } from '../unit-operations/comments-model.ts';
import { AlignmentForm } from '../alignment/AlignmentForm.tsx';
import { LEFT_OUT_LABELS, timeZeroLabel } from '../alignment/alignment-labels.ts';
import { buildSampleCompareSeries, compareSampleAnalytes } from './compare-samples.ts';
import { SampleAnalyteChooser, useCompareSamples } from './CompareSamples.tsx';
import { derivedParameterListSchema, derivedSeriesSchema, type DerivedParameterView, type DerivedSeriesView } from '../derived/derived-model.ts';
import {
  COMPARE_MESSAGES, anchorMs, buildCompareSeries, buildDerivedCompareSeries, commentsHeading, compareComments, firstSharedParameter, noCommentsMessage, operationOfRun,
  parameterGroups, parameterPanels, runColors, runLabel, runsWithType, searchRuns, selectedCountLabel, unitOperationTypesOf, type CompareUnitOperation, type DerivedSeriesInput,
  type RunSeriesInput,
} from './compare-model.ts';
import { nextPanelLayout } from './panel-keyboard.ts';
import { useLiveCompareSeries } from '../live/use-live-compare.ts';
import { LiveIndicator } from '../live/LiveIndicator.tsx';
import { useCompactShell } from '../shell/useCompactShell.ts';
import { useAuth } from '../auth/useAuth.ts';
import { ExportDialog } from '../exports/ExportDialog.tsx';
import { unitOperationScope } from '../exports/export-request.ts';
import './compare-runs.css';

interface TabSelection {
  runIds: number[];
  /** Null until the user picks parameters: the first one the selected runs share is shown meanwhile. */
  parameterKeys: string[] | null;
  /** Derived parameters drawn for every selected run, in the order chosen. */
  derivedIds: number[];
  search: string;
  alignment: Alignment;
}

const EMPTY_SELECTION: TabSelection = { runIds: [], parameterKeys: null, derivedIds: [], search: '', alignment: { kind: 'start' } };
/** Typing a comment word or a threshold asks the server once the user pauses, not at every keystroke. */
const ALIGNMENT_SETTLE_MS = 400;

type CamelAlignmentResult = Camelize<AlignmentResult>;
type DerivedOutcome = { series: DerivedSeriesView } | { error: string };

/** The value once it has stayed the same for `delayMs`. */
function useSettledValue<T>(value: T, delayMs: number): T {
  const [settled, setSettled] = useState(value);
  useEffect(() => {
    const timer = setTimeout(() => setSettled(value), delayMs);
    return () => clearTimeout(timer);
  }, [value, delayMs]);
  return settled;
}
const PANEL_IDS = { runs: 'compare-runs', chart: 'compare-chart' } as const;

export function CompareRunsPage() {
  const runs = useApi<Run[]>('/api/v1/runs', runListSchema);
  const operations = useApi<UnitOperation[]>('/api/v1/unit-operations', unitOperationListSchema);
  const types = useMemo(() => unitOperationTypesOf(operations.data ?? []), [operations.data]);
  const [activeType, setActiveType] = useState<string | null>(null);
  const [selections, setSelections] = useState<Record<string, TabSelection>>({});
  const type = activeType && types.includes(activeType) ? activeType : types[0] ?? null;

  const failed = runs.error || operations.error;
  const loading = !failed && (runs.isLoading || operations.isLoading);

  return (
    <div className="compare-page" data-testid="compare-runs">
      <PageHeader title={COMPARE_MESSAGES.title} subtitle="Overlay the process parameters of several runs, step by step." />
      {failed ? (
        <Callout intent="danger" icon="error"><span style={{ color: Colors.RED3 }}>{COMPARE_MESSAGES.fetchFailed}</span></Callout>
      ) : loading ? (
        <NonIdealState icon={<Spinner />} description={COMPARE_MESSAGES.loading} />
      ) : !type ? (
        <NonIdealState icon="search" description={COMPARE_MESSAGES.noUnitOperations} />
      ) : (
        <>
          <Tabs id="compare-type-tabs" selectedTabId={type} onChange={(id) => setActiveType(String(id))} large className="compare-tabs">
            {types.map((t) => <Tab key={t} id={t} title={titleCaseType(t)} />)}
          </Tabs>
          <CompareTypePanel key={type} type={type} runs={runs.data ?? []} operations={operations.data ?? []}
            selection={selections[type] ?? EMPTY_SELECTION}
            onSelectionChange={(next) => setSelections((current) => ({ ...current, [type]: next }))} />
        </>
      )}
    </div>
  );
}

interface CompareTypePanelProps {
  type: string;
  runs: readonly Run[];
  operations: readonly UnitOperation[];
  selection: TabSelection;
  onSelectionChange: (selection: TabSelection) => void;
}

function CompareTypePanel({ type, runs, operations, selection, onSelectionChange }: CompareTypePanelProps) {
  const groupRef = useGroupRef();
  const { permissions } = useAuth();
  const [exporting, setExporting] = useState(false);
  const layout = useDefaultLayout({ id: 'compare-runs-panels', storage: localStorage });
  const candidates = useMemo(() => runsWithType(runs, operations, type), [runs, operations, type]);
  const visibleRuns = useMemo(() => searchRuns(candidates, selection.search), [candidates, selection.search]);
  const selectedRuns = useMemo(() => selection.runIds.map((id) => candidates.find((r) => r.id === id)).filter((r): r is Run => !!r), [selection.runIds, candidates]);
  const colors = useMemo(() => runColors(selectedRuns.map((r) => r.id)), [selectedRuns]);
  const selectedOperations = useMemo(() => selectedRuns
    .map((run) => ({ run, operation: operationOfRun(operations, run.id, type) }))
    .filter((entry): entry is { run: Run; operation: CompareUnitOperation } => entry.operation !== null), [selectedRuns, operations, type]);

  // Instruments of the selected runs' equipment: an instrument fetch failure leaves the list empty.
  const equipmentIds = [...new Set(selectedOperations.map((e) => e.operation.equipmentId).filter((id): id is number => id !== null))].sort((a, b) => a - b);
  const instruments = useSWR(equipmentIds.length ? ['compare-instruments', equipmentIds.join(',')] : null, async () => {
    const lists = await Promise.all(equipmentIds.map((id) => apiRequest<Instrument[]>('GET', `/api/v1/equipment/${id}/instruments`, undefined, { schema: instrumentListSchema })
      .catch((error: unknown) => { console.error('Failed to fetch instruments', error); return [] as Instrument[]; })));
    return lists.flat();
  });
  const groups = useMemo(() => parameterGroups(instruments.data ?? []), [instruments.data]);
  const preselected = useMemo(() => firstSharedParameter(groups, selectedOperations.map(({ operation }) =>
    (instruments.data ?? []).filter((i) => i.equipmentId === operation.equipmentId))), [groups, selectedOperations, instruments.data]);
  const chosenKeys = selection.parameterKeys === null
    ? (preselected ? [preselected] : [])
    : selection.parameterKeys.filter((key) => groups.some((g) => g.key === key));

  const operationIds = selectedOperations.map((e) => e.operation.id);
  const series = useSWR(operationIds.length && chosenKeys.length ? ['compare-series', operationIds.join(',')] : null, async () => {
    const entries = await Promise.all(operationIds.map(async (id) => [id, await apiRequest<Reading[]>('GET',
      `/api/v1/unit-operations/${id}/time-series-data?limit=${COMPARE_SERIES_LIMIT}`, undefined, { schema: readingListSchema })] as const));
    return new Map(entries);
    // SWR's default comparison (dequal/lite) sees no difference between two Maps, so a live patch (a new
    // Map of the same operations) would be dropped as unchanged: a new Map is new data.
  }, { revalidateOnFocus: false, compare: (before, after) => before === after });
  if (series.error) console.error('Failed to fetch time series data', series.error);
  // Runs still running draw their new readings as they are stored.
  const liveState = useLiveCompareSeries(useMemo(() => selectedOperations.map(({ operation }) => operation), [selectedOperations]), instruments.data, series.mutate);
  const liveBadge = liveState ? <LiveIndicator state={liveState} /> : undefined;

  // Time zeros from the server for an event or threshold alignment; the start needs no request.
  const settledAlignment = useSettledValue(selection.alignment, ALIGNMENT_SETTLE_MS);
  const alignmentValid = alignmentSchema.safeParse(settledAlignment);
  const alignment = useSWR(operationIds.length && settledAlignment.kind !== 'start' && alignmentValid.success
    ? ['compare-alignment', operationIds.join(','), JSON.stringify(settledAlignment)] : null,
  () => apiRequest<CamelAlignmentResult>('POST', '/api/v1/analysis/alignment', { unit_operation_ids: operationIds, alignment: settledAlignment },
    { schema: alignmentResultSchema }), { revalidateOnFocus: false, keepPreviousData: false });
  const aligned = settledAlignment.kind !== 'start';
  const alignmentError = !aligned ? null
    : !alignmentValid.success ? alignmentValid.error.issues[0]?.message ?? 'Invalid alignment'
      : alignment.error ? (alignment.error instanceof Error ? alignment.error.message : String(alignment.error)) : null;
  const timeZeros = useMemo(() => (aligned && alignment.data
    ? new Map(alignment.data.aligned.map((entry) => [entry.unitOperationId, Date.parse(entry.timeZero)])) : null), [aligned, alignment.data]);
  /** Runs drawn: all selected on their start, only those with a time zero when aligned. */
  const drawn = useMemo(() => (aligned
    ? selectedOperations.filter(({ operation }) => timeZeros?.has(operation.id)) : selectedOperations), [aligned, selectedOperations, timeZeros]);
  const leftOut = aligned && alignment.data ? alignment.data.leftOut : [];

  const derivedList = useApi<DerivedParameterView[]>('/api/v1/derived-parameters', derivedParameterListSchema);
  const chosenDerived = useMemo(() => selection.derivedIds
    .map((id) => derivedList.data?.find((derived) => derived.id === id)).filter((derived): derived is DerivedParameterView => !!derived),
  [selection.derivedIds, derivedList.data]);
  const derivedIdsKey = chosenDerived.map((derived) => derived.id).join(',');
  // Each run computes each formula on the server; one it cannot compute says why and never hides the others.
  const derivedSeries = useSWR(operationIds.length && derivedIdsKey ? ['compare-derived', operationIds.join(','), derivedIdsKey] : null, async () => {
    const pairs = operationIds.flatMap((operationId) => chosenDerived.map((derived) => ({ operationId, derivedId: derived.id })));
    const settled = await Promise.allSettled(pairs.map(({ operationId, derivedId }) => apiRequest<DerivedSeriesView>('GET',
      `/api/v1/unit-operations/${operationId}/derived/${derivedId}?limit=${COMPARE_SERIES_LIMIT}`, undefined, { schema: derivedSeriesSchema })));
    return new Map(pairs.map(({ operationId, derivedId }, index): [string, DerivedOutcome] => {
      const outcome = settled[index]!;
      return [`${operationId}:${derivedId}`, outcome.status === 'fulfilled'
        ? { series: outcome.value } : { error: outcome.reason instanceof Error ? outcome.reason.message : 'Failed' }];
    }));
  }, { revalidateOnFocus: false });
  /** Per derived parameter, the runs that cannot compute it and why. */
  const derivedProblems = useMemo(() => {
    const problems = new Map<number, string[]>();
    for (const { run, operation } of selectedOperations) {
      for (const derived of chosenDerived) {
        const outcome = derivedSeries.data?.get(`${operation.id}:${derived.id}`);
        if (outcome && 'error' in outcome) problems.set(derived.id, [...(problems.get(derived.id) ?? []), `${runLabel(run)}: ${outcome.error}`]);
      }
    }
    return problems;
  }, [selectedOperations, chosenDerived, derivedSeries.data]);

  // Samples as markers of each run, after its on-line and derived series.
  const samplesByOperation = useCompareSamples(operationIds);
  const sampleAnalyteList = useMemo(() => compareSampleAnalytes(selectedOperations.map(({ operation }) => ({ samples: samplesByOperation?.get(operation.id) ?? [] }))),
    [selectedOperations, samplesByOperation]);
  const [chosenSampleKeys, setChosenSampleKeys] = useState<string[]>([]);
  const sampleSeries = useMemo(() => buildSampleCompareSeries(
    drawn.map(({ run, operation }) => ({ run, operation, samples: samplesByOperation?.get(operation.id) ?? [], timeZeroMs: timeZeros?.get(operation.id) })),
    chosenSampleKeys, colors, chosenKeys.length + chosenDerived.length,
  ), [drawn, samplesByOperation, chosenSampleKeys, colors, timeZeros, chosenKeys.length, chosenDerived.length]);

  const chartSeries = useMemo(() => {
    const readingsByOperation = series.data;
    const timeZeroOf = (operationId: number) => timeZeros?.get(operationId);
    const inputs: RunSeriesInput[] = readingsByOperation ? drawn.map(({ run, operation }) => ({
      run, operation,
      instruments: (instruments.data ?? []).filter((i) => i.equipmentId === operation.equipmentId),
      readings: readingsByOperation.get(operation.id) ?? [],
      timeZeroMs: timeZeroOf(operation.id),
    })) : [];
    const derivedInputs: DerivedSeriesInput[] = drawn.flatMap(({ run, operation }) => chosenDerived.flatMap((derived) => {
      const outcome = derivedSeries.data?.get(`${operation.id}:${derived.id}`);
      return outcome && 'series' in outcome ? [{ run, operation, derived, points: outcome.series.points, timeZeroMs: timeZeroOf(operation.id) }] : [];
    }));
    return [
      ...buildCompareSeries(inputs, chosenKeys, colors),
      ...buildDerivedCompareSeries(derivedInputs, chosenDerived.map((derived) => derived.id), colors, chosenKeys.length),
      ...sampleSeries,
    ];
  }, [series.data, drawn, instruments.data, chosenKeys, colors, timeZeros, chosenDerived, derivedSeries.data, sampleSeries]);

  const runIdsParam = selectedRuns.map((r) => r.id).join(',');
  const comments = useSWR(runIdsParam ? `/api/v1/comments?run_ids=${runIdsParam}&type=${encodeURIComponent(type)}` : null,
    (path: string) => apiRequest<ApiComment[]>('GET', path));
  if (comments.error) console.error('Failed to fetch comments', comments.error);
  // Comments sit on their run's own process time; those of a run left out have no place on the axis.
  const startsByRun = useMemo(() => new Map(drawn.map(({ run, operation }) => [run.id,
    timeZeros?.get(operation.id) ?? anchorMs(operation, series.data?.get(operation.id) ?? [])])), [drawn, series.data, timeZeros]);
  const drawnColors = useMemo(() => new Map([...colors].filter(([runId]) => startsByRun.has(runId))), [colors, startsByRun]);
  const commentViews = useMemo(() => compareComments(comments.data ?? [], drawnColors, startsByRun), [comments.data, drawnColors, startsByRun]);
  const [xRange, setXRange] = useState<XRange | null>(null);
  const runNames = useMemo(() => new Map(selectedRuns.map((run) => [run.id, runLabel(run)])), [selectedRuns]);
  const panels = useMemo(() => (wantsSeriesOf(chosenKeys, chosenDerived, chosenSampleKeys) ? parameterPanels(chartSeries) : null), [chartSeries, chosenKeys, chosenDerived, chosenSampleKeys]);
  const sharedExtent = useMemo(() => seriesExtentMinutes(chartSeries), [chartSeries]);

  const update = (patch: Partial<TabSelection>) => onSelectionChange({ ...selection, ...patch });
  const toggleRun = (id: number, checked: boolean) => update({
    runIds: checked ? [...selection.runIds, id] : selection.runIds.filter((r) => r !== id),
  });
  const toggleParameter = (key: string, checked: boolean) => update({
    parameterKeys: checked ? [...chosenKeys, key] : chosenKeys.filter((k) => k !== key),
  });
  const toggleDerived = (id: number, checked: boolean) => update({
    derivedIds: checked ? [...selection.derivedIds.filter((d) => d !== id), id] : selection.derivedIds.filter((d) => d !== id),
  });
  const thresholdParameters = useMemo(() => INSTRUMENT_TYPES.filter((candidate) => groups.some((group) => group.type === candidate)), [groups]);
  const runOfOperation = useMemo(() => new Map(selectedOperations.map(({ run, operation }) => [operation.id, run])), [selectedOperations]);
  // The series wait for the series themselves, and for the time zeros when aligned.
  const chartLoading = series.isLoading || derivedSeries.isLoading || (aligned && alignment.isLoading);
  const wantsSeries = wantsSeriesOf(chosenKeys, chosenDerived, chosenSampleKeys);

  const compact = useCompactShell();

  // Arrows resize by 10 % instead of the library's 5 %; Home, End and F6 stay the library's.
  const onSeparatorKey = useCallback((event: KeyboardEvent<HTMLDivElement>) => {
    const target = event.target as HTMLElement;
    if (!target.hasAttribute('data-separator') || !groupRef.current) return;
    const next = nextPanelLayout(groupRef.current.getLayout(), event.key, PANEL_IDS.runs, PANEL_IDS.chart);
    if (!next) return;
    event.preventDefault();
    event.stopPropagation();
    groupRef.current.setLayout(next);
  }, [groupRef]);

  const runPicker = (
    <Card className="compare-run-picker">
      <p className="compare-picker-title">{COMPARE_MESSAGES.selectRuns}</p>
      <InputGroup leftIcon="search" type="search" placeholder={COMPARE_MESSAGES.searchPlaceholder} value={selection.search}
        onChange={(event) => update({ search: event.target.value })} aria-label="Search runs" />
      <div className="compare-run-list" role="list">
        {visibleRuns.length === 0 ? (
          <p className="bp6-text-muted compare-empty">{COMPARE_MESSAGES.noRuns}</p>
        ) : visibleRuns.map((run) => {
          const checked = selection.runIds.includes(run.id);
          return (
            <div key={run.id} role="listitem" className={`compare-run ${checked ? 'compare-run-selected' : ''}`}>
              <Checkbox checked={checked} onChange={(event) => toggleRun(run.id, event.currentTarget.checked)}
                labelElement={(
                  <span className="compare-run-label">
                    <span className="compare-run-name" title={runLabel(run)}>
                      {checked && <span className="compare-dot" style={{ background: colors.get(run.id) }} />}
                      {runLabel(run)}
                    </span>
                    <span className="compare-run-meta">{formatDate(run.startTime)} → {formatDate(run.endTime)}</span>
                    {run.strain ? <span className="compare-run-meta">Strain: {run.strain}</span> : null}
                  </span>
                )} />
            </div>
          );
        })}
      </div>
      <div className="compare-counter">
        <Tag minimal round intent={selectedRuns.length ? 'primary' : 'none'}>{selectedCountLabel(selectedRuns.length)}</Tag>
        {permissions.canExport && selectedOperations.length > 0 ? (
          <Button icon="export" size="small" text="Export" onClick={() => setExporting(true)} />
        ) : null}
        {permissions.canExport ? (
          <ExportDialog isOpen={exporting} onClose={() => setExporting(false)} loading={equipmentIds.length > 0 && !instruments.data && !instruments.error} scopes={selectedOperations.map(({ run, operation }) =>
            unitOperationScope(operation, `${runLabel(run)}: ${titleCaseType(type)}`, instruments.data ?? []))} />
        ) : null}
      </div>
    </Card>
  );
  const chartCard = (
    <Card className="compare-chart-card">
      <div className="compare-parameters" data-testid="compare-parameters">
        <p className="compare-picker-title">Parameters</p>
        {selectedRuns.length === 0 || (groups.length === 0 && !instruments.isLoading) ? (
          <p className="bp6-text-muted">{COMPARE_MESSAGES.noParameters}</p>
        ) : instruments.isLoading ? (
          <Spinner size={16} />
        ) : (
          <ParameterChooser groups={groups} chosen={chosenKeys} onToggle={toggleParameter} />
        )}
        {selectedRuns.length > 0 && (derivedList.data ?? []).length > 0 ? (
          <div className="compare-derived" data-testid="compare-derived">
            <p className="compare-picker-title">Derived parameters</p>
            <div className="compare-parameter-groups">
              {(derivedList.data ?? []).map((derived) => (
                <Checkbox key={derived.id} inline title={derived.expression} checked={selection.derivedIds.includes(derived.id)}
                  label={derived.unit ? `${derived.name} [${derived.unit}]` : derived.name}
                  onChange={(event) => toggleDerived(derived.id, event.currentTarget.checked)} />
              ))}
            </div>
            {chosenDerived.flatMap((derived) => (derivedProblems.get(derived.id) ?? []).map((problem) => (
              <p key={`${derived.id}:${problem}`} className="compare-derived-error" style={{ color: Colors.RED3 }} role="alert">
                {derived.name} not drawn for {problem}
              </p>
            )))}
          </div>
        ) : null}
        {selectedRuns.length > 0 ? (
          <SampleAnalyteChooser analytes={sampleAnalyteList} chosen={chosenSampleKeys}
            onToggle={(key, checked) => setChosenSampleKeys((current) => (checked ? [...current.filter((k) => k !== key), key] : current.filter((k) => k !== key)))} />
        ) : null}
      </div>
      {selectedRuns.length > 0 ? (
        <div className="compare-alignment" data-testid="compare-alignment">
          <AlignmentForm value={selection.alignment} parameters={thresholdParameters}
            onChange={(next) => { setXRange(null); update({ alignment: next }); }} />
        </div>
      ) : null}
      {alignmentError ? <Callout intent="danger" icon="error" className="compare-alignment-error">{alignmentError}</Callout> : null}
      {leftOut.length > 0 ? (
        <Callout intent="warning" icon="warning-sign" className="compare-left-out" data-testid="compare-left-out">
          Left out: {leftOut.map((entry) => {
            const run = runOfOperation.get(entry.unitOperationId);
            return `${run ? runLabel(run) : `unit operation ${entry.unitOperationId}`} (${LEFT_OUT_LABELS[entry.reason] ?? entry.reason})`;
          }).join(', ')}
        </Callout>
      ) : null}
      {panels && !chartLoading && !series.error ? (
        // Many series: one panel per parameter on one shared time axis, the runs' colours in one key above.
        <div className="compare-small-multiples" data-testid="compare-small-multiples">
          <ul className="compare-run-key" aria-label="Runs">
            {drawn.map(({ run }) => (
              <li key={run.id}><span className="compare-dot" style={{ background: colors.get(run.id) }} aria-hidden />{runLabel(run)}</li>
            ))}
          </ul>
          {panels.map((panel, index) => (
            <TimeSeriesChart key={panel.key} testId={`compare-panel-${index}`} title={panel.label} series={panel.series}
              comments={commentViews} commentLabels={index === 0} showLegend={false} xExtent={sharedExtent} badge={index === 0 ? liveBadge : undefined}
              height={SMALL_MULTIPLE_HEIGHT_PX} xRange={xRange} onXRangeChange={setXRange} timeZeroLabel={timeZeroLabel(settledAlignment)} />
          ))}
        </div>
      ) : (
        <TimeSeriesChart testId="compare-chart" title={COMPARE_MESSAGES.chartTitle} series={wantsSeries ? chartSeries : []}
          comments={commentViews} loading={chartLoading} error={series.error ? COMPARE_MESSAGES.seriesFailed : null}
          height={CHART_HEIGHT_PX} xRange={xRange} onXRangeChange={setXRange} timeZeroLabel={timeZeroLabel(settledAlignment)} badge={liveBadge} />
      )}
    </Card>
  );

  return (
    <div className="compare-body">
      <H4 className="compare-heading">{titleCaseType(type)} Comparison</H4>
      {compact ? (
        // Phones: the run list above the chart, each at full width, instead of side-by-side panels.
        <div className="compare-stacked">
          {runPicker}
          {chartCard}
        </div>
      ) : (
        <div onKeyDownCapture={onSeparatorKey}>
          <Group orientation="horizontal" groupRef={groupRef} className="compare-panels" id="compare-runs-panels"
            defaultLayout={layout.defaultLayout} onLayoutChanged={layout.onLayoutChanged}>
            <Panel id={PANEL_IDS.runs} defaultSize="28" minSize="16" maxSize="40" className="compare-panel">
              {runPicker}
            </Panel>
            <Separator className="compare-separator" aria-label="Resize the run list" />
            <Panel id={PANEL_IDS.chart} minSize="40" className="compare-panel">
              {chartCard}
            </Panel>
          </Group>
        </div>
      )}
      {selectedRuns.length > 0 && (
        <Card className="compare-comments" data-testid="compare-comments">
          <H4>Comments</H4>
          <p className="bp6-text-muted">{commentsHeading(type)}</p>
          {comments.isLoading ? (
            <p>{COMPARE_MESSAGES.loadingComments}</p>
          ) : commentViews.length === 0 ? (
            <p className="bp6-text-muted">{noCommentsMessage(type)}</p>
          ) : (
            <ul className="compare-comment-list">
              {commentViews.map((comment) => (
                <li key={comment.id} className="compare-comment">
                  <span className="compare-dot" style={{ background: comment.color }} aria-hidden />
                  <div className="compare-comment-body">
                    <div>{comment.content}</div>
                    <div className="bp6-text-muted compare-comment-meta">
                      {comment.author} · {runNames.get(comment.runId) ?? `Run ${comment.runId}`} · {formatDate(comment.timestamp)}
                    </div>
                  </div>
                  <Tag minimal>{formatElapsed(comment.minute)}</Tag>
                </li>
              ))}
            </ul>
          )}
        </Card>
      )}
    </div>
  );
}

function wantsSeriesOf(parameterKeys: readonly string[], derived: readonly unknown[], sampleKeys: readonly string[]): boolean {
  return parameterKeys.length > 0 || derived.length > 0 || sampleKeys.length > 0;
}

function ParameterChooser({ groups, chosen, onToggle }: { groups: ReturnType<typeof parameterGroups>; chosen: readonly string[]; onToggle: (key: string, checked: boolean) => void }) {
  // Grouped by type: one heading per instrument type, one checkbox per unit it was measured in.
  const byType = new Map<string, typeof groups>();
  for (const group of groups) byType.set(group.type, [...(byType.get(group.type) ?? []), group]);
  return (
    <div className="compare-parameter-groups">
      {[...byType.entries()].map(([type, entries]) => (
        <div key={type} className="compare-parameter-group">
          {entries.map((group) => (
            <Checkbox key={group.key} inline label={group.label} checked={chosen.includes(group.key)}
              onChange={(event) => onToggle(group.key, event.currentTarget.checked)} />
          ))}
          <span className="compare-parameter-type" hidden>{type}</span>
        </div>
      ))}
    </div>
  );
}

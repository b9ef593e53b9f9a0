/**
 * Compare runs (/runs/compare): one tab per unit-operation type, a resizable run
 * picker on the left (28 % by default, 16-40 %, keyboard arrows/Home/End/F6), the parameter chooser and
 * the 'Overlayed Time Series' chart on the right (one colour per run, one dash style per parameter,
 * the first parameter the runs share shown until the user picks, minutes from each run's own start), and the comments of the selected runs below. Selections are remembered per tab.
 */
import { useCallback, useMemo, useState, type KeyboardEvent } from 'react';
import useSWR from 'swr';
import { Group, Panel, Separator, useDefaultLayout, useGroupRef } from 'react-resizable-panels';
import { Button, Callout, Card, Checkbox, Colors, H4, InputGroup, NonIdealState, Spinner, Tab, Tabs, Tag } from '@blueprintjs/core';
import { useApi } from '../api/hooks.ts';
import { apiRequest } from '../api/client.ts';
import { PageHeader } from '../components/PageHeader.tsx';
import { formatDate, titleCaseType } from '../entities/format.ts';
import { instrumentListSchema, runListSchema, unitOperationListSchema, type Instrument, type Run, type UnitOperation } from '../entities/types.ts';
import { readingListSchema } from '@bioprocess/shared/timeseries';
import { TimeSeriesChart, type XRange } from '../charts/TimeSeriesChart.tsx';
import { COMPARE_SERIES_LIMIT, CHART_HEIGHT_PX } from '../charts/chart-constants.ts';
import type { Reading } from '../charts/series-model.ts';
import { formatMinute } from '../charts/time-axis.ts';
import type { ApiComment } from '../unit-operations/comments-model.ts';
import {
  COMPARE_MESSAGES, anchorMs, buildCompareSeries, commentsHeading, compareComments, firstSharedParameter, noCommentsMessage, operationOfRun,
  parameterGroups, runColors, runLabel, runsWithType, searchRuns, selectedCountLabel, unitOperationTypesOf, type CompareUnitOperation, type RunSeriesInput,
} from './compare-model.ts';
import { nextPanelLayout } from './panel-keyboard.ts';
import { useCompactShell } from '../shell/useCompactShell.ts';
import { useAuth } from '../auth/useAuth.ts';
import { ExportDialog } from '../exports/ExportDialog.tsx';
import { unitOperationScope } from '../exports/export-request.ts';
import './compare-runs.css';

interface TabSelection {
  runIds: number[];
  /** Null until the user picks parameters: the first one the selected runs share is shown meanwhile. */
  parameterKeys: string[] | null;
  search: string;
}

const EMPTY_SELECTION: TabSelection = { runIds: [], parameterKeys: null, search: '' };
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
  }, { revalidateOnFocus: false });
  if (series.error) console.error('Failed to fetch time series data', series.error);

  const chartSeries = useMemo(() => {
    const readingsByOperation = series.data;
    if (!readingsByOperation) return [];
    const inputs: RunSeriesInput[] = selectedOperations.map(({ run, operation }) => ({
      run, operation,
      instruments: (instruments.data ?? []).filter((i) => i.equipmentId === operation.equipmentId),
      readings: readingsByOperation.get(operation.id) ?? [],
    }));
    return buildCompareSeries(inputs, chosenKeys, colors);
  }, [series.data, selectedOperations, instruments.data, chosenKeys, colors]);

  const runIdsParam = selectedRuns.map((r) => r.id).join(',');
  const comments = useSWR(runIdsParam ? `/api/v1/comments?run_ids=${runIdsParam}&type=${encodeURIComponent(type)}` : null,
    (path: string) => apiRequest<ApiComment[]>('GET', path));
  if (comments.error) console.error('Failed to fetch comments', comments.error);
  const startsByRun = useMemo(() => new Map(selectedOperations.map(({ run, operation }) => [run.id,
    anchorMs(operation, series.data?.get(operation.id) ?? [])])), [selectedOperations, series.data]);
  const commentViews = useMemo(() => compareComments(comments.data ?? [], colors, startsByRun), [comments.data, colors, startsByRun]);
  const [xRange, setXRange] = useState<XRange | null>(null);
  const runNames = useMemo(() => new Map(selectedRuns.map((run) => [run.id, runLabel(run)])), [selectedRuns]);

  const update = (patch: Partial<TabSelection>) => onSelectionChange({ ...selection, ...patch });
  const toggleRun = (id: number, checked: boolean) => update({
    runIds: checked ? [...selection.runIds, id] : selection.runIds.filter((r) => r !== id),
  });
  const toggleParameter = (key: string, checked: boolean) => update({
    parameterKeys: checked ? [...chosenKeys, key] : chosenKeys.filter((k) => k !== key),
  });

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
          <ExportDialog isOpen={exporting} onClose={() => setExporting(false)} scopes={selectedOperations.map(({ run, operation }) =>
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
      </div>
      <TimeSeriesChart testId="compare-chart" title={COMPARE_MESSAGES.chartTitle} series={chartSeries}
        comments={commentViews} loading={series.isLoading} error={series.error ? COMPARE_MESSAGES.seriesFailed : null}
        height={CHART_HEIGHT_PX} xRange={xRange} onXRangeChange={setXRange} />
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
                  <Tag minimal>min {formatMinute(comment.minute)}</Tag>
                </li>
              ))}
            </ul>
          )}
        </Card>
      )}
    </div>
  );
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

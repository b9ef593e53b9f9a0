/**
 * Unit operation detail (/runs/{runId}/unit-operations/{unitOpId}): header, parameter
 * checkbox list, the 'Process Parameters' chart (downsampled by the server for the visible range) with
 * comment lines and sample markers, the Samples grid, and the Comments card with its dialogs and toasts.
 */
import { useCallback, useMemo, useState } from 'react';
import { useNavigate, useParams } from 'react-router-dom';
import { Button, Card, Colors, H3, NonIdealState, Spinner, Tag } from '@blueprintjs/core';
import { useApi } from '../api/hooks.ts';
import { apiRequest } from '../api/client.ts';
import { useAuth } from '../auth/useAuth.ts';
import { showToast } from '../components/toaster.ts';
import { StatusPill } from '../components/StatusPill.tsx';
import { formatDate, titleCaseType } from '../entities/format.ts';
import { instrumentListSchema, runSchema, unitOperationSchema, type Instrument, type Run, type UnitOperation } from '../entities/types.ts';
import { TimeSeriesChart, type XRange } from '../charts/TimeSeriesChart.tsx';
import { paletteColor } from '../charts/chart-constants.ts';
import { parameterLabel, rangeEndMs, seriesLook, type ChartSeries } from '../charts/series-model.ts';
import { toEpochMs } from '../charts/time-axis.ts';
import { useSeriesWindow } from '../charts/use-series-window.ts';
import { LiveIndicator } from '../live/LiveIndicator.tsx';
import { ParameterList } from './ParameterList.tsx';
import { alertEventsPath, useAlertEvents } from '../alerts/alert-queries.ts';
import { alertBandsOf } from '../alerts/alert-bands-model.ts';
import { CommentsCard } from './CommentsCard.tsx';
import { CommentDialog } from './CommentDialog.tsx';
import { DeleteCommentDialog } from './DeleteCommentDialog.tsx';
import { toCommentView, type ApiComment, type CommentView } from './comments-model.ts';
import { chartSpan, useInstrumentsWithData } from './use-instruments-with-data.ts';
import { offeredInstruments } from './ShowAllInstrumentsSwitch.tsx';
import { DerivedParameterChooser, useDerivedSeries } from '../derived/DerivedParameterChooser.tsx';
import { derivedChartPoints, type DerivedParameterView } from '../derived/derived-model.ts';
import { ExportDialog } from '../exports/ExportDialog.tsx';
import { unitOperationScope } from '../exports/export-request.ts';
import { sampleSchema } from '@bioprocess/shared/samples';
import { z } from 'zod';
import { SamplesCard } from '../samples/SamplesCard.tsx';
import { SampleAnalyteList } from '../samples/SampleAnalyteList.tsx';
import { sampleAnalytes, sampleChartSeries } from '../samples/sample-series.ts';
import type { SampleView } from '../samples/grid-model.ts';
import './unit-operation-detail.css';

export const DETAIL_MESSAGES = {
  notFound: 'Unit operation not found for this step.',
  parametersFailed: 'Failed to fetch process parameters.',
  seriesFailed: 'Failed to fetch time series data.',
} as const;

const samplesListSchema = z.array(sampleSchema);

type CommentDialogState = { mode: 'create'; minute: number } | { mode: 'edit'; comment: CommentView } | null;

export function UnitOperationDetailPage() {
  const { runId, unitOpId } = useParams();
  const navigate = useNavigate();
  const { permissions } = useAuth();
  const [exporting, setExporting] = useState(false);
  const unitOperationId = /^\d+$/.test(unitOpId ?? '') ? Number(unitOpId) : null;

  const operation = useApi<UnitOperation>(unitOperationId ? `/api/v1/unit-operations/${unitOperationId}` : null, unitOperationSchema);
  const uo = operation.data;
  const startMs = useMemo(() => {
    const start = toEpochMs(uo?.startTime ?? null);
    return Number.isNaN(start) ? null : start;
  }, [uo?.startTime]);

  const run = useApi<Run>(uo ? `/api/v1/runs/${uo.runId}` : null, runSchema);
  const instruments = useApi<Instrument[]>(uo?.equipmentId ? `/api/v1/equipment/${uo.equipmentId}/instruments` : null, instrumentListSchema);
  // An operation still running draws its new readings as they are stored.
  const running = useMemo(() => !!uo && (!uo.endTime || toEpochMs(uo.endTime) > Date.now()), [uo]);
  const withData = useInstrumentsWithData(uo?.id ?? null, { followsLive: running });
  // While the window is open the chart spans the data, not start-to-now; 'now' is fixed when the page loads.
  const span = useMemo(() => (uo
    ? chartSpan({ startMs, endMs: uo.endTime ? rangeEndMs(uo.endTime) : null }, withData, Date.now())
    : null), [uo, startMs, withData]);
  const endMs = span?.endMs ?? null;
  const [showAllInstruments, setShowAllInstruments] = useState(false);
  // When the request for which instruments hold data fails, every instrument is offered.
  const parameters = useMemo(() => offeredInstruments(instruments.data ?? [], withData.ids, showAllInstruments), [instruments.data, withData.ids, showAllInstruments]);
  const hiddenInstruments = withData.ids ? (instruments.data ?? []).filter((i) => !withData.ids!.has(i.id)).length : 0;

  const [selection, setSelection] = useState<Set<number> | null>(null);
  // Until the user chooses, the first parameter is shown so the chart is never empty on arrival.
  const selected = useMemo(() => selection ?? new Set(parameters.slice(0, 1).map((p) => p.id)), [selection, parameters]);
  const selectedIds = useMemo(() => parameters.filter((p) => selected.has(p.id)).map((p) => p.id), [parameters, selected]);
  const [xRange, setXRange] = useState<XRange | null>(null);
  const chartStart = span?.startMs ?? null;
  const seriesWindow = useSeriesWindow(selectedIds, chartStart, endMs, xRange, DETAIL_MESSAGES.seriesFailed, running);

  const lookOf = useCallback((id: number) => seriesLook(Math.max(0, parameters.findIndex((p) => p.id === id))), [parameters]);
  const colorOf = useCallback((id: number) => lookOf(id).color, [lookOf]);

  const series = useMemo<ChartSeries[]>(() => parameters
    .filter((p) => selected.has(p.id))
    .map((p) => ({
      id: `instrument-${p.id}`,
      name: p.name,
      detail: parameterLabel(p.type, p.unit),
      unit: p.unit,
      ...lookOf(p.id),
      symbol: 'circle',
      opacity: 1,
      step: p.drawAsSteps,
      data: seriesWindow.pointsByInstrument.get(p.id) ?? [],
    })), [parameters, selected, lookOf, seriesWindow.pointsByInstrument]);

  // Derived parameters drawn dashed, after the instruments' colours.
  const [derivedChosen, setDerivedChosen] = useState<DerivedParameterView[]>([]);
  const derivedIds = useMemo(() => derivedChosen.map((derived) => derived.id), [derivedChosen]);
  const derivedResults = useDerivedSeries(uo?.id ?? null, derivedIds);
  const derivedColorOf = useCallback((id: number) => paletteColor(parameters.length + Math.max(0, derivedIds.indexOf(id))), [parameters.length, derivedIds]);
  // Samples as markers, after the derived parameters' colours; every analyte is shown until the user chooses.
  const samplesPath = uo ? `/api/v1/unit-operations/${uo.id}/samples` : null;
  const samples = useApi<SampleView[]>(samplesPath, samplesListSchema);
  const analytes = useMemo(() => sampleAnalytes(samples.data ?? []), [samples.data]);
  const [analyteSelection, setAnalyteSelection] = useState<Set<string> | null>(null);
  const chosenAnalytes = useMemo(() => analyteSelection ?? new Set(analytes.map((entry) => entry.key)), [analyteSelection, analytes]);
  const sampleColorStart = parameters.length + derivedIds.length;
  const sampleSeries = useMemo(
    () => sampleChartSeries(samples.data ?? [], chosenAnalytes, chartStart, sampleColorStart),
    [samples.data, chosenAnalytes, chartStart, sampleColorStart],
  );
  const analyteColorOf = useCallback((key: string) => sampleSeries.find((s) => s.id === `sample-${key}`)?.color, [sampleSeries]);

  const chartSeries = useMemo<ChartSeries[]>(() => [
    ...series,
    // One this unit operation cannot compute says why in the list, and takes no axis here.
    ...derivedChosen.filter((derived) => !derivedResults.get(derived.id)?.error).map((derived) => ({
      id: `derived-${derived.id}`,
      name: derived.name,
      detail: derived.unit ? `derived [${derived.unit}]` : 'derived',
      unit: derived.unit,
      color: derivedColorOf(derived.id),
      symbol: 'circle' as const,
      opacity: 1,
      dashStyle: 'ShortDash' as const,
      data: derivedChartPoints(derivedResults.get(derived.id)?.series, chartStart),
    })),
    ...sampleSeries,
  ], [series, derivedChosen, derivedColorOf, derivedResults, chartStart, sampleSeries]);

  const commentsPath = uo ? `/api/v1/unit-operations/${uo.id}/comments` : null;
  const comments = useApi<ApiComment[]>(commentsPath);
  const commentViews = useMemo(() => (comments.data ?? []).map((c) => toCommentView(c, chartStart)), [comments.data, chartStart]);
  const alertEvents = useAlertEvents(unitOperationId !== null ? alertEventsPath({ unitOperationId }) : null);
  const alertBands = useMemo(() => alertBandsOf(alertEvents.data, chartStart), [alertEvents.data, chartStart]);
  const [dialog, setDialog] = useState<CommentDialogState>(null);
  const [deleting, setDeleting] = useState<CommentView | null>(null);

  const createComment = async (values: { content: string; timestamp: string }) => {
    try {
      await apiRequest('POST', '/api/v1/comments', { timestamp: values.timestamp, unit_operations_id: uo!.id, content: values.content });
      showToast({ title: 'Comment added', intent: 'success' });
      setDialog(null);
      await comments.mutate();
    } catch (error) {
      console.error('Failed to create comment', error);
      showToast({ title: 'Comment failed', message: error instanceof Error ? error.message : undefined, intent: 'danger' });
      throw error;
    }
  };
  const updateComment = async (comment: CommentView, values: { content: string; timestamp: string }) => {
    try {
      await apiRequest('PUT', `/api/v1/comments/${comment.id}`, { content: values.content, timestamp: values.timestamp });
      showToast({ title: 'Comment updated', intent: 'success' });
      setDialog(null);
      await comments.mutate();
    } catch (error) {
      console.error('Failed to update comment', error);
      showToast({ title: 'Update failed', message: 'There was an error updating the comment.', intent: 'danger' });
      throw error;
    }
  };
  const deleteComment = async (comment: CommentView) => {
    try {
      await apiRequest('DELETE', `/api/v1/comments/${comment.id}`);
      showToast({ title: 'Comment deleted', intent: 'success' });
      setDeleting(null);
      await comments.mutate();
    } catch (error) {
      console.error('Failed to delete comment', error);
      showToast({ title: 'Delete failed', message: error instanceof Error ? error.message : undefined, intent: 'danger' });
      throw error;
    }
  };

  const backButton = <Button icon="arrow-left" variant="minimal" text="Back" onClick={() => navigate(`/runs/${runId ?? ''}`)} />;

  if (unitOperationId === null || operation.error) {
    const notFound = unitOperationId === null || (operation.error as { status?: number } | undefined)?.status === 404;
    return (
      <div className="uo-page">
        {backButton}
        <NonIdealState icon="search" title={notFound ? DETAIL_MESSAGES.notFound : 'Failed to load the unit operation.'}
          description={notFound ? undefined : operation.error?.message} />
      </div>
    );
  }
  if (!uo) {
    return <div className="uo-page uo-page-loading"><Spinner /></div>;
  }

  const canComment = permissions.canEdit && chartStart !== null;
  const runName = run.data?.name?.trim() || `Run ${uo.runId}`;

  return (
    <div className="uo-page" data-testid="unit-operation-detail">
      <div className="uo-header">
        {backButton}
        <Card className="uo-header-card">
          <div className="uo-header-title">
            <H3>Name: {titleCaseType(uo.type)}</H3>
            <StatusPill status={uo.status} />
            {permissions.canExport ? <Button icon="export" text="Export" className="uo-export-button" onClick={() => setExporting(true)} /> : null}
          </div>
          <dl className="uo-header-fields">
            <div><dt>Start</dt><dd>{formatDate(uo.startTime)}</dd></div>
            <div><dt>End</dt><dd>{formatDate(uo.endTime)}</dd></div>
            <div><dt>Run</dt><dd><Tag minimal title={runName}>{runName}</Tag></dd></div>
          </dl>
        </Card>
      </div>
      {permissions.canExport ? (
        <ExportDialog isOpen={exporting} onClose={() => setExporting(false)} loading={uo.equipmentId !== null && !instruments.data && !instruments.error}
          scopes={[unitOperationScope(uo, `${titleCaseType(uo.type)} of ${runName}`, instruments.data ?? [], withData.ids)]} />
      ) : null}

      <div className="uo-main">
        <div className="uo-side">
        <ParameterList instruments={parameters} selected={selected} colorOf={colorOf}
          loading={instruments.isLoading || withData.loading}
          error={instruments.error ? DETAIL_MESSAGES.parametersFailed : null}
          showAll={withData.ids ? { checked: showAllInstruments, hiddenCount: hiddenInstruments, onChange: setShowAllInstruments } : undefined}
          onToggle={(id, checked) => setSelection(() => {
            const next = new Set(selected);
            if (checked) next.add(id); else next.delete(id);
            return next;
          })}
          onToggleAll={(checked) => setSelection(new Set(checked ? parameters.map((p) => p.id) : []))} />
        <DerivedParameterChooser selected={new Set(derivedIds)} results={derivedResults} colorOf={derivedColorOf}
          onToggle={(derived, checked) => setDerivedChosen((chosen) => (checked
            ? [...chosen.filter((other) => other.id !== derived.id), derived]
            : chosen.filter((other) => other.id !== derived.id)))} />
        <SampleAnalyteList analytes={analytes} selected={chosenAnalytes} colorOf={analyteColorOf}
          onToggle={(key, checked) => setAnalyteSelection(() => {
            const next = new Set(chosenAnalytes);
            if (checked) next.add(key); else next.delete(key);
            return next;
          })} />
        </div>
        <Card className="uo-card uo-chart-card">
          {startMs === null && (
            <p className="bp6-text-muted">This unit operation has no start time; minutes count from its first reading.</p>
          )}
          <TimeSeriesChart testId="process-parameters-chart" title="Process Parameters" series={chartSeries} comments={commentViews} alertBands={alertBands} startMs={chartStart}
            loading={seriesWindow.loading} error={seriesWindow.error} xRange={xRange} onXRangeChange={setXRange}
            refining={seriesWindow.refining} badge={running && selectedIds.length > 0 ? <LiveIndicator state={seriesWindow.live} /> : undefined}
            onPlotClick={canComment ? (minute) => setDialog({ mode: 'create', minute }) : undefined} />
          {permissions.canEdit && chartSeries.some((s) => s.data.length > 0) && (
            <p className="uo-chart-hint bp6-text-muted">Click the chart to add a comment at that time; drag to zoom.</p>
          )}
        </Card>
      </div>

      {samplesPath ? (
        <SamplesCard path={samplesPath} samples={samples.data} loading={samples.isLoading} error={samples.error} canEdit={permissions.canEdit}
          exportUnitOperationId={permissions.canExport ? uo?.id : null}
          onSaved={(saved) => samples.mutate(saved, { revalidate: false })} />
      ) : null}

      <CommentsCard comments={commentViews} canEdit={permissions.canEdit} loading={comments.isLoading}
        onEdit={(comment) => setDialog({ mode: 'edit', comment })} onDelete={setDeleting} />
      {comments.error && <p style={{ color: Colors.RED3 }}>{comments.error.message}</p>}

      {chartStart !== null && (
        <CommentDialog mode={dialog?.mode ?? 'create'} isOpen={dialog !== null} startMs={chartStart}
          initialMinute={dialog?.mode === 'edit' ? dialog.comment.minute : dialog?.minute ?? 0}
          initialContent={dialog?.mode === 'edit' ? dialog.comment.content : ''}
          onClose={() => setDialog(null)}
          onSubmit={(values) => (dialog?.mode === 'edit' ? updateComment(dialog.comment, values) : createComment(values))} />
      )}
      <DeleteCommentDialog comment={deleting} onClose={() => setDeleting(null)} onConfirm={deleteComment} />
    </div>
  );
}


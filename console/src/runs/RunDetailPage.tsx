/**
 * The run detail (/runs/{runId}): back button, header, the unit-operation flow with its
 * zoom toolbar, Key Insights, how far each unit operation is inside its golden batches' bands, and
 * the unit-operation and run dialogs for editors.
 */
import { Button, ButtonGroup, Callout, Card, Elevation, H2, H4, Intent, NonIdealState, Spinner } from '@blueprintjs/core';
import { useCallback, useMemo, useState } from 'react';
import { useNavigate, useParams } from 'react-router-dom';
import { apiRequest } from '../api/client.ts';
import { useApi } from '../api/hooks.ts';
import { useAuth } from '../auth/useAuth.ts';
import { AppTooltip } from '../components/AppTooltip.tsx';
import { StatusPill } from '../components/StatusPill.tsx';
import { ConfirmDialog } from '../components/dialogs/ConfirmDialog.tsx';
import { showToast } from '../components/toaster.ts';
import { EntityFormDialog } from '../entities/EntityFormDialog.tsx';
import { formatDate, titleCaseType } from '../entities/format.ts';
import { nameLookup, useEquipmentList, useFacilities, useInstruments, useRevalidate } from '../entities/queries.ts';
import { statusOf } from '../entities/run-metrics.ts';
import { runSchema, unitOperationListSchema, type Run, type UnitOperation } from '../entities/types.ts';
import { renderCsvUploadSection } from '../csv-upload/CsvUploadSection.tsx';
import { ExportDialog } from '../exports/ExportDialog.tsx';
import { runScope, unitOperationScope } from '../exports/export-request.ts';
import { GoldenBatchConformanceCard } from './GoldenBatchConformanceCard.tsx';
import { KeyInsightsCard } from './KeyInsightsCard.tsx';
import { RunAlertsCard } from '../alerts/RunAlertsCard.tsx';
import { ReadingsToRemove } from './ReadingsToRemove.tsx';
import { UnitOperationDialog, type UnitOperationDialogProps } from './UnitOperationDialog.tsx';
import { UnitOperationFlow } from './UnitOperationFlow.tsx';
import { useRunActions } from './useRunActions.tsx';
import { RunReviewPanel } from './RunReviewPanel.tsx';
import { useRunReview } from './run-review-queries.ts';
import { runLockedText } from './run-review-lock.ts';
import { formatZoom, ZOOM_DEFAULT, ZOOM_MAX, ZOOM_MIN, zoomIn, zoomOut } from './zoom.ts';
import './runs.css';

export const RUN_DETAIL_ERROR = 'Failed to fetch run details or unit operations.';
export const RUN_NOT_FOUND = 'Run not found.';

/** In flow order: by start time, operations without one after those with one, then by id. */
function flowOrder(a: UnitOperation, b: UnitOperation): number {
  const left = a.startTime ? Date.parse(a.startTime) : Infinity;
  const right = b.startTime ? Date.parse(b.startTime) : Infinity;
  return left === right ? a.id - b.id : left - right;
}

export interface RunDetailPageProps {
  /** Lets the time-series console put its CSV upload into the unit-operation dialog. */
  csvSection?: UnitOperationDialogProps['csvSection'];
}

export function RunDetailPage({ csvSection = renderCsvUploadSection }: RunDetailPageProps = {}) {
  const { runId: runIdParam } = useParams();
  const runId = Number(runIdParam);
  const validId = Number.isSafeInteger(runId) && runId > 0;
  const navigate = useNavigate();
  const { permissions } = useAuth();
  const revalidate = useRevalidate();
  const run = useApi<Run>(validId ? `/api/v1/runs/${runId}` : null, runSchema);
  const unitOperations = useApi<UnitOperation[]>(validId ? `/api/v1/runs/${runId}/unit-operations` : null, unitOperationListSchema);
  const facilities = useFacilities();
  const equipment = useEquipmentList();
  const instruments = useInstruments();
  const runActions = useRunActions(() => navigate('/runs/overview'));
  const review = useRunReview(validId ? runId : null);

  const [zoom, setZoom] = useState(ZOOM_DEFAULT);
  const [dialog, setDialog] = useState<{ mode: 'create' } | { mode: 'edit'; unitOperation: UnitOperation } | null>(null);
  const [deleting, setDeleting] = useState<UnitOperation | null>(null);
  const [deleteBusy, setDeleteBusy] = useState(false);
  const [editingRun, setEditingRun] = useState(false);
  const [exporting, setExporting] = useState(false);

  const facilityName = useMemo(() => nameLookup(facilities.data, 'Facility'), [facilities.data]);
  const equipmentName = useMemo(() => nameLookup(equipment.data, 'Equipment'), [equipment.data]);
  const ordered = useMemo(() => [...(unitOperations.data ?? [])].sort(flowOrder), [unitOperations.data]);
  const changeZoom = useCallback((update: (zoom: number) => number) => setZoom(update), []);

  const goBack = () => {
    // Back in history when the user came from inside the console, else to the runs list.
    const index = (window.history.state as { idx?: number } | null)?.idx ?? 0;
    if (index > 0) navigate(-1);
    else navigate('/runs/overview');
  };

  const confirmDelete = async () => {
    if (!deleting) return;
    setDeleteBusy(true);
    try {
      await apiRequest('DELETE', `/api/v1/unit-operations/${deleting.id}`);
      showToast({ title: 'Unit operation deleted successfully!', intent: 'success' });
      setDeleting(null);
      await revalidate(`/api/v1/runs/${runId}`, '/api/v1/unit-operations');
    } catch (cause) {
      console.error('Failed to delete unit operation', cause);
      showToast({ title: 'Failed to delete unit operation', message: 'Please try again.', intent: 'danger' });
    } finally {
      setDeleteBusy(false);
    }
  };

  // The same answer as a missing unit operation: an id that is not a run, or not one of this
  // organisation's (the api answers 404 for both), is a page that does not exist, not a failure.
  // Either request may answer first; both answer 404 for a missing run.
  const isMissing = (error: unknown) => (error as { status?: number } | undefined)?.status === 404;
  const notFound = !validId || isMissing(run.error) || isMissing(unitOperations.error);
  if (notFound) {
    return (
      <div className="app-page" data-testid="run-not-found">
        <Button icon="arrow-left" variant="minimal" text="Back" onClick={goBack} className="app-back-button" />
        <NonIdealState icon="search" title={RUN_NOT_FOUND} description={`There is no run ${runIdParam ?? ''} in this organisation.`}
          action={<Button icon="list" text="All runs" onClick={() => navigate('/runs/overview')} />} />
      </div>
    );
  }
  const failed = run.error || unitOperations.error;
  if (failed) {
    console.error(RUN_DETAIL_ERROR, run.error ?? unitOperations.error);
    return (
      <div className="app-page">
        <Button icon="arrow-left" variant="minimal" text="Back" onClick={goBack} className="app-back-button" />
        <Callout intent={Intent.DANGER} icon="error" className="app-page-callout" data-testid="run-detail-error">{RUN_DETAIL_ERROR}</Callout>
      </div>
    );
  }

  if (!run.data) {
    return <div className="app-page"><NonIdealState icon={<Spinner size={40} />} title="Loading run..." /></div>;
  }

  const current = run.data;
  const lockedText = runLockedText(current.name, review.data?.state);
  const canChange = (permissions.canEdit || permissions.canCreate) && !lockedText;

  return (
    <div className="app-page">
      <Button icon="arrow-left" variant="minimal" text="Back" onClick={goBack} className="app-back-button" />
      <Card elevation={Elevation.ONE} className="app-run-header">
        <div className="app-run-header-top">
          <div className="app-run-header-title">
            <H2>{current.name}</H2>
            <StatusPill status={statusOf(current)} />
          </div>
          {permissions.canEdit || permissions.canExport ? (
            <ButtonGroup>
              {permissions.canExport ? <Button icon="export" text="Export" onClick={() => setExporting(true)} /> : null}
              {permissions.canEdit ? (
                <AppTooltip content={lockedText ?? ''} disabled={!lockedText}>
                  <Button icon="edit" text="Edit Run" disabled={Boolean(lockedText)} onClick={() => setEditingRun(true)} />
                </AppTooltip>
              ) : null}
              {permissions.canEdit ? (
                <AppTooltip content={lockedText ?? ''} disabled={!lockedText}>
                  <Button icon="trash" intent={Intent.DANGER} variant="outlined" text="Delete" disabled={Boolean(lockedText)} onClick={() => runActions.remove(current)} />
                </AppTooltip>
              ) : null}
            </ButtonGroup>
          ) : null}
        </div>
        <div className="app-run-facts">
          <Fact label="Strain" value={current.strain ?? '-'} />
          <Fact label="Target" value={current.target ?? '-'} />
          <Fact label="Facility" value={facilityName(current.facilityId)} />
          <Fact label="Start" value={formatDate(current.startTime)} />
          <Fact label="End" value={formatDate(current.endTime)} />
          <Fact label="Scale" value={[current.scaleLiters != null ? `${current.scaleLiters} L` : null, current.scaleGrams != null ? `${current.scaleGrams} g` : null].filter(Boolean).join(' / ') || '-'} />
        </div>
        {current.description ? <p className="app-run-description">{current.description}</p> : null}
      </Card>

      <RunReviewPanel runId={runId} />

      <div className="app-run-detail-grid">
        <Card elevation={Elevation.ONE} className="app-flow-card">
          <div className="app-flow-toolbar">
            <H4>Unit Operations</H4>
            <ButtonGroup variant="outlined" aria-label="Zoom">
              <AppTooltip content="Zoom out (Ctrl + wheel)">
                <Button icon="zoom-out" aria-label="Zoom out" disabled={zoom <= ZOOM_MIN} onClick={() => setZoom(zoomOut)} />
              </AppTooltip>
              <Button className="app-zoom-label" text={formatZoom(zoom)} disabled data-testid="zoom-level" />
              <AppTooltip content="Zoom in (Ctrl + wheel)">
                <Button icon="zoom-in" aria-label="Zoom in" disabled={zoom >= ZOOM_MAX} onClick={() => setZoom(zoomIn)} />
              </AppTooltip>
              <Button icon="reset" text="Reset" onClick={() => setZoom(ZOOM_DEFAULT)} />
            </ButtonGroup>
          </div>
          {lockedText ? <Callout intent={Intent.WARNING} icon="lock" className="app-page-callout" data-testid="run-locked">{lockedText}</Callout> : null}
          {unitOperations.data ? (
            <UnitOperationFlow runId={runId} unitOperations={ordered} equipmentName={equipmentName} zoom={zoom} onZoomChange={changeZoom}
              canEdit={permissions.canEdit && !lockedText} canCreate={permissions.canCreate && !lockedText} onAdd={() => setDialog({ mode: 'create' })}
              onEdit={(unitOperation) => setDialog({ mode: 'edit', unitOperation })} onDelete={setDeleting} />
          ) : <div className="app-table-empty"><Spinner size={28} /></div>}
        </Card>
        <KeyInsightsCard run={current} unitOperations={unitOperations.data} instruments={instruments.data} />
        <GoldenBatchConformanceCard unitOperations={unitOperations.data} />
        {Number.isSafeInteger(runId) ? <RunAlertsCard runId={runId} /> : null}
      </div>

      {canChange ? (
        <UnitOperationDialog isOpen={dialog !== null} onClose={() => setDialog(null)} runId={runId}
          unitOperation={dialog?.mode === 'edit' ? dialog.unitOperation : null} csvSection={csvSection} />
      ) : null}
      <ConfirmDialog
        isOpen={deleting !== null}
        title="Delete unit operation"
        destructive
        busy={deleteBusy}
        confirmLabel="Delete"
        onClose={() => setDeleting(null)}
        onConfirm={confirmDelete}
        description={deleting
          ? `Delete the ${titleCaseType(deleting.type)} unit operation and its time-series data? This action cannot be undone.`
          : undefined}
      >
        {deleting ? <ReadingsToRemove unitOperationId={deleting.id} verb="Deleting it" /> : null}
      </ConfirmDialog>
      {permissions.canExport ? (
        <ExportDialog isOpen={exporting} onClose={() => setExporting(false)}
          loading={(!unitOperations.data && !unitOperations.error) || (!instruments.data && !instruments.error)} scopes={[
          runScope(current, ordered, instruments.data ?? []),
          ...ordered.map((operation) => unitOperationScope(operation, `${titleCaseType(operation.type)} (unit operation ${operation.id})`, instruments.data ?? [])),
        ]} />
      ) : null}
      <EntityFormDialog kind="run" isOpen={editingRun} record={current} onClose={() => setEditingRun(false)}
        onSaved={() => showToast({ title: 'Run updated successfully', intent: 'success' })} />
      {runActions.dialogs}
    </div>
  );
}

function Fact({ label, value }: { label: string; value: string }) {
  return (
    <div>
      <div className="app-run-fact-label">{label}</div>
      <div className="app-run-fact-value">{value}</div>
    </div>
  );
}

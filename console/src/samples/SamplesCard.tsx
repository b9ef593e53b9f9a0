/**
 * The Samples card of the unit-operation page: the grid of the operation's samples with Save and
 * Discard. One Save sends every changed row and removed sample in one request, which the api applies
 * all or nothing; the cells it refuses are marked in the grid like the console's own checks. Those who
 * may export download the samples as CSV: wide (the grid's layout, to paste back) or long (every field).
 */
import { useEffect, useMemo, useState } from 'react';
import { Button, ButtonGroup, Callout, Card, H4, InputGroup, Tag } from '@blueprintjs/core';
import { sampleGridErrorSchema, type SampleCellError } from '@bioprocess/shared/samples';
import { ApiError, apiRequest } from '../api/client.ts';
import { showToast } from '../components/toaster.ts';
import { downloadExport } from '../exports/export-request.ts';
import type { SampleExportFormat } from '@bioprocess/shared/samples';
import { addColumn, buildSaveRequest, gridFromSamples, gridProblems, isGridChanged, serverProblems, type GridState, type SampleView } from './grid-model.ts';
import { parseHeaderCell } from './paste-parser.ts';
import { SampleGrid } from './SampleGrid.tsx';
import { ReportImportDialog } from './ReportImportDialog.tsx';
import './samples.css';

export const SAMPLES_MESSAGES = {
  empty: 'No samples yet.',
  pasteHint: 'Paste from a spreadsheet: with a header row (Sample ID, Drawn, Glucose [g/L] …) columns are placed by name; without one the block fills the grid from the selected cell. Flags are written < 0.5 or > 50.',
  columnHint: 'Write the analyte and its UCUM unit, e.g. Glucose [g/L] or VCD [10*6/mL] (Vi-CELL BLU).',
} as const;

export interface SamplesCardProps {
  path: string;
  samples: readonly SampleView[] | undefined;
  loading: boolean;
  error: Error | undefined;
  canEdit: boolean;
  /** Given to those who may export: the unit operation whose samples the Export buttons download. */
  exportUnitOperationId?: number | null;
  /** Takes the unit operation's samples as the save answered them. */
  onSaved: (samples: SampleView[]) => Promise<unknown>;
}

type Problems = Map<string, Map<string, string>>;

/** The unit operation a samples path belongs to (`/api/v1/unit-operations/7/samples`). */
function unitOperationOfPath(path: string): number | null {
  const match = /\/unit-operations\/(\d+)\/samples$/.exec(path);
  return match ? Number(match[1]) : null;
}

function mergeProblems(first: Problems, second: Problems): Problems {
  const merged: Problems = new Map([...first].map(([row, cells]) => [row, new Map(cells)]));
  for (const [row, cells] of second) {
    if (!merged.has(row)) merged.set(row, new Map());
    for (const [column, message] of cells) if (!merged.get(row)!.has(column)) merged.get(row)!.set(column, message);
  }
  return merged;
}

function countCells(problems: Problems): number {
  return [...problems.values()].reduce((sum, cells) => sum + cells.size, 0);
}

export function SamplesCard({ path, samples, loading, error, canEdit, exportUnitOperationId, onSaved }: SamplesCardProps) {
  const [grid, setGrid] = useState<GridState>(() => gridFromSamples(samples ?? []));
  const [refused, setRefused] = useState<Problems>(new Map());
  const [saving, setSaving] = useState(false);
  const [newColumn, setNewColumn] = useState('');

  // What is stored replaces the grid whenever it changes (a save, another tab's save on revalidation)
  // unless the grid holds edits of its own.
  useEffect(() => {
    setGrid((current) => (isGridChanged(current) ? current : gridFromSamples(samples ?? [])));
  }, [samples]);

  const local = useMemo(() => gridProblems(grid), [grid]);
  const problems = useMemo(() => mergeProblems(local, refused), [local, refused]);
  const changed = isGridChanged(grid);
  const badCells = countCells(problems);

  const edit = (next: GridState) => {
    setGrid(next);
    setRefused(new Map());
  };

  const save = async () => {
    if (countCells(local) > 0) return;
    const { body, rowKeys } = buildSaveRequest(grid);
    setSaving(true);
    try {
      const saved = await apiRequest<SampleView[]>('PUT', path, body);
      setGrid(gridFromSamples(saved));
      setRefused(new Map());
      await onSaved(saved);
      showToast({ title: 'Samples saved', intent: 'success' });
    } catch (caught) {
      const cells: SampleCellError[] = caught instanceof ApiError ? sampleGridErrorSchema.safeParse(caught.body).data?.cells ?? [] : [];
      setRefused(serverProblems(grid, rowKeys, cells));
      showToast({ title: 'Samples not saved', message: caught instanceof Error ? caught.message : undefined, intent: 'danger' });
    } finally {
      setSaving(false);
    }
  };

  const [exporting, setExporting] = useState<SampleExportFormat | null>(null);
  const exportSamples = async (format: SampleExportFormat) => {
    if (!exportUnitOperationId) return;
    setExporting(format);
    try {
      await downloadExport(`/api/v1/exports/samples?unit_operation_id=${exportUnitOperationId}&format=${format}`, `unit-operation-${exportUnitOperationId}-samples-${format.slice(4)}.csv`);
      showToast({ title: 'Samples exported', intent: 'success' });
    } catch (caught) {
      showToast({ title: 'Samples not exported', message: caught instanceof Error ? caught.message : undefined, intent: 'danger' });
    } finally {
      setExporting(null);
    }
  };

  const [importing, setImporting] = useState(false);
  const importUnitOperationId = unitOperationOfPath(path);
  const imported = async (result: { samples_created: number; samples_updated: number; results_added: number; results_replaced: number }) => {
    const stored = await apiRequest<SampleView[]>('GET', path);
    setGrid(gridFromSamples(stored));
    setRefused(new Map());
    await onSaved(stored);
    showToast({
      title: 'Report imported',
      message: `${result.results_added} results added and ${result.results_replaced} replaced in ${result.samples_updated} samples; ${result.samples_created} samples created.`,
      intent: 'success',
    });
  };

  const addAnalyteColumn = () => {
    const spec = parseHeaderCell(newColumn);
    if (spec?.kind !== 'result') return;
    edit(addColumn(grid, spec));
    setNewColumn('');
  };
  const newColumnValid = parseHeaderCell(newColumn)?.kind === 'result';

  return (
    <Card className="uo-card samples-card" data-testid="samples-card">
      <div className="uo-card-header">
        <H4>Samples <Tag minimal round>{samples?.length ?? 0}</Tag></H4>
        {exportUnitOperationId && (samples?.length ?? 0) > 0 ? (
          <ButtonGroup className="samples-export" aria-label="Export samples">
            <Button icon="export" text="Export wide" title="One row per sample, as the grid pastes it" loading={exporting === 'csv-wide'}
              onClick={() => { void exportSamples('csv-wide'); }} data-testid="samples-export-wide" />
            <Button text="Export long" title="One row per result, with measured times" loading={exporting === 'csv-long'}
              onClick={() => { void exportSamples('csv-long'); }} data-testid="samples-export-long" />
          </ButtonGroup>
        ) : null}
        {canEdit ? (
          <div className="samples-actions">
            {importUnitOperationId ? (
              <Button text="Import report" icon="import" disabled={changed || saving} title={changed ? 'Save or discard the grid first' : 'Import an analyzer report'}
                onClick={() => setImporting(true)} data-testid="samples-import-report" />
            ) : null}
            <Button text="Discard" icon="undo" disabled={!changed || saving}
              onClick={() => { setGrid(gridFromSamples(samples ?? [])); setRefused(new Map()); }} />
            <Button text="Save" icon="floppy-disk" intent="primary" loading={saving} disabled={!changed || countCells(local) > 0}
              onClick={() => { void save(); }} data-testid="samples-save" />
          </div>
        ) : null}
      </div>
      {error ? <Callout intent="danger" compact>{error.message}</Callout> : null}
      {loading ? <p className="bp6-text-muted">Loading samples...</p> : (
        <>
          {canEdit ? <p className="bp6-text-muted samples-hint">{SAMPLES_MESSAGES.pasteHint}</p> : null}
          {!canEdit && (samples?.length ?? 0) === 0 ? <p className="bp6-text-muted">{SAMPLES_MESSAGES.empty}</p> : (
            <SampleGrid state={grid} onChange={edit} problems={problems} readOnly={!canEdit} />
          )}
          {badCells > 0 ? (
            <Callout intent="danger" compact className="samples-problems" data-testid="samples-problems">
              {badCells === 1 ? '1 cell needs' : `${badCells} cells need`} attention; they are marked in the grid.
            </Callout>
          ) : null}
          {canEdit ? (
            <form className="samples-add-column" onSubmit={(event) => { event.preventDefault(); addAnalyteColumn(); }}>
              <InputGroup size="small" placeholder="Add a column: Glucose [g/L]" value={newColumn} aria-label="New analyte column"
                onChange={(event) => setNewColumn(event.target.value)} intent={newColumn && !newColumnValid ? 'danger' : 'none'} title={SAMPLES_MESSAGES.columnHint} />
              <Button size="small" type="submit" icon="add-column-right" text="Add column" disabled={!newColumnValid} />
            </form>
          ) : null}
        </>
      )}
      {canEdit && importUnitOperationId ? (
        <ReportImportDialog isOpen={importing} unitOperationId={importUnitOperationId} onClose={() => setImporting(false)} onImported={imported} />
      ) : null}
    </Card>
  );
}

/**
 * The Export dialog of the run detail, unit-operation and compare pages: scope, instruments, range
 * (the whole unit operation unless narrowed), format, raw or downsampled; the file is downloaded by the
 * browser, or, when the export is too large to stream, written on the server while a progress bar
 * shows how far it got, then downloaded from the dialog. Shown only to users who may export (the api refuses the others anyway).
 */
import { Callout, Checkbox, FormGroup, HTMLSelect, InputGroup, Intent, Radio, RadioGroup, Spinner } from '@blueprintjs/core';
import { useId, useLayoutEffect, useMemo, useState } from 'react';
import { TIME_SERIES_EXPORT_FORMATS, type TimeSeriesExportFormat } from '@bioprocess/shared/exports';
import { FormDialog } from '../components/dialogs/FormDialog.tsx';
import { showToast } from '../components/toaster.ts';
import {
  EXPORT_FORMAT_LABELS, exportChoiceProblem, requestExport, timeSeriesExportPath, type ExportChoice, type ExportScopeOption,
} from './export-request.ts';
import { ExportJobProgress, useExportJob } from './ExportJobProgress.tsx';
import { RecentExportJobList, useRecentExportJobs } from './RecentExportJobs.tsx';
import { DateTimeField } from '../dates/DateTimeField.tsx';
import { ShowAllInstrumentsSwitch } from '../unit-operations/ShowAllInstrumentsSwitch.tsx';

/** Earlier time-series exports the dialog lists (their files stay downloadable for a while). */
const RECENT_SHOWN = 3;

export interface ExportDialogProps {
  isOpen: boolean;
  onClose: () => void;
  /** The first is chosen when the dialog opens. */
  scopes: ExportScopeOption[];
  /**
   * The page is still loading what the scopes list (unit operations, instruments): the choices wait,
   * rather than appear and then move under the pointer when the rest arrives.
   */
  loading?: boolean;
}

export function ExportDialog({ isOpen, onClose, scopes, loading = false }: ExportDialogProps) {
  const [scopeKey, setScopeKey] = useState('');
  const [showAllInstruments, setShowAllInstruments] = useState(false);
  const chosenScope = useMemo(() => scopes.find((option) => option.key === scopeKey) ?? scopes[0], [scopes, scopeKey]);
  const hiddenInstruments = chosenScope?.allInstruments ? chosenScope.allInstruments.length - chosenScope.instruments.length : 0;
  // Widened, the scope offers every instrument of the equipment, still named one by one in the request.
  const scope = showAllInstruments && chosenScope?.allInstruments ? { ...chosenScope, instruments: chosenScope.allInstruments } : chosenScope;
  const [unchecked, setUnchecked] = useState<Set<number>>(new Set());
  const [start, setStart] = useState('');
  const [end, setEnd] = useState('');
  const [format, setFormat] = useState<TimeSeriesExportFormat>('csv-wide');
  const [downsampled, setDownsampled] = useState(false);
  const [bucket, setBucket] = useState('1m');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const exportJob = useExportJob();
  const recent = useRecentExportJobs({ kind: 'time_series', limit: RECENT_SHOWN, enabled: isOpen });
  const { reset: resetJob } = exportJob;
  // Own radio-group names: a group named like another one on the page would uncheck it.
  const formatGroup = useId();
  const readingsGroup = useId();

  // Before the browser paints the opened dialog, so a first click cannot land before the reset.
  useLayoutEffect(() => {
    if (!isOpen) return;
    setScopeKey(scopes[0]?.key ?? '');
    setUnchecked(new Set());
    setShowAllInstruments(false);
    setStart('');
    setEnd('');
    setError(null);
    resetJob();
    // Reset only when the dialog opens: the scopes list is rebuilt on every render of the page.
  }, [isOpen, resetJob]);

  if (!scope) return null;
  const choice: ExportChoice = {
    scope,
    instrumentIds: scope.instruments.filter((instrument) => !unchecked.has(instrument.id)).map((instrument) => instrument.id),
    start, end, format, bucket: downsampled ? bucket : '',
  };
  const problem = exportChoiceProblem(choice);

  const submit = async () => {
    setBusy(true);
    setError(null);
    exportJob.reset();
    try {
      const outcome = await requestExport(timeSeriesExportPath(choice), `export.${format === 'xlsx' ? 'xlsx' : 'csv'}`);
      if (outcome.kind === 'job') {
        // Too large to stream: the dialog shows the job's progress, then its Download.
        exportJob.follow(outcome.job);
        void recent.refresh();
        return;
      }
      showToast({ title: 'Export downloaded', intent: 'success' });
      onClose();
    } catch (cause) {
      setError(cause instanceof Error ? cause.message : 'The export failed.');
    } finally {
      setBusy(false);
    }
  };

  return (
    <FormDialog title="Export Data" icon="export" isOpen={isOpen} onClose={onClose} onSubmit={submit} submitLabel="Export" busy={busy} steady
      submitDisabled={problem !== null || loading || exportJob.running} description="Time series as a file for spreadsheets and scripts.">
      {loading ? <Spinner size={28} aria-label="Loading" /> : <>
      {scopes.length > 1 ? (
        <FormGroup label="Scope" labelFor="export-scope">
          <HTMLSelect id="export-scope" fill value={scope.key} onChange={(event) => { setScopeKey(event.target.value); setUnchecked(new Set()); }}>
            {scopes.map((option) => <option key={option.key} value={option.key}>{option.label}</option>)}
          </HTMLSelect>
        </FormGroup>
      ) : <p><strong>{scope.label}</strong></p>}
      <FormGroup label="Instruments">
        {hiddenInstruments > 0 || showAllInstruments
          ? <ShowAllInstrumentsSwitch checked={showAllInstruments} onChange={setShowAllInstruments} hiddenCount={hiddenInstruments} /> : null}
        {scope.instruments.length === 0 ? <p className="bp6-text-muted">No instruments on this equipment.</p> : scope.instruments.map((instrument) => (
          <Checkbox key={instrument.id} label={instrument.unit ? `${instrument.name} [${instrument.unit}]` : instrument.name}
            checked={!unchecked.has(instrument.id)}
            onChange={(event) => {
              const checked = event.currentTarget.checked;
              setUnchecked((current) => {
                const next = new Set(current);
                if (checked) next.delete(instrument.id);
                else next.add(instrument.id);
                return next;
              });
            }} />
        ))}
      </FormGroup>
      <FormGroup label="Range" helperText="Empty: the whole unit operation.">
        <div className="app-export-range">
          <DateTimeField aria-label="Start" value={start} onChange={setStart} />
          <DateTimeField aria-label="End" value={end} onChange={setEnd} />
        </div>
      </FormGroup>
      <RadioGroup name={formatGroup} label="Format" selectedValue={format} onChange={(event) => setFormat(event.currentTarget.value as TimeSeriesExportFormat)}>
        {TIME_SERIES_EXPORT_FORMATS.map((value) => <Radio key={value} value={value} label={EXPORT_FORMAT_LABELS[value]} />)}
      </RadioGroup>
      <RadioGroup name={readingsGroup} label="Readings" selectedValue={downsampled ? 'downsampled' : 'raw'} onChange={(event) => setDownsampled(event.currentTarget.value === 'downsampled')}>
        <Radio value="raw" label="Raw readings" />
        <Radio value="downsampled" label="Downsampled: average, minimum and maximum per bucket" />
      </RadioGroup>
      {downsampled ? (
        <FormGroup label="Bucket width" labelFor="export-bucket" helperText="For example 10s, 5m or 1h.">
          <InputGroup id="export-bucket" value={bucket} onChange={(event) => setBucket(event.target.value)} />
        </FormGroup>
      ) : null}
      {problem && scope.instruments.length > 0 ? <Callout intent={Intent.WARNING}>{problem}</Callout> : null}
      {error ? <Callout intent={Intent.DANGER} title="Export failed">{error}</Callout> : null}
      <ExportJobProgress state={exportJob} />
      <RecentExportJobList recent={recent} title="Earlier exports" exceptId={exportJob.job?.id ?? null} itemTestId="earlier-export-job" />
      </>}
    </FormDialog>
  );
}

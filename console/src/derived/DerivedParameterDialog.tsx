/**
 * Create or edit a derived parameter: name, unit, description and the formula, checked as it is typed
 * (the problem marked under its position), with a live preview computed by the server on a chosen
 * unit operation. Sample analytes of that unit operation are offered too, with the formula's choice of
 * how values between samples are taken.
 */
import { Callout, FormGroup, HTMLSelect, InputGroup, Intent, TextArea } from '@blueprintjs/core';
import { useEffect, useLayoutEffect, useMemo, useState } from 'react';
import { parseExpression } from '@bioprocess/shared/derived/expression';
import type { SampleValueMode } from '@bioprocess/shared/derived/sample-values';
import { UNIT_OPERATION_PROPERTIES, UNIT_OPERATION_PROPERTY_NAMES } from '@bioprocess/shared/derived/properties';
import { apiRequest } from '../api/client.ts';
import { useApi } from '../api/hooks.ts';
import { FormDialog } from '../components/dialogs/FormDialog.tsx';
import { showToast } from '../components/toaster.ts';
import { TimeSeriesChart } from '../charts/TimeSeriesChart.tsx';
import { paletteColor } from '../charts/chart-constants.ts';
import { toEpochMs } from '../charts/time-axis.ts';
import { unitOperationLabel } from '../entities/format.ts';
import { useRuns } from '../entities/queries.ts';
import { unitOperationListSchema, type UnitOperation } from '../entities/types.ts';
import { FormulaReferences } from './FormulaReferences.tsx';
import { SampleReferences } from './SampleReferences.tsx';
import { caretLine, derivedChartPoints, derivedSeriesSchema, type DerivedParameterView, type DerivedSeriesView } from './derived-model.ts';

const PREVIEW_DELAY_MS = 400;

export interface DerivedParameterDialogProps {
  isOpen: boolean;
  record?: DerivedParameterView;
  onClose: () => void;
  onSaved: () => void;
}

export function DerivedParameterDialog({ isOpen, record, onClose, onSaved }: DerivedParameterDialogProps) {
  const [name, setName] = useState('');
  const [unit, setUnit] = useState('');
  const [description, setDescription] = useState('');
  const [expression, setExpression] = useState('');
  const [sampleValues, setSampleValues] = useState<SampleValueMode>('interpolate');
  const [submitted, setSubmitted] = useState(false);
  const [busy, setBusy] = useState(false);
  const [serverError, setServerError] = useState<string | null>(null);
  const [previewOn, setPreviewOn] = useState<number | null>(null);
  const [preview, setPreview] = useState<{ series?: DerivedSeriesView; error?: string; loading: boolean }>({ loading: false });

  // Before the opened dialog is painted, so nothing typed at once is reset.
  useLayoutEffect(() => {
    if (!isOpen) return;
    setName(record?.name ?? '');
    setUnit(record?.unit ?? '');
    setDescription(record?.description ?? '');
    setExpression(record?.expression ?? '');
    setSampleValues(record?.sampleValues ?? 'interpolate');
    setSubmitted(false);
    setServerError(null);
  }, [isOpen, record]);

  const unitOperations = useApi<UnitOperation[]>(isOpen ? '/api/v1/unit-operations?limit=500' : null, unitOperationListSchema);
  const runs = useRuns();
  const runName = useMemo(() => new Map((runs.data ?? []).map((run) => [run.id, run.name])), [runs.data]);
  const withStart = useMemo(() => (unitOperations.data ?? []).filter((uo) => uo.startTime && uo.equipmentId !== null).reverse(), [unitOperations.data]);
  const previewOperation = withStart.find((uo) => uo.id === previewOn) ?? withStart[0];

  const parsed = useMemo(() => parseExpression(expression), [expression]);
  const expressionError = expression.trim() === '' ? (submitted ? 'Expression is required' : null) : parsed.ok ? null : parsed.error;

  useEffect(() => {
    if (!isOpen || !previewOperation || !parsed.ok) return undefined;
    const controller = new AbortController();
    setPreview((previous) => ({ ...previous, loading: true }));
    const timer = setTimeout(() => {
      apiRequest<DerivedSeriesView>('POST', '/api/v1/derived-parameters/preview', { expression, sample_values: sampleValues, unit_operation_id: previewOperation.id },
        { schema: derivedSeriesSchema, signal: controller.signal })
        .then((series) => setPreview({ series, loading: false }))
        .catch((error: unknown) => {
          if (controller.signal.aborted) return;
          setPreview({ error: error instanceof Error ? error.message : 'Preview failed', loading: false });
        });
    }, PREVIEW_DELAY_MS);
    return () => { clearTimeout(timer); controller.abort(); };
  }, [isOpen, expression, sampleValues, parsed.ok, previewOperation]);

  const nameError = submitted && name.trim() === '' ? 'Name is required' : null;
  const insertReference = (reference: string) => setExpression((current) => (current === '' || /[\s(]$/.test(current) ? current + reference : `${current} ${reference}`));
  const submit = async () => {
    setSubmitted(true);
    if (name.trim() === '' || !parsed.ok) return;
    setBusy(true);
    setServerError(null);
    try {
      const body = { name, unit: unit || null, description: description || null, expression, sample_values: sampleValues };
      if (record) await apiRequest('PUT', `/api/v1/derived-parameters/${record.id}`, body);
      else await apiRequest('POST', '/api/v1/derived-parameters', body);
      showToast({ title: record ? 'Derived parameter updated' : 'Derived parameter created', intent: 'success' });
      onSaved();
      onClose();
    } catch (error) {
      setServerError(error instanceof Error ? error.message : 'Saving failed');
    } finally {
      setBusy(false);
    }
  };

  const previewStart = previewOperation ? toEpochMs(previewOperation.startTime) : null;
  const previewSeries = preview.series && previewStart !== null ? [{
    id: 'preview', name: name || 'Preview', unit: unit || null, color: paletteColor(0), symbol: 'circle' as const, opacity: 1,
    dashStyle: 'ShortDash' as const, data: derivedChartPoints(preview.series, previewStart),
  }] : [];

  return (
    <FormDialog isOpen={isOpen} onClose={onClose} onSubmit={submit} busy={busy} size="3xl"
      title={record ? `Edit ${record.name} (version ${record.version})` : 'Create derived parameter'}>
      {serverError ? <Callout intent={Intent.DANGER} icon="error" className="app-form-error">{serverError}</Callout> : null}
      <div className="derived-form-row">
        <FormGroup label="Name" labelFor="derived-name" labelInfo="(required)" intent={nameError ? Intent.DANGER : Intent.NONE} helperText={nameError}>
          <InputGroup id="derived-name" value={name} onChange={(event) => setName(event.target.value)} intent={nameError ? Intent.DANGER : Intent.NONE} />
        </FormGroup>
        <FormGroup label="Unit" labelFor="derived-unit">
          <InputGroup id="derived-unit" value={unit} onChange={(event) => setUnit(event.target.value)} placeholder="mmol/L/h" />
        </FormGroup>
      </div>
      <FormGroup label="Formula" labelFor="derived-expression" labelInfo="(required)" intent={expressionError ? Intent.DANGER : Intent.NONE}
        helperText={typeof expressionError === 'string' ? expressionError : expressionError ? (
          <span data-testid="expression-error">
            <pre className="derived-caret">{expression}{'\n'}{caretLine(expressionError.position)}</pre>
            Position {expressionError.position + 1}: {expressionError.message}
          </span>
        ) : (
          <span className="derived-help">
            Instruments in brackets by type, alias or name ([exhaust_o2], [&quot;Feed pump&quot;]); properties of the unit operation
            by name ({UNIT_OPERATION_PROPERTY_NAMES.map((property) => `${property} (${UNIT_OPERATION_PROPERTIES[property].unit})`).join(', ')});
            time functions time_derivative(x, &apos;h&apos;), time_integral(x, &apos;h&apos;), rolling_mean(x, &apos;10min&apos;), lag(x, &apos;5min&apos;),
            log_linear_slope(x, &apos;2h&apos;); sample analytes as sample(&quot;Glucose&quot;) or sample(&quot;Glucose&quot;, &quot;g/L&quot;).
          </span>
        )}>
        <TextArea id="derived-expression" value={expression} onChange={(event) => setExpression(event.target.value)} fill rows={3}
          className="derived-expression" intent={expressionError ? Intent.DANGER : Intent.NONE} spellCheck={false} />
      </FormGroup>
      <FormulaReferences unitOperation={previewOperation}
        onInsert={insertReference} />
      <SampleReferences unitOperationId={previewOperation?.id} onInsert={insertReference} />
      {parsed.ok && parsed.samples.length > 0 ? (
        <FormGroup label="Between samples" labelFor="derived-sample-values"
          helperText="Interpolate: linear between the neighbouring samples. Last value: held from each sample to the next. A flagged result is a gap either way.">
          <HTMLSelect id="derived-sample-values" value={sampleValues} onChange={(event) => setSampleValues(event.target.value as SampleValueMode)}>
            <option value="interpolate">Interpolate</option>
            <option value="last">Last value</option>
          </HTMLSelect>
        </FormGroup>
      ) : null}
      <FormGroup label="Description" labelFor="derived-description">
        <TextArea id="derived-description" value={description} onChange={(event) => setDescription(event.target.value)} fill rows={2} />
      </FormGroup>
      <FormGroup label="Preview on" labelFor="derived-preview-on">
        <HTMLSelect id="derived-preview-on" value={previewOperation?.id ?? ''} onChange={(event) => setPreviewOn(Number(event.target.value))}
          disabled={withStart.length === 0}>
          {withStart.length === 0 ? <option value="">No unit operation with readings yet</option> : null}
          {withStart.map((uo) => <option key={uo.id} value={uo.id}>{unitOperationLabel(uo, runName.get(uo.runId))}</option>)}
        </HTMLSelect>
      </FormGroup>
      <div data-testid="derived-preview">
        {preview.error && parsed.ok ? <Callout intent={Intent.WARNING} icon="warning-sign">{preview.error}</Callout> : (
          <TimeSeriesChart title="Preview" series={previewSeries} loading={preview.loading && !preview.series} startMs={previewStart} height={260} />
        )}
      </div>
    </FormDialog>
  );
}

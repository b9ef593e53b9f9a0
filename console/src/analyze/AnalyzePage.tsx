/**
 * Analyze (/analyze): pick reference runs of one unit-operation type (with the runs table's filters),
 * parameters, an alignment and a band; the envelope is drawn as a band around the median with the
 * chosen target runs overlaid, and a deviation table lists each target's parameters by their excursion
 * score with the reason in words. The band is widened to a tolerance per parameter (the references'
 * noise unless set here). Golden batches save and restore the definition, tolerances included;
 * viewers can look, editors and admins save. Fewer than five references are warned about.
 */
import { useMemo, useState } from 'react';
import {
  Button, Callout, Card, Checkbox, FormGroup, H4, HTMLSelect, HTMLTable, InputGroup, Intent, NonIdealState, NumericInput, Spinner, Tag,
} from '@blueprintjs/core';
import { HighchartsReact } from 'highcharts-react-official';
import {
  deviationSchema, envelopeSchema, goldenBatchSchema, type Alignment, type AnalysisParameter, type GoldenBatch,
} from '@bioprocess/shared/analysis';
import { INSTRUMENT_TYPES } from '@bioprocess/shared/enums';
import { z } from 'zod';
import { useApi } from '../api/hooks.ts';
import { apiRequest } from '../api/client.ts';
import { useAuth } from '../auth/useAuth.ts';
import { PageHeader } from '../components/PageHeader.tsx';
import { showToast } from '../components/toaster.ts';
import { fileStamp } from '../dates/date-time-format.ts';
import { titleCaseType } from '../entities/format.ts';
import { applyFilters, describeFilter, type RunFilter } from '../entities/run-filters.ts';
import {
  instrumentListSchema, runListSchema, unitOperationListSchema, type Camelize, type Instrument, type Run, type UnitOperation,
} from '../entities/types.ts';
import { RunFilterControl } from '../runs/RunFilterControl.tsx';
import { AlignmentForm } from '../alignment/AlignmentForm.tsx';
import { Highcharts } from '../charts/highcharts-setup.ts';
import { paletteColor } from '../charts/chart-constants.ts';
import { derivedParameterListSchema, type DerivedParameterView } from '../derived/derived-model.ts';
import { useCompareSamples } from '../compare/CompareSamples.tsx';
import {
  bandChoiceOf, deviationBody, deviationRows, envelopeBody, envelopeChartOptions, envelopeCsv, formatScore, formatShare, formatTolerance,
  LEFT_OUT_LABELS, tolerancesFor, tolerancesOfBatch, parameterLabelOf, pickableParameters, type AnalyzeForm, type BandChoice, type CamelDeviation, type CamelEnvelope,
} from './analyze-model.ts';
import './analyze.css';

type CamelGoldenBatch = Camelize<GoldenBatch>;
const goldenBatchListSchema = z.array(goldenBatchSchema);

const INITIAL_FORM: Omit<AnalyzeForm, 'unitOperationType'> = {
  referenceIds: [], targetIds: [], parameters: [], alignment: { kind: 'start' },
  bandChoice: 'p5-p95', customLower: 5, customUpper: 95, sigmaK: 2, showMinMax: true, tolerances: {},
};

interface Result {
  envelopes: CamelEnvelope[];
  deviation: CamelDeviation | null;
}

function download(text: string, name: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/csv;charset=utf-8' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}


export function AnalyzePage() {
  const { permissions } = useAuth();
  const runs = useApi<Run[]>('/api/v1/runs', runListSchema);
  const operations = useApi<UnitOperation[]>('/api/v1/unit-operations', unitOperationListSchema);
  const instruments = useApi<Instrument[]>('/api/v1/instruments', instrumentListSchema);
  const goldenBatches = useApi<CamelGoldenBatch[]>('/api/v1/golden-batches', goldenBatchListSchema);
  const derivedParameters = useApi<DerivedParameterView[]>('/api/v1/derived-parameters', derivedParameterListSchema);

  const types = useMemo(() => [...new Set((operations.data ?? []).map((operation) => operation.type))].sort(), [operations.data]);
  const [chosenType, setChosenType] = useState<string | null>(null);
  const type = chosenType && types.includes(chosenType) ? chosenType : types[0] ?? '';
  const [form, setForm] = useState(INITIAL_FORM);
  const [filters, setFilters] = useState<RunFilter[]>([]);
  const [result, setResult] = useState<Result | null>(null);
  const [chartParameter, setChartParameter] = useState<string | null>(null);
  const [working, setWorking] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [batchName, setBatchName] = useState('');
  const [batchId, setBatchId] = useState<number | null>(null);
  const update = (patch: Partial<typeof form>) => setForm((current) => ({ ...current, ...patch }));

  const operationOf = useMemo(() => {
    const byRun = new Map<number, UnitOperation>();
    for (const operation of operations.data ?? []) if (operation.type === type && !byRun.has(operation.runId)) byRun.set(operation.runId, operation);
    return byRun;
  }, [operations.data, type]);
  const candidates = useMemo(() => applyFilters((runs.data ?? []).filter((run) => operationOf.has(run.id)), filters), [runs.data, operationOf, filters]);
  const runOfOperation = useMemo(() => new Map([...operationOf].map(([runId, operation]) => [operation.id, (runs.data ?? []).find((run) => run.id === runId)])), [operationOf, runs.data]);

  const availableParameters = useMemo(() => {
    const equipment = new Set(form.referenceIds.map((id) => (operations.data ?? []).find((operation) => operation.id === id)?.equipmentId));
    const present = new Set((instruments.data ?? []).filter((instrument) => equipment.has(instrument.equipmentId)).map((instrument) => instrument.type));
    return INSTRUMENT_TYPES.filter((candidate) => present.has(candidate));
  }, [form.referenceIds, operations.data, instruments.data]);
  const derivedList = useMemo(() => derivedParameters.data ?? [], [derivedParameters.data]);
  const referenceSamples = useCompareSamples(form.referenceIds);
  const referenceAnalytes = useMemo(() => [...(referenceSamples?.values() ?? [])].flat().flatMap((sample) => sample.results.map((result) => result.analyte)), [referenceSamples]);
  const pickable = useMemo(() => pickableParameters(availableParameters, derivedList, referenceAnalytes), [availableParameters, derivedList, referenceAnalytes]);
  const parameterLabel = (parameter: string) => parameterLabelOf(parameter, derivedList, result?.envelopes ?? []);

  const toggle = (list: number[], id: number) => (list.includes(id) ? list.filter((entry) => entry !== id) : [...list, id]);

  const analyze = async () => {
    setError(null);
    setWorking(true);
    try {
      const full: AnalyzeForm = { ...form, unitOperationType: type };
      if (form.targetIds.length > 0) {
        const deviation = await apiRequest<CamelDeviation>('POST', '/api/v1/analysis/deviation', deviationBody(full), { schema: deviationSchema });
        setResult({ envelopes: deviation.envelopes, deviation });
        setChartParameter(deviation.ranking[0]?.parameter ?? form.parameters[0] ?? null);
      } else {
        const envelopes = await Promise.all(form.parameters.map((parameter) =>
          apiRequest<CamelEnvelope>('POST', '/api/v1/analysis/envelope', envelopeBody(full, parameter), { schema: envelopeSchema })));
        setResult({ envelopes, deviation: null });
        setChartParameter(form.parameters[0] ?? null);
      }
    } catch (failure) {
      setResult(null);
      setError(failure instanceof Error ? failure.message : String(failure));
    } finally {
      setWorking(false);
    }
  };

  const loadBatch = (batch: CamelGoldenBatch) => {
    setChosenType(batch.unitOperationType);
    setBatchId(batch.id);
    setBatchName(batch.name);
    setForm((current) => ({
      ...current, referenceIds: batch.referenceUnitOperationIds, parameters: batch.parameters as AnalysisParameter[],
      alignment: batch.alignment as Alignment, ...bandChoiceOf(batch.band as GoldenBatch['band']),
      tolerances: tolerancesOfBatch(batch.parameters, batch.tolerances),
    }));
    setResult(null);
  };

  const saveBatch = async () => {
    const body = {
      name: batchName.trim(), unit_operation_type: type, reference_unit_operation_ids: form.referenceIds, parameters: form.parameters,
      alignment: form.alignment, band: deviationBody({ ...form, unitOperationType: type }).band, tolerances: tolerancesFor(form),
    };
    try {
      const existing = (goldenBatches.data ?? []).find((batch) => batch.id === batchId && batch.name === body.name);
      const saved = existing
        ? await apiRequest<CamelGoldenBatch>('PUT', `/api/v1/golden-batches/${existing.id}`, body, { schema: goldenBatchSchema })
        : await apiRequest<CamelGoldenBatch>('POST', '/api/v1/golden-batches', body, { schema: goldenBatchSchema });
      setBatchId(saved.id);
      await goldenBatches.mutate();
      showToast({ title: 'Golden batch saved', message: saved.name, intent: 'success' });
    } catch (failure) {
      showToast({ title: 'Golden batch not saved', message: failure instanceof Error ? failure.message : String(failure), intent: 'danger' });
    }
  };

  const deleteBatch = async (id: number) => {
    try {
      await apiRequest('DELETE', `/api/v1/golden-batches/${id}`);
      setBatchId(null);
      await goldenBatches.mutate();
      showToast({ title: 'Golden batch deleted', intent: 'success' });
    } catch (failure) {
      showToast({ title: 'Golden batch not deleted', message: failure instanceof Error ? failure.message : String(failure), intent: 'danger' });
    }
  };

  const envelope = result?.envelopes.find((candidate) => candidate.parameter === chartParameter) ?? result?.envelopes[0] ?? null;
  const targets = useMemo(() => (result?.deviation?.targets ?? []).flatMap((target, index) => {
    const parameter = target.parameters.find((entry) => entry.parameter === envelope?.parameter);
    return parameter ? [{ name: target.runName, color: paletteColor(index + 2), series: parameter.series }] : [];
  }), [result, envelope]);
  const chartOptions = useMemo((): Highcharts.Options | null => {
    if (!envelope) return null;
    return envelopeChartOptions(envelope, parameterLabel(envelope.parameter), targets, form.showMinMax, `envelope-${envelope.parameter}-${fileStamp()}`);
  }, [envelope, targets, form.showMinMax]);

  const rows = result?.deviation ? deviationRows(result.deviation) : [];
  const warnings = [...new Set(result?.deviation ? result.deviation.warnings : (result?.envelopes ?? []).flatMap((entry) => entry.warnings))];
  const defaultTolerance = (parameter: string) => {
    const tolerance = result?.envelopes.find((entry) => entry.parameter === parameter)?.tolerance;
    return tolerance && tolerance.source !== 'set' && tolerance.value !== null ? `default ${formatTolerance(tolerance.value)}` : 'default';
  };
  const leftOut = [...(envelope?.leftOut ?? []), ...(result?.deviation?.targetsLeftOut ?? [])];
  const failed = runs.error || operations.error;
  const canAnalyze = form.referenceIds.length >= 2 && form.parameters.length > 0 && !working;

  return (
    <div className="analyze-page" data-testid="analyze-page">
      <PageHeader title="Analyze" subtitle="Compare runs with a golden batch: an envelope over good runs on process time, and where a run drifts." />
      {failed ? (
        <Callout intent="danger" icon="error">The runs could not be loaded.</Callout>
      ) : runs.isLoading || operations.isLoading ? (
        <NonIdealState icon={<Spinner />} description="Loading runs…" />
      ) : types.length === 0 ? (
        <NonIdealState icon="search" description="No unit operations to analyze yet." />
      ) : (
        <div className="analyze-layout">
          <div className="analyze-controls">
            <Card className="analyze-card">
              <H4>Golden batches</H4>
              {(goldenBatches.data ?? []).length === 0 ? <p className="bp6-text-muted">None saved yet.</p> : (
                <ul className="analyze-batches" data-testid="golden-batches">
                  {(goldenBatches.data ?? []).map((batch) => (
                    <li key={batch.id}>
                      <Button variant="minimal" icon="folder-open" text={batch.name} active={batch.id === batchId} onClick={() => loadBatch(batch)} />
                      <Tag minimal>{titleCaseType(batch.unitOperationType)}</Tag>
                      {permissions.canEdit ? <Button variant="minimal" icon="trash" aria-label={`Delete ${batch.name}`} intent={Intent.DANGER} onClick={() => void deleteBatch(batch.id)} /> : null}
                    </li>
                  ))}
                </ul>
              )}
              {permissions.canCreate ? (
                <div className="analyze-row">
                  <InputGroup placeholder="Golden batch name" value={batchName} onValueChange={setBatchName} aria-label="Golden batch name" />
                  <Button icon="floppy-disk" text="Save" disabled={!batchName.trim() || form.referenceIds.length < 2 || form.parameters.length === 0} onClick={() => void saveBatch()} />
                </div>
              ) : null}
            </Card>

            <Card className="analyze-card">
              <H4>Runs</H4>
              <FormGroup label="Unit operation type" inline>
                <HTMLSelect value={type} aria-label="Unit operation type" onChange={(event) => { setChosenType(event.currentTarget.value); setForm(INITIAL_FORM); setResult(null); }}
                  options={types.map((value) => ({ value, label: titleCaseType(value) }))} />
              </FormGroup>
              <div className="analyze-row">
                <RunFilterControl runs={runs.data ?? []} onAdd={(filter) => setFilters((current) => [...current, filter])} />
                {filters.map((filter, index) => (
                  <Tag key={`${describeFilter(filter)}-${index}`} minimal intent={Intent.PRIMARY} onRemove={() => setFilters((current) => current.filter((_, position) => position !== index))}>
                    {describeFilter(filter)}
                  </Tag>
                ))}
              </div>
              <HTMLTable compact className="analyze-runs" data-testid="analyze-runs">
                <thead><tr><th>Run</th><th>Reference</th><th>Overlay</th></tr></thead>
                <tbody>
                  {candidates.map((run) => {
                    const operation = operationOf.get(run.id)!;
                    return (
                      <tr key={run.id}>
                        <td>{run.name}</td>
                        <td><Checkbox aria-label={`Reference ${run.name}`} checked={form.referenceIds.includes(operation.id)} onChange={() => update({ referenceIds: toggle(form.referenceIds, operation.id) })} /></td>
                        <td><Checkbox aria-label={`Overlay ${run.name}`} checked={form.targetIds.includes(operation.id)} onChange={() => update({ targetIds: toggle(form.targetIds, operation.id) })} /></td>
                      </tr>
                    );
                  })}
                </tbody>
              </HTMLTable>
            </Card>

            <Card className="analyze-card">
              <H4>Parameters</H4>
              {availableParameters.length === 0 ? <p className="bp6-text-muted">Choose references to see their parameters.</p> : (
                <div className="analyze-parameters">
                  {pickable.map(({ value: parameter, label, derived, sample }) => (
                    <Checkbox key={parameter} checked={form.parameters.includes(parameter)}
                      data-testid={derived ? 'derived-parameter-choice' : sample ? 'sample-parameter-choice' : undefined}
                      labelElement={derived ? <>{label.replace(/ \(derived\)$/, '')} <Tag minimal round>derived</Tag></>
                        : sample ? <>{label.replace(/ \(sample\)$/, '')} <Tag minimal round>sample</Tag></> : label}
                      onChange={() => update({ parameters: form.parameters.includes(parameter) ? form.parameters.filter((entry) => entry !== parameter) : [...form.parameters, parameter] })} />
                  ))}
                </div>
              )}
              <AlignmentForm value={form.alignment} parameters={availableParameters} onChange={(alignment) => update({ alignment })} />
              <FormGroup label="Band">
                <HTMLSelect aria-label="Band" value={form.bandChoice} onChange={(event) => update({ bandChoice: event.currentTarget.value as BandChoice })}
                  options={[{ value: 'p5-p95', label: 'P5–P95' }, { value: 'p16-p84', label: 'P16–P84' }, { value: 'custom', label: 'Other percentiles' }, { value: 'sigma', label: 'Mean ± k σ' }]} />
              </FormGroup>
              {form.bandChoice === 'custom' ? (
                <div className="analyze-row">
                  <NumericInput aria-label="Lower percentile" min={0} max={100} value={form.customLower} onValueChange={(value) => update({ customLower: value })} />
                  <NumericInput aria-label="Upper percentile" min={0} max={100} value={form.customUpper} onValueChange={(value) => update({ customUpper: value })} />
                </div>
              ) : null}
              {form.bandChoice === 'sigma' ? (
                <FormGroup label="k"><NumericInput aria-label="k" min={0.5} max={10} stepSize={0.5} value={form.sigmaK} onValueChange={(value) => update({ sigmaK: value })} /></FormGroup>
              ) : null}
              {form.parameters.length > 0 ? (
                <FormGroup label="Tolerance (least ± around the band's centre)" helperText="Left empty: 3x the references' noise, at least 2 % of their range.">
                  <HTMLTable compact className="analyze-tolerances" data-testid="analyze-tolerances">
                    <tbody>
                      {form.parameters.map((parameter) => (
                        <tr key={parameter}>
                          <td>{parameterLabel(parameter)}</td>
                          <td>
                            <NumericInput aria-label={`Tolerance ${parameterLabel(parameter)}`} min={0} buttonPosition="none" fill
                              placeholder={defaultTolerance(parameter)} value={form.tolerances[parameter] ?? ''}
                              onValueChange={(value, text) => update({
                                tolerances: text.trim() === '' || !(value > 0)
                                  ? Object.fromEntries(Object.entries(form.tolerances).filter(([key]) => key !== parameter))
                                  : { ...form.tolerances, [parameter]: value },
                              })} />
                          </td>
                        </tr>
                      ))}
                    </tbody>
                  </HTMLTable>
                </FormGroup>
              ) : null}
              <Checkbox label="Show min/max" checked={form.showMinMax} onChange={() => update({ showMinMax: !form.showMinMax })} />
              <Button intent={Intent.PRIMARY} icon="chart" text="Analyze" loading={working} disabled={!canAnalyze} onClick={() => void analyze()} data-testid="analyze-run" />
            </Card>
          </div>

          <div className="analyze-results">
            {error ? <Callout intent="danger" icon="error" data-testid="analyze-error">{error}</Callout> : null}
            {warnings.length > 0 ? <Callout intent="warning" icon="warning-sign" data-testid="analyze-warnings">{warnings.join(' ')}</Callout> : null}
            {!result ? (
              <NonIdealState icon="timeline-area-chart" description="Choose at least two reference runs and a parameter, then Analyze." />
            ) : (
              <>
                <Card className="analyze-card">
                  <div className="analyze-row analyze-chart-head">
                    <HTMLSelect aria-label="Chart parameter" value={envelope?.parameter ?? ''} onChange={(event) => setChartParameter(event.currentTarget.value)}
                      options={result.envelopes.map((entry) => ({ value: entry.parameter, label: parameterLabel(entry.parameter) }))} />
                    <Button icon="download" text="Envelope CSV" onClick={() => download(envelopeCsv(result.envelopes), `envelope-${fileStamp()}.csv`)} />
                  </div>
                  {chartOptions ? <div data-testid="analyze-chart"><HighchartsReact highcharts={Highcharts} options={chartOptions} /></div> : null}
                  {leftOut.length > 0 ? (
                    <Callout intent="warning" icon="warning-sign" data-testid="analyze-left-out">
                      Left out: {leftOut.map((entry) => `${runOfOperation.get(entry.unitOperationId)?.name ?? `unit operation ${entry.unitOperationId}`} (${LEFT_OUT_LABELS[entry.reason] ?? entry.reason})`).join(', ')}
                    </Callout>
                  ) : null}
                </Card>
                {result.deviation ? (
                  <Card className="analyze-card">
                    <H4>Deviation, worst first</H4>
                    <p className="bp6-text-muted">
                      Score: the area outside the band, in band widths x hours. Flagged from {result.deviation.flagScore}.
                    </p>
                    <HTMLTable interactive compact striped className="analyze-deviation" data-testid="deviation-table">
                      <thead><tr><th>Parameter</th><th>Run</th><th>Score</th><th>Outside</th><th>Why</th></tr></thead>
                      <tbody>
                        {rows.map((row) => (
                          <tr key={row.key} data-testid="deviation-row" data-flagged={row.flagged} onClick={() => setChartParameter(row.parameter)} className={row.parameter === envelope?.parameter ? 'analyze-row-active' : undefined}>
                            <td>{parameterLabel(row.parameter)}</td>
                            <td>{row.runName}</td>
                            <td>{row.flagged ? <Tag intent={Intent.DANGER} minimal data-testid="deviation-flag">{formatScore(row.score)}</Tag> : <span className="bp6-text-muted">{formatScore(row.score)}</span>}</td>
                            <td>{formatShare(row.shareOutside)}</td>
                            <td data-testid="deviation-reason">{row.reason}</td>
                          </tr>
                        ))}
                      </tbody>
                    </HTMLTable>
                  </Card>
                ) : null}
              </>
            )}
          </div>
        </div>
      )}
    </div>
  );
}

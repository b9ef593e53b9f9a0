/**
 * The Analyze page's pure parts: the request it sends for a form state, the chart series of an
 * envelope with its targets, the deviation rows worst first, and the envelope as CSV.
 */
import { derivedParameterIdOf, derivedParameterKey, sampleAnalyteOf, sampleParameterKey, type Alignment, type AnalysisParameter, type Band, type Deviation, type Envelope } from '@bioprocess/shared/analysis';
import { alignmentParameterLabel } from '../alignment/alignment-labels.ts';
import { csvRow } from '@bioprocess/shared/csv/write';
import type Highcharts from 'highcharts';
import { chartText } from '../charts/chart-text.ts';
import type { Camelize } from '../entities/types.ts';

export type CamelEnvelope = Camelize<Envelope>;
export type CamelDeviation = Camelize<Deviation>;

export type BandChoice = 'p5-p95' | 'p16-p84' | 'custom' | 'sigma';

export interface AnalyzeForm {
  unitOperationType: string;
  referenceIds: number[];
  targetIds: number[];
  /** Instrument types and derived parameters (derived:<id>). */
  parameters: AnalysisParameter[];
  alignment: Alignment;
  bandChoice: BandChoice;
  customLower: number;
  customUpper: number;
  sigmaK: number;
  showMinMax: boolean;
  /** The least half-width of the band per parameter (wire keys); a parameter left out takes its default from the references' noise. */
  tolerances: Record<string, number>;
}

export function bandOf(form: Pick<AnalyzeForm, 'bandChoice' | 'customLower' | 'customUpper' | 'sigmaK'>): Band {
  switch (form.bandChoice) {
    case 'p5-p95': return { kind: 'percentiles', lower: 5, upper: 95 };
    case 'p16-p84': return { kind: 'percentiles', lower: 16, upper: 84 };
    case 'custom': return { kind: 'percentiles', lower: form.customLower, upper: form.customUpper };
    case 'sigma': return { kind: 'sigma', k: form.sigmaK };
  }
}

/** The form fields a saved band gives back. */
export function bandChoiceOf(band: Band): Pick<AnalyzeForm, 'bandChoice' | 'customLower' | 'customUpper' | 'sigmaK'> {
  if (band.kind === 'sigma') return { bandChoice: 'sigma', customLower: 5, customUpper: 95, sigmaK: band.k };
  if (band.lower === 5 && band.upper === 95) return { bandChoice: 'p5-p95', customLower: 5, customUpper: 95, sigmaK: 2 };
  if (band.lower === 16 && band.upper === 84) return { bandChoice: 'p16-p84', customLower: 16, customUpper: 84, sigmaK: 2 };
  return { bandChoice: 'custom', customLower: band.lower, customUpper: band.upper, sigmaK: 2 };
}

export function bandLabel(band: Band): string {
  return band.kind === 'sigma' ? `Mean ± ${band.k}σ` : `P${band.lower}–P${band.upper}`;
}

const TOLERANCE_SOURCE_LABELS: Record<string, string> = { set: 'set', noise: "3x the references' noise", range: "2 % of the references' range", none: '' };

/** ", at least ± 0.0136 (3x the references' noise)" */
export function toleranceLabel(tolerance: CamelEnvelope['tolerance']): string {
  if (tolerance.value === null) return '';
  return `, at least ± ${formatTolerance(tolerance.value)} (${TOLERANCE_SOURCE_LABELS[tolerance.source] ?? tolerance.source})`;
}

export const formatTolerance = (value: number) => Number(value.toPrecision(3)).toString();

/** The snake_case body of a deviation request for the form (targets required). */
export function deviationBody(form: AnalyzeForm) {
  return {
    reference_unit_operation_ids: form.referenceIds,
    target_unit_operation_ids: form.targetIds,
    parameters: form.parameters,
    alignment: form.alignment,
    band: bandOf(form),
    show_min_max: form.showMinMax,
    tolerances: tolerancesFor(form),
  };
}

/** The form's tolerances of the chosen parameters only (a stale one would be refused by a golden batch). */
export function tolerancesFor(form: Pick<AnalyzeForm, 'parameters' | 'tolerances'>): Record<string, number> {
  return Object.fromEntries(form.parameters.flatMap((parameter) => {
    const value = form.tolerances[parameter];
    return value !== undefined && Number.isFinite(value) && value > 0 ? [[parameter, value]] : [];
  }));
}

/** A golden batch's tolerances arrive with camel-cased keys (feedRate): mapped back to its parameters' wire names. */
export function tolerancesOfBatch(parameters: readonly string[], tolerances: Readonly<Record<string, number>>): Record<string, number> {
  const camel = (key: string) => key.replace(/_+([a-z0-9])/g, (_match, letter: string) => letter.toUpperCase());
  return Object.fromEntries(parameters.flatMap((parameter) => {
    const value = tolerances[parameter] ?? tolerances[camel(parameter)];
    return value === undefined ? [] : [[parameter, value]];
  }));
}

export function envelopeBody(form: AnalyzeForm, parameter: AnalysisParameter) {
  const tolerance = tolerancesFor(form)[parameter];
  return {
    reference_unit_operation_ids: form.referenceIds, parameter, alignment: form.alignment, band: bandOf(form), show_min_max: form.showMinMax,
    tolerances: tolerance === undefined ? {} : { [parameter]: tolerance },
  };
}

export const HOUR_S = 3600;

/** Grid seconds shown in hours since time zero. */
export const toHours = (seconds: number) => seconds / HOUR_S;

export interface ChartTarget {
  name: string;
  color: string;
  /** [seconds since time zero, value]; camel-casing turns the wire's pairs into plain arrays. */
  series: ReadonlyArray<readonly number[]>;
}

/**
 * Highcharts series options (plain objects): band, optional min/max hull, median, then the targets.
 * Run names are escaped here, where they enter the options: the default legend and tooltip formats
 * print a series' name as markup.
 */
export function envelopeChartSeries(envelope: CamelEnvelope, targets: readonly ChartTarget[], showMinMax: boolean) {
  // The band drawn is the one targets are compared with: the statistical band widened to the tolerance.
  const band = envelope.points.flatMap((point) => (point.comparedLower === null || point.comparedUpper === null ? [] : [[toHours(point.t), point.comparedLower, point.comparedUpper]]));
  const hull = envelope.points.flatMap((point) => (point.min === null || point.max === null ? [] : [[toHours(point.t), point.min, point.max]]));
  const median = envelope.points.flatMap((point) => (point.median === null ? [] : [[toHours(point.t), point.median]]));
  return [
    ...(showMinMax && hull.length > 0 ? [{ type: 'arearange' as const, name: 'Min–max', data: hull, color: '#8F99A8', fillOpacity: 0.12, lineWidth: 0, enableMouseTracking: false }] : []),
    { type: 'arearange' as const, name: `Band ${bandLabel(envelope.band as Band)}${toleranceLabel(envelope.tolerance)}`, data: band, color: '#2D72D2', fillOpacity: 0.25, lineWidth: 0 },
    { type: 'line' as const, name: 'Median', data: median, color: '#184A90', lineWidth: 2, dashStyle: 'ShortDash' as const },
    ...targets.map((target) => ({
      type: 'line' as const, name: chartText(target.name), color: target.color, lineWidth: 1.5,
      data: target.series.map(([t, value]) => [toHours(t!), value!]),
    })),
  ];
}

/** The envelope chart: the parameter's label (a derived parameter's name is the user's text) as title and y axis. */
export function envelopeChartOptions(
  envelope: CamelEnvelope, parameterLabel: string, targets: readonly ChartTarget[], showMinMax: boolean, fileName: string,
): Highcharts.Options {
  const label = chartText(parameterLabel);
  return {
    chart: { height: 420, zooming: { type: 'x' } },
    accessibility: { enabled: false },
    title: { text: `${label} — ${chartText(bandLabel(envelope.band as Band))} over ${envelope.references.length} references` },
    credits: { enabled: false },
    xAxis: { title: { text: 'Hours since time zero' } },
    yAxis: { title: { text: label } },
    tooltip: { shared: true, valueDecimals: 3 },
    legend: { enabled: true },
    exporting: {
      // Files are made in the browser: the public export server is not reachable from a plant network.
      fallbackToExportServer: false,
      filename: fileName,
      buttons: { contextButton: { menuItems: ['downloadPNG', 'downloadSVG'] } },
    },
    series: envelopeChartSeries(envelope, targets, showMinMax) as Highcharts.SeriesOptionsType[],
  };
}

export interface DeviationRow {
  key: string;
  parameter: string;
  unitOperationId: number;
  runName: string;
  shareOutside: number | null;
  score: number;
  flagged: boolean;
  reason: string;
  firstExcursion: CamelDeviation['targets'][number]['parameters'][number]['firstExcursion'];
  largestExcursion: CamelDeviation['targets'][number]['parameters'][number]['largestExcursion'];
}

/** One row per target and parameter, in the api's ranking (worst first). */
export function deviationRows(deviation: CamelDeviation): DeviationRow[] {
  const byTarget = new Map(deviation.targets.map((target) => [target.unitOperationId, target]));
  return deviation.ranking.flatMap((entry) => {
    const target = byTarget.get(entry.unitOperationId);
    const result = target?.parameters.find((parameter) => parameter.parameter === entry.parameter);
    if (!target || !result) return [];
    return [{
      key: `${target.unitOperationId}:${entry.parameter}`,
      parameter: entry.parameter,
      unitOperationId: target.unitOperationId,
      runName: target.runName,
      shareOutside: result.shareOutside,
      score: result.score,
      flagged: result.flagged,
      reason: result.reason,
      firstExcursion: result.firstExcursion,
      largestExcursion: result.largestExcursion,
    }];
  });
}

/** Band widths x hours, to two significant figures below 10. */
export function formatScore(score: number): string {
  return score >= 10 ? score.toFixed(0) : Number(score.toPrecision(2)).toString();
}

export function formatShare(share: number | null): string {
  return share === null ? '–' : `${(share * 100).toFixed(1)} %`;
}

export function formatElapsed(seconds: number): string {
  const sign = seconds < 0 ? '−' : '';
  const total = Math.abs(seconds);
  const hours = Math.floor(total / HOUR_S);
  const minutes = Math.floor((total % HOUR_S) / 60);
  return `${sign}${hours} h ${String(minutes).padStart(2, '0')} min`;
}

export function formatExcursion(excursion: DeviationRow['firstExcursion']): string {
  if (!excursion) return '–';
  const side = excursion.bound === 'upper' ? 'above' : 'below';
  return `${formatElapsed(excursion.t)}: ${excursion.value.toPrecision(4)} (${excursion.distance.toPrecision(3)} ${side})`;
}

export const ENVELOPE_CSV_HEADER = ['parameter', 'seconds_since_time_zero', 'median', 'mean', 'lower', 'upper', 'min', 'max', 'runs', 'compared_lower', 'compared_upper'];

/** The envelopes as one CSV document (shared writer: numbers stay numbers, text is neutralised). */
export function envelopeCsv(envelopes: readonly CamelEnvelope[]): string {
  let text = csvRow(ENVELOPE_CSV_HEADER);
  for (const envelope of envelopes) {
    for (const point of envelope.points) {
      text += csvRow([envelope.parameter, point.t, point.median, point.mean, point.lower, point.upper, point.min, point.max, point.count, point.comparedLower, point.comparedUpper]);
    }
  }
  return text;
}

export { ALIGNMENT_LABELS, LEFT_OUT_LABELS } from '../alignment/alignment-labels.ts';

export interface PickableParameter {
  value: AnalysisParameter;
  label: string;
  derived: boolean;
  /** A sample analyte of the references' samples (sample:<analyte>). */
  sample?: boolean;
}

/**
 * The parameter picker: the references' instrument types, then the organisation's derived parameters
 * (marked), then the analytes of the references' samples (marked; one entry per analyte in any case).
 */
export function pickableParameters(
  instrumentTypes: readonly string[], derived: ReadonlyArray<{ id: number; name: string }>, sampleAnalytes: readonly string[] = [],
): PickableParameter[] {
  const analytes = new Map<string, string>();
  for (const analyte of sampleAnalytes) if (!analytes.has(analyte.toLowerCase())) analytes.set(analyte.toLowerCase(), analyte);
  return [
    ...instrumentTypes.map((type) => ({ value: type, label: instrumentTypeLabel(type), derived: false })),
    ...derived.map((parameter) => ({ value: derivedParameterKey(parameter.id), label: `${parameter.name} (derived)`, derived: true })),
    ...[...analytes.values()].sort((a, b) => a.localeCompare(b)).map((analyte) => ({ value: sampleParameterKey(analyte), label: `${analyte} (sample)`, derived: false, sample: true })),
  ];
}

export const instrumentTypeLabel = alignmentParameterLabel;

/** A parameter's label: the derived parameter's name (from the list, else the envelope's), or the instrument type's. */
export function parameterLabelOf(parameter: string, derived: ReadonlyArray<{ id: number; name: string }>, envelopes: ReadonlyArray<Pick<CamelEnvelope, 'parameter' | 'derivedParameter'>> = []): string {
  const analyte = sampleAnalyteOf(parameter);
  if (analyte !== null) return `${analyte} (sample)`;
  const id = derivedParameterIdOf(parameter);
  if (id === null) return instrumentTypeLabel(parameter);
  const name = derived.find((entry) => entry.id === id)?.name ?? envelopes.find((envelope) => envelope.parameter === parameter)?.derivedParameter?.name;
  return `${name ?? `Derived parameter ${id}`} (derived)`;
}

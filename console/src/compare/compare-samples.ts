/**
 * Samples in Compare: for each selected run, its unit operation's samples of the chosen analytes as
 * markers (no line) in the run's colour, on the same minute axis as the run's on-line series (minutes
 * since its time zero: the start, or the aligned event). Each marker's tooltip names the run (the
 * series' name), the sample, its result as written (with its flag) and the method. Each analyte is a parameter of its own,
 * so small multiples give it a panel.
 */
import type { ChartSeries, MarkerPoint } from '../charts/series-model.ts';
import { seriesStyle } from '../charts/series-model.ts';
import { MINUTE_MS } from '../charts/chart-constants.ts';
import { toEpochMs } from '../charts/time-axis.ts';
import { formatResultCell } from '../samples/cell-values.ts';
import type { SampleView } from '../samples/grid-model.ts';
import { analyteKey, markerLabel, sampleAnalytes, type SampleAnalyte } from '../samples/sample-series.ts';
import { anchorMs, runLabel, type CompareRun, type CompareUnitOperation } from './compare-model.ts';

export interface SampleSeriesInput {
  run: CompareRun;
  operation: CompareUnitOperation;
  samples: readonly SampleView[];
  /** Minute 0 of this run when aligned on an event (epoch ms); else its start. */
  timeZeroMs?: number;
}

/** The analytes any selected run's samples hold, in the order first met, counted over the runs. */
export function compareSampleAnalytes(inputs: readonly Pick<SampleSeriesInput, 'samples'>[]): SampleAnalyte[] {
  return sampleAnalytes(inputs.flatMap((input) => input.samples));
}

export function sampleParameterKey(key: string): string {
  return `sample:${key}`;
}

/**
 * One marker series per run and chosen analyte; `firstIndex` continues the point styles after the
 * on-line and derived series. Flagged results sit at their limit, as on the unit-operation chart.
 */
export function buildSampleCompareSeries(
  inputs: readonly SampleSeriesInput[],
  chosenKeys: readonly string[],
  colors: ReadonlyMap<number, string>,
  firstIndex: number,
): ChartSeries[] {
  const runOrder = [...new Set(inputs.map((input) => input.run.id))];
  return inputs.flatMap((input) => {
    const start = anchorMs(input.operation, []);
    if (start === null) return [];
    const timeZero = input.timeZeroMs ?? start;
    const analytes = new Map(sampleAnalytes(input.samples).map((entry) => [entry.key, entry]));
    return chosenKeys.flatMap((key, keyIndex) => {
      const analyte = analytes.get(key);
      if (!analyte) return [];
      const points: Array<{ minute: number; value: number; marker: MarkerPoint }> = [];
      for (const sample of input.samples) {
        const drawn = toEpochMs(sample.drawnAt);
        if (Number.isNaN(drawn)) continue;
        for (const result of sample.results) {
          if (analyteKey(result.analyte, result.unit) !== key) continue;
          points.push({
            minute: (drawn - timeZero) / MINUTE_MS,
            value: result.value,
            marker: { value: formatResultCell(result.value, result.flag), label: markerLabel(sample.sampleId, result.flag, result.method) },
          });
        }
      }
      points.sort((a, b) => a.minute - b.minute);
      const style = seriesStyle(runOrder.indexOf(input.run.id), firstIndex + keyIndex);
      return [{
        id: `run-${input.run.id}-sample-${key}`,
        name: `${runLabel(input.run)} - ${analyte.analyte}`,
        detail: `sample [${analyte.unit}]`,
        unit: analyte.unit,
        color: colors.get(input.run.id) ?? style.color,
        symbol: 'diamond' as const,
        opacity: 1,
        parameter: { key: sampleParameterKey(key), label: `${analyte.analyte} [${analyte.unit}] (samples)` },
        data: points.map((point) => [point.minute, point.value] as [number, number]),
        markers: { points: points.map((point) => point.marker) },
      }];
    });
  });
}

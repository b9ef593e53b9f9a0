/**
 * Samples on the unit-operation chart: one marker series per analyte and unit, on the chart's time
 * axis (minutes since its start) and on the y axis of its unit like any series. Each marker's tooltip
 * names the sample, its result as written (with its flag) and the method.
 */
import type { SampleFlag } from '@bioprocess/shared/samples';
import type { ChartSeries, MarkerPoint } from '../charts/series-model.ts';
import { paletteColor } from '../charts/chart-constants.ts';
import { minutesSince, toEpochMs } from '../charts/time-axis.ts';
import { formatResultCell } from './cell-values.ts';
import type { SampleView } from './grid-model.ts';

const FLAG_WORDS: Record<SampleFlag, string> = { below_limit: 'below the quantitation limit', above_limit: 'above the quantitation limit' };

export interface SampleAnalyte {
  key: string;
  analyte: string;
  unit: string;
  count: number;
}

export function analyteKey(analyte: string, unit: string): string {
  return `${analyte.toLowerCase()}\u0000${unit}`;
}

/** The analytes the samples hold, in the order first met, with how many results each has. */
export function sampleAnalytes(samples: readonly SampleView[]): SampleAnalyte[] {
  const found = new Map<string, SampleAnalyte>();
  for (const sample of samples) {
    for (const result of sample.results) {
      const key = analyteKey(result.analyte, result.unit);
      const entry = found.get(key);
      if (entry) entry.count += 1;
      else found.set(key, { key, analyte: result.analyte, unit: result.unit, count: 1 });
    }
  }
  return [...found.values()];
}

/** A marker's tooltip text: the sample, which side of the limit a flagged result lies, the method. */
export function markerLabel(sampleId: string, flag: SampleFlag | null, method: string | null): string {
  return [`sample ${sampleId}`, flag ? FLAG_WORDS[flag] : null, method].filter(Boolean).join(' · ');
}

/**
 * Marker series for the chosen analytes. A flagged result is drawn at its limit. `firstColorIndex`
 * continues the palette after the chart's other series.
 */
export function sampleChartSeries(
  samples: readonly SampleView[],
  chosen: ReadonlySet<string>,
  startMs: number | null,
  firstColorIndex: number,
): ChartSeries[] {
  if (startMs === null) return [];
  return sampleAnalytes(samples).filter((entry) => chosen.has(entry.key)).map((entry, index) => {
    const points: Array<{ minute: number; value: number; marker: MarkerPoint }> = [];
    for (const sample of samples) {
      const drawn = toEpochMs(sample.drawnAt);
      if (Number.isNaN(drawn)) continue;
      for (const result of sample.results) {
        if (analyteKey(result.analyte, result.unit) !== entry.key) continue;
        points.push({
          minute: minutesSince(drawn, startMs),
          value: result.value,
          marker: { value: formatResultCell(result.value, result.flag), label: markerLabel(sample.sampleId, result.flag, result.method) },
        });
      }
    }
    points.sort((a, b) => a.minute - b.minute);
    return {
      id: `sample-${entry.key}`,
      name: entry.analyte,
      detail: `sample [${entry.unit}]`,
      unit: entry.unit,
      color: paletteColor(firstColorIndex + index),
      symbol: 'diamond' as const,
      opacity: 1,
      data: points.map((point) => [point.minute, point.value] as [number, number]),
      markers: { points: points.map((point) => point.marker) },
    };
  });
}

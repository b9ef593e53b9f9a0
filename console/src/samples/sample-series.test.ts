import { describe, expect, it } from 'vitest';
import { sampleAnalytes, sampleChartSeries, analyteKey } from './sample-series.ts';
import type { SampleView } from './grid-model.ts';

const start = Date.UTC(2024, 2, 1, 8);
const samples: SampleView[] = [
  {
    id: 2, unitOperationId: 1, sampleId: 'D2', drawnAt: '2024-03-03T08:00:00Z', notes: null,
    results: [{ analyte: 'Glucose', value: 0.5, flag: 'below_limit', unit: 'g/L', method: 'Cedex Bio', measuredAt: null }],
  },
  {
    id: 1, unitOperationId: 1, sampleId: 'D1 <b>', drawnAt: '2024-03-02T08:00:00Z', notes: null,
    results: [
      { analyte: 'Glucose', value: 5.1, flag: null, unit: 'g/L', method: null, measuredAt: null },
      { analyte: 'VCD', value: 4.2, flag: null, unit: '10*6/mL', method: 'Vi-CELL', measuredAt: null },
    ],
  },
];

describe('samples on the chart', () => {
  it('makes one marker series per chosen analyte and unit, in time order, on the unit\'s axis', () => {
    expect(sampleAnalytes(samples).map((entry) => [entry.analyte, entry.unit, entry.count])).toEqual([['Glucose', 'g/L', 2], ['VCD', '10*6/mL', 1]]);
    const series = sampleChartSeries(samples, new Set([analyteKey('Glucose', 'g/L')]), start, 3);
    expect(series).toHaveLength(1);
    expect(series[0]).toMatchObject({ name: 'Glucose', unit: 'g/L', detail: 'sample [g/L]', data: [[1440, 5.1], [2880, 0.5]] });
    // The tooltip's text is plain: the chart escapes it, so a sample id with markup stays text.
    expect(series[0]!.markers!.points).toEqual([
      { value: '5.1', label: 'sample D1 <b>' },
      { value: '< 0.5', label: 'sample D2 · below the quantitation limit · Cedex Bio' },
    ]);
    expect(sampleChartSeries(samples, new Set([analyteKey('Glucose', 'g/L')]), null, 0)).toEqual([]);
  });
});

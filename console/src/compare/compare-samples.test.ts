import { describe, expect, it } from 'vitest';
import type { SampleView } from '../samples/grid-model.ts';
import { analyteKey } from '../samples/sample-series.ts';
import { buildSampleCompareSeries, compareSampleAnalytes } from './compare-samples.ts';

const START_A = Date.UTC(2024, 2, 1, 8);
const START_B = Date.UTC(2024, 5, 1, 8);
const HOUR = 3_600_000;

function sample(id: number, sampleId: string, drawnMs: number, results: SampleView['results']): SampleView {
  return { id, unitOperationId: 1, sampleId, drawnAt: new Date(drawnMs).toISOString(), notes: null, results };
}

const glucose = (value: number, flag: 'below_limit' | null = null) => ({ analyte: 'Glucose', value, flag, unit: 'g/L', method: 'Cedex Bio', measuredAt: null });

const runA = { run: { id: 1, name: 'Batch A' }, operation: { id: 10, runId: 1, type: 'fermentation', equipmentId: 1, startTime: new Date(START_A).toISOString(), endTime: null } };
const runB = { run: { id: 2, name: 'Batch B' }, operation: { id: 20, runId: 2, type: 'fermentation', equipmentId: 1, startTime: new Date(START_B).toISOString(), endTime: null } };
const colors = new Map([[1, '#111111'], [2, '#222222']]);

describe('samples in Compare', () => {
  const inputs = [
    { ...runA, samples: [sample(1, 'A-D1', START_A + 24 * HOUR, [glucose(5)]), sample(2, 'A-D0', START_A, [glucose(6), { ...glucose(1), analyte: 'VCD', unit: '10*6/mL' }])] },
    { ...runB, samples: [sample(3, 'B-D1', START_B + 24 * HOUR + 30 * 60_000, [glucose(0.5, 'below_limit')])] },
  ];

  it('lists the analytes of every selected run once, counted over the runs', () => {
    expect(compareSampleAnalytes(inputs).map(({ analyte, unit, count }) => [analyte, unit, count])).toEqual([['Glucose', 'g/L', 3], ['VCD', '10*6/mL', 1]]);
  });

  it("puts each run's samples on its own elapsed minutes, in its colour, with the tooltip of each marker", () => {
    const series = buildSampleCompareSeries(inputs, [analyteKey('Glucose', 'g/L')], colors, 2);
    expect(series.map((s) => [s.name, s.color, s.unit, s.parameter?.key])).toEqual([
      ['Batch A - Glucose', '#111111', 'g/L', 'sample:glucose\u0000g/L'],
      ['Batch B - Glucose', '#222222', 'g/L', 'sample:glucose\u0000g/L'],
    ]);
    expect(series[0]!.data).toEqual([[0, 6], [1440, 5]]);
    expect(series[1]!.data).toEqual([[1470, 0.5]]);
    expect(series[1]!.markers!.points).toEqual([{ value: '< 0.5', label: 'sample B-D1 · below the quantitation limit · Cedex Bio' }]);
  });

  it('counts minutes from an aligned time zero, and leaves out analytes a run does not have', () => {
    const aligned = buildSampleCompareSeries([{ ...inputs[0]!, timeZeroMs: START_A + 12 * HOUR }, inputs[1]!], [analyteKey('VCD', '10*6/mL')], colors, 0);
    expect(aligned).toHaveLength(1);
    expect(aligned[0]!.data).toEqual([[-720, 1]]);
  });
});

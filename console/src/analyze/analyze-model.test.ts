import { describe, expect, it } from 'vitest';
import {
  bandChoiceOf, bandOf, deviationRows, envelopeChartSeries, envelopeCsv, formatElapsed, parameterLabelOf, pickableParameters, tolerancesFor, tolerancesOfBatch,
  type CamelDeviation, type CamelEnvelope,
} from './analyze-model.ts';

const envelope: CamelEnvelope = {
  parameter: 'temperature', derivedParameter: null, unitOperationType: 'fermentation', gridStepSeconds: 60, band: { kind: 'percentiles', lower: 5, upper: 95 }, alignment: { kind: 'start' },
  references: [], leftOut: [], tolerance: { value: 1.5, source: 'noise', noise: 0.5 }, warnings: [],
  points: [
    { t: 0, median: 30, mean: 30, lower: 29, upper: 31, min: 28, max: 32, count: 3, comparedLower: 28.5, comparedUpper: 31.5 },
    { t: 3600, median: 31, mean: 31, lower: null, upper: null, min: 31, max: 31, count: 1, comparedLower: null, comparedUpper: null },
  ],
};

describe('analyze model', () => {
  it('turns band choices into bands and back', () => {
    for (const band of [{ kind: 'percentiles', lower: 5, upper: 95 }, { kind: 'percentiles', lower: 16, upper: 84 }, { kind: 'percentiles', lower: 10, upper: 70 }, { kind: 'sigma', k: 2.5 }] as const) {
      expect(bandOf(bandChoiceOf(band))).toEqual(band);
    }
  });

  it('draws the compared band (widened to the tolerance) where it exists, the median, and targets in hours', () => {
    const series = envelopeChartSeries(envelope, [{ name: 'Run A', color: '#f00', series: [[1800, 30.5]] }], true);
    expect(series.map((entry) => entry.name)).toEqual(['Min–max', "Band P5–P95, at least ± 1.5 (3x the references' noise)", 'Median', 'Run A']);
    expect(series[1]!.data).toEqual([[0, 28.5, 31.5]]);
    expect(series[3]!.data).toEqual([[0.5, 30.5]]);
  });

  it('writes the envelope CSV with numbers as numbers and empty cells for missing bounds', () => {
    expect(envelopeCsv([envelope]).split('\r\n')).toEqual([
      'parameter,seconds_since_time_zero,median,mean,lower,upper,min,max,runs,compared_lower,compared_upper',
      'temperature,0,30,30,29,31,28,32,3,28.5,31.5',
      'temperature,3600,31,31,,,31,31,1,,',
      '',
    ]);
  });

  it('lists deviation rows in the ranking order', () => {
    const excursion = { t: 60, value: 5, bound: 'upper' as const, boundValue: 4, distance: 1 };
    const deviation = {
      ranking: [{ parameter: 'pH', unitOperationId: 7, shareOutside: 0.5 }, { parameter: 'temperature', unitOperationId: 7, shareOutside: 0 }],
      targets: [{ unitOperationId: 7, runId: 1, runName: 'Run A', timeZero: '', parameters: [
        { parameter: 'temperature', instrumentId: 1, compared: 2, outside: 0, shareOutside: 0, firstExcursion: null, largestExcursion: null, series: [] },
        { parameter: 'pH', instrumentId: 2, compared: 2, outside: 1, shareOutside: 0.5, firstExcursion: excursion, largestExcursion: excursion, series: [] },
      ] }],
    } as unknown as CamelDeviation;
    expect(deviationRows(deviation).map((row) => row.parameter)).toEqual(['pH', 'temperature']);
  });

  it('maps a golden batch\'s camel-cased tolerance keys back to its parameters and sends only the chosen parameters\' tolerances', () => {
    expect(tolerancesOfBatch(['feed_rate', 'pH', 'dissolved_o2'], { feedRate: 0.05, dissolvedO2: 2 })).toEqual({ feed_rate: 0.05, dissolved_o2: 2 });
    expect(tolerancesFor({ parameters: ['feed_rate'], tolerances: { feed_rate: 0.05, pH: 0.1, temperature: 0 } })).toEqual({ feed_rate: 0.05 });
  });

  it('formats elapsed time around time zero', () => {
    expect(formatElapsed(5400)).toBe('1 h 30 min');
    expect(formatElapsed(-600)).toBe('−0 h 10 min');
  });
});

describe('parameter picker', () => {
  it('lists the instrument types, then the derived parameters marked as derived', () => {
    expect(pickableParameters(['pH', 'temperature'], [{ id: 7, name: 'OUR' }])).toEqual([
      { value: 'pH', label: 'pH', derived: false },
      { value: 'temperature', label: 'Temperature', derived: false },
      { value: 'derived:7', label: 'OUR (derived)', derived: true },
    ]);
  });

  it('lists the references\' sample analytes last, once per analyte in any case, marked as samples', () => {
    expect(pickableParameters(['pH'], [], ['Glucose', 'VCD', 'glucose']).map(({ value, label, sample }) => [value, label, sample ?? false])).toEqual([
      ['pH', 'pH', false], ['sample:Glucose', 'Glucose (sample)', true], ['sample:VCD', 'VCD (sample)', true],
    ]);
    expect(parameterLabelOf('sample:Lactate', [])).toBe('Lactate (sample)');
  });

  it('labels a derived parameter by its name, from the list or the envelope', () => {
    expect(parameterLabelOf('derived:7', [{ id: 7, name: 'OUR' }])).toBe('OUR (derived)');
    expect(parameterLabelOf('derived:8', [], [{ parameter: 'derived:8', derivedParameter: { id: 8, name: 'RQ', unit: null, version: 2 } }])).toBe('RQ (derived)');
    expect(parameterLabelOf('dissolved_o2', [])).toBe('Dissolved O2');
  });
});

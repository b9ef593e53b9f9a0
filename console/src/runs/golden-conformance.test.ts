import { describe, expect, it } from 'vitest';
import type { CamelDeviation } from '../analyze/analyze-model.ts';
import { conformanceIntent, conformancePairs, conformanceRows, formatInside } from './golden-conformance.ts';

const parameter = (name: string, shareOutside: number | null, compared: number) => ({
  parameter: name, instrumentId: null, compared, outside: shareOutside === null ? 0 : Math.round(shareOutside * compared), shareOutside,
  firstExcursion: null, largestExcursion: null, series: [],
});

const deviation = {
  unitOperationType: 'fermentation', gridStepSeconds: 60, band: { kind: 'percentiles', lower: 5, upper: 95 }, alignment: { kind: 'start' },
  envelopes: [{ parameter: 'derived:4', derivedParameter: { id: 4, name: 'OUR', unit: null, version: 1 } }],
  targets: [{ unitOperationId: 7, runId: 1, runName: 'Run', timeZero: '', parameters: [parameter('pH', 0.02, 100), parameter('derived:4', 0.5, 80), parameter('temperature', null, 0)] }],
  targetsLeftOut: [],
  ranking: [
    { parameter: 'derived:4', unitOperationId: 7, shareOutside: 0.5 },
    { parameter: 'pH', unitOperationId: 7, shareOutside: 0.02 },
    { parameter: 'temperature', unitOperationId: 7, shareOutside: null },
  ],
} as unknown as CamelDeviation;

describe('golden-batch conformance of a run', () => {
  it('pairs each started unit operation with the golden batches of its type', () => {
    const pairs = conformancePairs(
      [{ id: 1, type: 'fermentation', startTime: '2025-01-01T00:00:00Z' }, { id: 2, type: 'harvest', startTime: '2025-01-02T00:00:00Z' }, { id: 3, type: 'fermentation', startTime: null }],
      [{ id: 10, name: 'Gold A', unitOperationType: 'fermentation' }, { id: 11, name: 'Gold B', unitOperationType: 'fermentation' }, { id: 12, name: 'Other', unitOperationType: 'chromatography' }],
    );
    expect(pairs.map((pair) => [pair.unitOperationId, pair.goldenBatchId])).toEqual([[1, 10], [1, 11]]);
  });

  it('lists the share inside the band worst first, parameters with nothing compared last, derived ones by name', () => {
    expect(conformanceRows(deviation, 7)).toEqual([
      { parameter: 'derived:4', label: 'OUR (derived)', shareInside: 0.5, compared: 80 },
      { parameter: 'pH', label: 'pH', shareInside: 0.98, compared: 100 },
      { parameter: 'temperature', label: 'Temperature', shareInside: null, compared: 0 },
    ]);
    expect(conformanceRows(deviation, 8)).toEqual([]);
  });

  it('colours and words the share', () => {
    expect([0.99, 0.9, 0.5, null].map(conformanceIntent)).toEqual(['success', 'warning', 'danger', 'none']);
    expect(formatInside(0.98765)).toBe('98.7 % inside');
    expect(formatInside(null)).toBe('not compared');
  });
});

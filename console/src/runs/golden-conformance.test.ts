import { describe, expect, it } from 'vitest';
import type { CamelDeviation } from '../analyze/analyze-model.ts';
import { conformanceIntent, conformancePairs, conformanceRows } from './golden-conformance.ts';

const parameter = (name: string, score: number, compared: number, reason: string) => ({
  parameter: name, instrumentId: null, compared, outside: 0, shareOutside: compared === 0 ? null : 0.1,
  firstExcursion: null, largestExcursion: null, score, flagged: score >= 0.5, reason, series: [],
});

const deviation = {
  unitOperationType: 'fermentation', gridStepSeconds: 60, band: { kind: 'percentiles', lower: 5, upper: 95 }, alignment: { kind: 'start' },
  envelopes: [{ parameter: 'derived:4', derivedParameter: { id: 4, name: 'OUR', unit: null, version: 1 } }],
  targets: [{ unitOperationId: 7, runId: 1, runName: 'Run', timeZero: '', parameters: [
    parameter('pH', 0.01, 100, 'outside for 0.1 h'), parameter('derived:4', 12, 80, 'outside for 6.2 h'), parameter('temperature', 0, 0, 'not compared'),
  ] }],
  targetsLeftOut: [],
  ranking: [
    { parameter: 'temperature', unitOperationId: 7 },
    { parameter: 'derived:4', unitOperationId: 7 },
    { parameter: 'pH', unitOperationId: 7 },
  ],
} as unknown as CamelDeviation;

describe('golden-batch conformance of a run', () => {
  it('pairs each unit operation that has started with the golden batches of its type; none for one not started or starting later', () => {
    const pairs = conformancePairs(
      [
        { id: 1, type: 'fermentation', startTime: '2025-01-01T00:00:00Z' }, { id: 2, type: 'harvest', startTime: '2025-01-02T00:00:00Z' },
        { id: 3, type: 'fermentation', startTime: null }, { id: 4, type: 'fermentation', startTime: '2025-03-01T00:00:00Z' },
      ],
      [{ id: 10, name: 'Gold A', unitOperationType: 'fermentation' }, { id: 11, name: 'Gold B', unitOperationType: 'fermentation' }, { id: 12, name: 'Other', unitOperationType: 'chromatography' }],
      Date.parse('2025-02-01T00:00:00Z'),
    );
    expect(pairs.map((pair) => [pair.unitOperationId, pair.goldenBatchId])).toEqual([[1, 10], [1, 11]]);
  });

  it('lists the parameters in the ranking order with flag, score and reason, nothing compared last, derived ones by name', () => {
    expect(conformanceRows(deviation, 7)).toEqual([
      { parameter: 'derived:4', label: 'OUR (derived)', flagged: true, score: 12, reason: 'outside for 6.2 h', compared: 80 },
      { parameter: 'pH', label: 'pH', flagged: false, score: 0.01, reason: 'outside for 0.1 h', compared: 100 },
      { parameter: 'temperature', label: 'Temperature', flagged: false, score: 0, reason: 'not compared', compared: 0 },
    ]);
    expect(conformanceRows(deviation, 8)).toEqual([]);
  });

  it('colours flagged parameters red, compared ones green, uncompared grey', () => {
    expect([{ flagged: true, compared: 5 }, { flagged: false, compared: 5 }, { flagged: false, compared: 0 }].map(conformanceIntent)).toEqual(['danger', 'success', 'none']);
  });
});

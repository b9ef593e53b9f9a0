import { describe, expect, it } from 'vitest';
import {
  averageTiter, formatPercent, gramsPerLitreFactor, titerReadingsInGramsPerLitre, formatRunTime, formatTiter, maxTiter, meanOfMeans, runDurationMinutes, statusOf, summariseRuns,
} from './run-metrics.ts';
import type { Reading } from './types.ts';

const now = new Date('2025-06-10T12:00:00Z');
const reading = (value: number | null, max?: number): Reading => ({ ts: '2025-06-01T00:00:00Z', instrumentId: 1, value, max });

describe('formatRunTime', () => {
  it('shows minutes under an hour, hours under a day, days beyond', () => {
    expect(formatRunTime(45)).toBe('45 min');
    expect(formatRunTime(59.4)).toBe('59 min');
    expect(formatRunTime(60)).toBe('1.0 hours');
    expect(formatRunTime(1439)).toBe('24.0 hours');
    expect(formatRunTime(1440)).toBe('1.0 days');
    expect(formatRunTime(4320)).toBe('3.0 days');
  });
  it('shows N/A without a duration', () => {
    expect(formatRunTime(null)).toBe('N/A');
    expect(formatRunTime(Number.NaN)).toBe('N/A');
  });
});

describe('runDurationMinutes', () => {
  it('measures start to end', () => {
    expect(runDurationMinutes({ startTime: '2025-06-01T00:00:00Z', endTime: '2025-06-01T02:30:00Z' }, now)).toBe(150);
  });
  it('measures an active run until now', () => {
    expect(runDurationMinutes({ startTime: '2025-06-10T11:00:00Z', endTime: null }, now)).toBe(60);
  });
  it('has no duration before the start or without one', () => {
    expect(runDurationMinutes({ startTime: null, endTime: null }, now)).toBeNull();
    expect(runDurationMinutes({ startTime: '2025-07-01T00:00:00Z', endTime: null }, now)).toBeNull();
  });
});

describe('statusOf', () => {
  it('prefers the status the server derived', () => {
    expect(statusOf({ startTime: null, endTime: null, status: 'Completed' }, now)).toBe('Completed');
  });
  it('derives it from the times otherwise', () => {
    expect(statusOf({ startTime: null, endTime: null }, now)).toBe('Pending');
    expect(statusOf({ startTime: '2025-06-01T00:00:00Z', endTime: null }, now)).toBe('Active');
    expect(statusOf({ startTime: '2025-06-01T00:00:00Z', endTime: '2025-06-02T00:00:00Z' }, now)).toBe('Completed');
  });
});

describe('summariseRuns', () => {
  it('counts runs, active runs and averages finished durations', () => {
    const summary = summariseRuns([
      { startTime: '2025-06-01T00:00:00Z', endTime: '2025-06-01T01:00:00Z' },
      { startTime: '2025-06-02T00:00:00Z', endTime: '2025-06-02T03:00:00Z' },
      { startTime: '2025-06-10T00:00:00Z', endTime: null },
      { startTime: null, endTime: null },
    ], now);
    expect(summary).toEqual({ totalRuns: 4, activeRuns: 1, averageRunTimeMinutes: 120 });
  });
  it('has no average without finished runs', () => {
    expect(summariseRuns([], now)).toEqual({ totalRuns: 0, activeRuns: 0, averageRunTimeMinutes: null });
  });
});

describe('maxTiter', () => {
  it('takes the highest reading across titer instruments, bucket maxima included', () => {
    expect(maxTiter([[reading(1.2), reading(3.4)], [reading(2.0, 5.5), reading(null)]], { scaleGrams: 10, scaleLiters: 2 })).toBe(5.5);
  });
  it('falls back to grams per litre, then to nothing', () => {
    expect(maxTiter([], { scaleGrams: 10, scaleLiters: 4 })).toBe(2.5);
    expect(maxTiter([[reading(null)]], { scaleGrams: 10, scaleLiters: 0 })).toBeNull();
    expect(maxTiter([], { scaleGrams: null, scaleLiters: 4 })).toBeNull();
  });
  it('formats in g/L with one decimal', () => {
    expect(formatTiter(2.345)).toBe('2.3 g/L');
    expect(formatTiter(null)).toBe('N/A');
  });
});

describe('meanOfMeans (yield)', () => {
  it('averages the per-instrument means', () => {
    expect(meanOfMeans([[reading(10), reading(20)], [reading(40), reading(null)]])).toBe(27.5);
    expect(meanOfMeans([[], [reading(null)]])).toBeNull();
    expect(formatPercent(27.55)).toBe('27.6%');
    expect(formatPercent(null)).toBe('N/A');
  });
});

describe('averageTiter', () => {
  const probe = (id: number, unit: string | null) => ({ id, name: `Titer ${id}`, unit });
  it('averages the titer instruments\' highest readings in g/L', () => {
    const average = averageTiter([{ instrument: probe(1, 'g/L'), readings: [reading(2), reading(4)] }, { instrument: probe(2, 'g/L'), readings: [reading(6)] }], [{ scaleGrams: 100, scaleLiters: 1 }]);
    expect(average.value).toBe(5);
    expect(average.fromRunScale).toBe(false);
  });
  it('converts other mass concentrations and leaves out units it cannot average (the jump to 284 g/L)', () => {
    const average = averageTiter([
      { instrument: probe(1, 'g/L'), readings: [reading(3.6)] },
      // An imported titer column in mg/L: 2,400 mg/L is 2.4 g/L, not 2,400 g/L.
      { instrument: probe(2, 'mg/L'), readings: [reading(1200), reading(2000, 2400)] },
      // A column typed as titer that holds an optical density or counts is no concentration at all.
      { instrument: probe(3, 'OD600'), readings: [reading(850)] },
      { instrument: probe(4, null), readings: [reading(560)] },
      { instrument: probe(5, 'g/L'), readings: [] },
    ], []);
    expect(average.value).toBeCloseTo(3.0, 10);
    expect(average.sources.map((source) => [source.instrument.id, source.highestGramsPerLitre, source.excludedBecause])).toEqual([
      [1, 3.6, null], [2, 2.4, null], [3, null, 'unit'], [4, null, 'unit'], [5, null, 'no readings'],
    ]);
  });
  it('falls back to the runs grams per litre, then N/A', () => {
    const fromScale = averageTiter([], [{ scaleGrams: 10, scaleLiters: 2 }, { scaleGrams: 30, scaleLiters: 2 }, { scaleGrams: null, scaleLiters: 2 }]);
    expect(fromScale.value).toBe(10);
    expect(fromScale.fromRunScale).toBe(true);
    expect(averageTiter([{ instrument: probe(1, 'g/L'), readings: [] }], [{ scaleGrams: 0, scaleLiters: 2 }]).value).toBeNull();
  });
});

describe('titer units', () => {
  it('reads mass concentrations as g/L and nothing else', () => {
    expect(gramsPerLitreFactor('g/L')).toBe(1);
    expect(gramsPerLitreFactor('mg/L')).toBe(1e-3);
    expect(gramsPerLitreFactor('μg/mL')).toBe(1e-3);
    expect(gramsPerLitreFactor('OD600')).toBeNull();
    expect(gramsPerLitreFactor(null)).toBeNull();
    expect(titerReadingsInGramsPerLitre('mg/L', [reading(500, 800)])).toEqual([{ ...reading(0.5), max: 0.8 }]);
    expect(titerReadingsInGramsPerLitre('%', [reading(5)])).toBeNull();
  });
});

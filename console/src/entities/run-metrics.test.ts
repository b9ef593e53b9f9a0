import { describe, expect, it } from 'vitest';
import {
  averageTiter, formatPercent, formatRunTime, formatTiter, maxTiter, meanOfMeans, runDurationMinutes, statusOf, summariseRuns,
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
  it('averages the titer instruments when there are readings', () => {
    expect(averageTiter([[reading(2), reading(4)], [reading(6)]], [{ scaleGrams: 100, scaleLiters: 1 }])).toBe(5);
  });
  it('falls back to the runs grams per litre, then N/A', () => {
    expect(averageTiter([], [{ scaleGrams: 10, scaleLiters: 2 }, { scaleGrams: 30, scaleLiters: 2 }, { scaleGrams: null, scaleLiters: 2 }])).toBe(10);
    expect(averageTiter([[]], [{ scaleGrams: 0, scaleLiters: 2 }])).toBeNull();
  });
});

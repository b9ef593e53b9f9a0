import { describe, expect, it } from 'vitest';
import { simulateFedBatch } from '../../src/demo/fed-batch-simulator.ts';

describe('simulateFedBatch', () => {
  const start = Date.UTC(2026, 0, 5, 8, 0, 0);
  const series = simulateFedBatch({ startMs: start, durationHours: 40, seed: 7 });

  it('samples every online probe once a minute over the whole run', () => {
    expect(series.temperature).toHaveLength(40 * 60 + 1);
    expect(series.ph[0]![0]).toBe(start);
    expect(series.dissolvedO2.at(-1)![0]).toBe(start + 40 * 3600 * 1000);
  });

  it('grows biomass by more than an order of magnitude', () => {
    const firstOd = series.opticalDensity[0]![1];
    const lastOd = series.opticalDensity.at(-1)![1];
    expect(lastOd).toBeGreaterThan(firstOd * 10);
  });

  it('keeps the controlled variables near their setpoints', () => {
    const phValues = series.ph.map(([, v]) => v);
    expect(Math.min(...phValues)).toBeGreaterThan(6.7);
    expect(Math.max(...phValues)).toBeLessThan(7.2);
    const lateDo = series.dissolvedO2.slice(-600).map(([, v]) => v);
    expect(Math.min(...lateDo)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...lateDo)).toBeLessThanOrEqual(101);
  });

  it('starts the feed only after the batch glucose is used up, and shifts temperature at induction', () => {
    expect(series.feedRate[0]![1]).toBe(0);
    expect(series.feedRate.at(-1)![1]).toBeGreaterThan(0);
    const beforeInduction = series.temperature[13 * 60]![1];
    const afterInduction = series.temperature[20 * 60]![1];
    expect(beforeInduction).toBeGreaterThan(36.5);
    expect(afterInduction).toBeLessThan(30.5);
  });

  it('forms product only after induction, sampled offline every four hours', () => {
    expect(series.titer).toHaveLength(11);
    expect(series.titer[1]![1]).toBeLessThan(0.05);
    expect(series.titer.at(-1)![1]).toBeGreaterThan(series.titer[4]![1]);
  });

  it('is deterministic for a seed', () => {
    const again = simulateFedBatch({ startMs: start, durationHours: 40, seed: 7 });
    expect(again.dissolvedO2).toEqual(series.dissolvedO2);
  });
});

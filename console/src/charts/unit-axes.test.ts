import { describe, expect, it } from 'vitest';
import { axisIndexOfUnit, minimumSpan, planUnitAxes, toggleShownUnit, UNIT_MIN_SPAN } from './unit-axes.ts';
import type { ChartSeries } from './series-model.ts';

function series(id: string, unit: string | null, values: number[] = [1, 2]): Pick<ChartSeries, 'id' | 'unit' | 'color' | 'data'> {
  return { id, unit, color: `color-${id}`, data: values.map((y, i) => [i, y]) };
}

/** The eight online and offline parameters of a stirred-tank fed-batch: seven units. */
const FED_BATCH = [
  series('temperature', 'celsius', [37, 30]), series('ph', 'pH', [7, 6.98]), series('do', '%', [100, 30]),
  series('stirrer', 'rpm', [1000, 1000]), series('feed', 'mL/min', [0, 0.4]), series('od', 'OD600', [0.3, 120]),
  series('co2', '%', [0.04, 4]), series('titer', 'g/L', [0, 2.5]),
];

describe('unit axes', () => {
  it('makes one axis per unit, in order of first appearance', () => {
    const axes = planUnitAxes(FED_BATCH);
    expect(axes.map((a) => a.unit)).toEqual(['celsius', 'pH', '%', 'rpm', 'mL/min', 'OD600', 'g/L']);
    expect(axes[2]!.seriesIds).toEqual(['do', 'co2']);
    expect(axisIndexOfUnit(axes, 'g/L')).toBe(6);
    expect(axisIndexOfUnit(axes, '%')).toBe(2);
  });

  it('colours an axis like its only series and leaves a shared axis neutral', () => {
    const axes = planUnitAxes(FED_BATCH);
    expect(axes[0]!.color).toBe('color-temperature');
    expect(axes[2]!.color).toBeNull();
  });

  it('shows at most three axes, alternating sides, and the rest hidden', () => {
    const axes = planUnitAxes(FED_BATCH);
    expect(axes.filter((a) => a.visible).map((a) => [a.unit, a.opposite])).toEqual([['celsius', false], ['pH', true], ['%', false]]);
    expect(axes.filter((a) => !a.visible)).toHaveLength(4);
  });

  it('shows the units the user picked instead', () => {
    const axes = planUnitAxes(FED_BATCH, ['rpm', 'g/L']);
    expect(axes.filter((a) => a.visible).map((a) => a.unit)).toEqual(['rpm', 'g/L']);
    // A pick of a unit no series has any more is ignored.
    expect(planUnitAxes(FED_BATCH, ['bar', 'pH']).filter((a) => a.visible).map((a) => a.unit)).toEqual(['pH']);
  });

  it('gives each series without a unit an axis of its own, named after the series', () => {
    const axes = planUnitAxes([{ ...series('a', null), name: 'Heater duty' }, series('b', null, [0, 75_000])]);
    expect(axes.map((axis) => [axis.title, axis.seriesIds, axis.visible])).toEqual([['Heater duty', ['a'], true], ['Value', ['b'], true]]);
    expect(axes[0]!.minRange).toBeLessThan(axes[1]!.minRange);
  });

  it('keeps the newest picks when one more is chosen than fits', () => {
    expect(toggleShownUnit(['celsius', 'pH', '%'], 'rpm')).toEqual(['pH', '%', 'rpm']);
    expect(toggleShownUnit(['celsius', 'pH'], 'pH')).toEqual(['celsius']);
    expect(toggleShownUnit([], 'rpm')).toEqual(['rpm']);
  });
});

describe('minimum span', () => {
  it('keeps a steady stirrer from being stretched over the whole axis', () => {
    // 1000 rpm with a one-rpm wobble spans at least 50 rpm, not 999.5-1000.5.
    expect(minimumSpan('rpm', [999.6, 1000, 1000.4])).toBeCloseTo(50, 1);
    expect(planUnitAxes([series('s', 'rpm', [1000, 1000])])[0]!.minRange).toBe(50);
  });

  it('takes the unit floor for small values and a share of the level for large ones', () => {
    expect(minimumSpan('celsius', [37, 37.05])).toBe(UNIT_MIN_SPAN.celsius);
    expect(minimumSpan('mAU', [1450])).toBeCloseTo(72.5);
    expect(minimumSpan('unknown-unit', [200])).toBe(10);
  });

  it('never gives an axis a zero span', () => {
    expect(minimumSpan('', [0, 0])).toBe(1);
    expect(minimumSpan('', [])).toBe(1);
  });
});

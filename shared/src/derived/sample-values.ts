/**
 * How a formula takes a sample analyte between samples. Samples are sparse (a few a day), a formula's
 * grid is not: each grid time gets the analyte's value by the formula's choice.
 *
 * - `interpolate`: linear between the neighbouring samples; at a sample's time its own value; before
 *   the first sample and after the last there is none (never extrapolated).
 * - `last`: the value of the last sample drawn at or before the grid time, held until the next one;
 *   none before the first sample.
 *
 * A flagged result (`< 0.5`) was not measured, so it is a gap: no interpolation across an interval
 * touching it, and no value held from it.
 */
export const SAMPLE_VALUE_MODES = ['interpolate', 'last'] as const;
export type SampleValueMode = (typeof SAMPLE_VALUE_MODES)[number];

export interface SamplePoint {
  /** When the sample was drawn, in ms. */
  t: number;
  /** NaN for a flagged result. */
  value: number;
}

/** The analyte's value at each grid time (NaN where it has none); `points` sorted by time. */
export function sampleValuesOn(times: ArrayLike<number>, points: readonly SamplePoint[], mode: SampleValueMode): Float64Array {
  const out = new Float64Array(times.length).fill(Number.NaN);
  // The last point at or before the grid time; grid times increase, so it only moves forward.
  let before = -1;
  for (let i = 0; i < times.length; i++) {
    const time = times[i]!;
    while (before + 1 < points.length && points[before + 1]!.t <= time) before += 1;
    if (before < 0) continue;
    const left = points[before]!;
    if (mode === 'last' || left.t === time) {
      out[i] = left.value;
      continue;
    }
    const right = points[before + 1];
    if (!right) continue;
    out[i] = left.value + ((right.value - left.value) * (time - left.t)) / (right.t - left.t);
  }
  return out;
}

/**
 * The least half-width of a band. With few references the statistical band (percentiles or k sigma)
 * can be narrower than the probes' own noise, and then every target is "outside" most of the time.
 * A tolerance per parameter widens the band to at least that much either side of its centre: set by
 * an editor on a golden batch, or by default from the references themselves, as a multiple of their
 * noise (the robust standard deviation of successive grid values, which a slow trend barely moves)
 * and at least a small share of the range the centre spans (parameters without noise, a pump rate
 * or a setpoint, would otherwise get a band of no width).
 */
import {
  TOLERANCE_NOISE_MULTIPLE, TOLERANCE_RANGE_SHARE, type Band, type Tolerance,
} from '@bioprocess/shared/analysis';
import type { CellStatistics } from './resample.ts';

/** The median absolute deviation of normal noise is 0.6745 sigma; a difference of two draws has sigma x sqrt 2. */
const MAD_OF_DIFFERENCE_PER_SIGMA = 0.6745 * Math.SQRT2;
/** A parameter that never changed in any reference still needs a band of some width to measure distances in. */
const CONSTANT_PARAMETER_SHARE = 1e-3;

function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export const centreOf = (cell: Pick<CellStatistics, 'mean' | 'median'>, band: Band): number | null => (band.kind === 'sigma' ? cell.mean : cell.median);

/** The median over the references of each one's noise, from its differences between neighbouring grid cells. */
export function referenceNoise(cells: readonly CellStatistics[]): number | null {
  const series = new Map<number, Map<number, number>>();
  for (const cell of cells) {
    cell.unitOperationIds.forEach((id, index) => {
      const value = cell.values[index];
      if (value === undefined || !Number.isFinite(value)) return;
      const own = series.get(id) ?? new Map<number, number>();
      own.set(cell.gridIndex, value);
      series.set(id, own);
    });
  }
  const noises = [...series.values()].flatMap((values) => {
    const differences: number[] = [];
    for (const [gridIndex, value] of values) {
      const previous = values.get(gridIndex - 1);
      if (previous !== undefined) differences.push(Math.abs(value - previous));
    }
    const typical = median(differences);
    return typical === null ? [] : [typical / MAD_OF_DIFFERENCE_PER_SIGMA];
  });
  return median(noises);
}

/** The tolerance of one parameter from its envelope cells: the one set, else the default. */
export function toleranceOf(cells: readonly CellStatistics[], band: Band, set: number | undefined): Tolerance {
  const noise = referenceNoise(cells);
  if (set !== undefined) return { value: set, source: 'set', noise };
  const centres = cells.map((cell) => centreOf(cell, band)).filter((value): value is number => value !== null && Number.isFinite(value));
  if (centres.length === 0) return { value: null, source: 'none', noise };
  const highest = Math.max(...centres);
  const lowest = Math.min(...centres);
  const fromNoise = TOLERANCE_NOISE_MULTIPLE * (noise ?? 0);
  const fromRange = TOLERANCE_RANGE_SHARE * (highest - lowest);
  if (fromNoise === 0 && fromRange === 0) {
    return { value: CONSTANT_PARAMETER_SHARE * Math.max(1, Math.abs(highest), Math.abs(lowest)), source: 'range', noise };
  }
  return fromNoise >= fromRange ? { value: fromNoise, source: 'noise', noise } : { value: fromRange, source: 'range', noise };
}

/** The band a target is compared with in one cell: the statistical band, widened to the tolerance around the centre. */
export function comparedBand(cell: CellStatistics, band: Band, tolerance: number | null): { lower: number | null; upper: number | null } {
  if (cell.lower === null || cell.upper === null) return { lower: null, upper: null };
  const centre = centreOf(cell, band);
  if (tolerance === null || centre === null) return { lower: cell.lower, upper: cell.upper };
  return { lower: Math.min(cell.lower, centre - tolerance), upper: Math.max(cell.upper, centre + tolerance) };
}

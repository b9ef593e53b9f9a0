/** Derived parameters in the console: the api's shapes (camelCased) and their chart points. */
import { z } from 'zod';
import { derivedParameterSchema, derivedSeriesSchema, type DerivedParameter, type DerivedSeries } from '@bioprocess/shared/derived/contracts';
import type { Camelize } from '../entities/types.ts';
import { minutesSince } from '../charts/time-axis.ts';
import type { ChartPoint } from '../charts/series-model.ts';

export const derivedParameterListSchema = z.array(derivedParameterSchema);
export { derivedSeriesSchema };

export type DerivedParameterView = Camelize<DerivedParameter>;
export type DerivedSeriesView = Camelize<DerivedSeries>;

/** Points with a value, as [minutes since the start, value]; gaps are left out so the line breaks there. */
export function derivedChartPoints(series: DerivedSeriesView | undefined, startMs: number | null): ChartPoint[] {
  if (!series || startMs === null) return [];
  return series.points
    .filter((point): point is { ts: string; value: number } => point.value !== null)
    .map((point) => [minutesSince(point.ts, startMs), point.value]);
}

/** The expression with a caret under the column of a problem, for the editor's inline marker. */
export function caretLine(position: number): string {
  return `${' '.repeat(Math.max(0, position))}^`;
}

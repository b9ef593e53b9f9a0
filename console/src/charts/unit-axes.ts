/**
 * One y axis per unit for the time-series charts. Several parameters measured in one unit share an
 * axis (drawn neutral, as it belongs to no single series); an axis of one parameter takes that
 * series' colour so the eye links scale and line. Only a few axes fit beside a readable plot, so at
 * most MAX_VISIBLE_Y_AXES carry labels; the others still scale their series and can be picked
 * instead. Each axis spans at least a minimum range so a steady signal is drawn flat, not as noise
 * stretched over the full height.
 */
import type { ChartSeries } from './series-model.ts';

export const MAX_VISIBLE_Y_AXES = 3;
export const UNITLESS_AXIS_TITLE = 'Value';
/** Starts the axis key of a series without a unit; no unit begins with a NUL. */
const UNITLESS_KEY_PREFIX = '\u0000unitless:';

/**
 * The smallest span worth showing per unit: roughly the resolution a process scientist reads a
 * probe at. A relative floor (RELATIVE_MIN_SPAN of the level) covers units not listed and large values.
 */
export const UNIT_MIN_SPAN: Readonly<Record<string, number>> = {
  celsius: 2,
  fahrenheit: 4,
  pH: 0.5,
  '%': 5,
  rpm: 50,
  'mL/min': 0.5,
  'L/min': 0.5,
  'L/h': 0.5,
  OD600: 0.5,
  AU: 0.05,
  mAU: 10,
  'g/L': 0.5,
  'mg/L': 5,
  bar: 0.2,
  kPa: 20,
  psi: 3,
  'mS/cm': 1,
  G: 100,
};
export const RELATIVE_MIN_SPAN = 0.05;

export interface UnitAxis {
  /** The axis' key: its unit, or for a series without a unit that series' own key (`axisKeyOf`). */
  unit: string;
  title: string;
  seriesIds: string[];
  /** The colour of its only series, or null when several series share it. */
  color: string | null;
  /** Whether the axis shows its labels (the series of a hidden axis are still drawn). */
  visible: boolean;
  /** Shown axes alternate left and right. */
  opposite: boolean;
  /** The smallest range the axis may span, from its unit and the level of its values. */
  minRange: number;
}

export function unitKey(unit: string | null | undefined): string {
  return unit ?? '';
}

/**
 * The axis a series goes on: its unit's, or, without a unit, one of its own. Unitless values share
 * no scale (a 0-1 heater duty and a 0-75,000 counter), so sharing an axis would flatten the small one.
 */
export function axisKeyOf(series: Pick<ChartSeries, 'id' | 'unit'>): string {
  return series.unit ? series.unit : `${UNITLESS_KEY_PREFIX}${series.id}`;
}
/** The minimum span of an axis: the unit's own, or a share of the largest magnitude it shows. */
export function minimumSpan(unit: string, values: Iterable<number>): number {
  let magnitude = 0;
  for (const value of values) if (Number.isFinite(value)) magnitude = Math.max(magnitude, Math.abs(value));
  const relative = magnitude * RELATIVE_MIN_SPAN;
  const fixed = UNIT_MIN_SPAN[unit] ?? 0;
  const span = Math.max(fixed, relative);
  // All zeros and no known unit: still give the axis a span so it does not collapse.
  return span > 0 ? span : 1;
}

/**
 * Axes for the series, one per unit in order of first appearance, and one per series without a unit. `shownUnits` names the units whose
 * axes show labels (at most `maxVisible`); null shows the first `maxVisible` units.
 */
export function planUnitAxes(
  series: ReadonlyArray<Pick<ChartSeries, 'id' | 'unit' | 'color' | 'data'> & { name?: string }>,
  shownUnits: readonly string[] | null = null,
  maxVisible: number = MAX_VISIBLE_Y_AXES,
): UnitAxis[] {
  const byUnit = new Map<string, Array<Pick<ChartSeries, 'id' | 'unit' | 'color' | 'data'> & { name?: string }>>();
  for (const s of series) {
    const key = axisKeyOf(s);
    const list = byUnit.get(key);
    if (list) list.push(s);
    else byUnit.set(key, [s]);
  }
  const units = [...byUnit.keys()];
  // A choice of the user holds exactly; without one the first units show.
  const shown = new Set((shownUnits ?? units).filter((unit) => byUnit.has(unit)).slice(0, maxVisible));
  let shownIndex = 0;
  return units.map((unit) => {
    const members = byUnit.get(unit)!;
    const visible = shown.has(unit);
    const opposite = visible ? shownIndex++ % 2 === 1 : false;
    const unitless = unit.startsWith(UNITLESS_KEY_PREFIX);
    return {
      unit,
      title: unitless ? members[0]!.name ?? UNITLESS_AXIS_TITLE : unit,
      seriesIds: members.map((m) => m.id),
      color: members.length === 1 ? members[0]!.color : null,
      visible,
      opposite,
      minRange: minimumSpan(unitless ? '' : unit, members.flatMap((m) => m.data.map(([, y]) => y))),
    };
  });
}

/** The index of a unit's axis among `axes`. */
export function axisIndexOfUnit(axes: readonly UnitAxis[], unit: string | null): number {
  const index = axes.findIndex((axis) => axis.unit === unitKey(unit));
  return index < 0 ? 0 : index;
}

/** The index of a series' axis among `axes` (a unitless series has its own). */
export function axisIndexOfSeries(axes: readonly UnitAxis[], seriesId: string): number {
  const index = axes.findIndex((axis) => axis.seriesIds.includes(seriesId));
  return index < 0 ? 0 : index;
}

/**
 * The units whose axes show after the user picks or drops one: a pick past the limit drops the
 * oldest pick, so the newest choice always shows.
 */
export function toggleShownUnit(current: readonly string[], unit: string, maxVisible: number = MAX_VISIBLE_Y_AXES): string[] {
  if (current.includes(unit)) return current.filter((u) => u !== unit);
  const next = [...current, unit];
  return next.slice(Math.max(0, next.length - maxVisible));
}

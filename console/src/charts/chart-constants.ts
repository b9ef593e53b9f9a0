/**
 * The chart constants, in one place so the unit-operation chart and the compare chart
 * look and behave the same.
 */
import { Colors } from '@blueprintjs/core';

export const MINUTE_MS = 60_000;
export const CHART_HEIGHT_PX = 400;
export const X_AXIS_MIN = 0;
/** At most this many ticks on the time axis, fewer where the plot is narrow (TIME_AXIS_TICK_SPACING_PX). */
export const TIME_AXIS_TICK_LIMIT = 10;

/**
 * Twenty-two series colours: Blueprint's ten, then those of Kenneth Kelly's maximum-contrast set
 * (1965) that are far from them and dark enough for a thin line on white. Past the last colour the
 * colours repeat with the next dash style (`seriesLook` in series-model.ts), so 50 series stay apart.
 */
export const SERIES_PALETTE: readonly string[] = [
  Colors.BLUE3, Colors.ORANGE3, Colors.GREEN3, Colors.RED3, Colors.VIOLET3,
  Colors.TURQUOISE3, Colors.GOLD3, Colors.ROSE3, Colors.CERULEAN3, Colors.FOREST3,
  Colors.INDIGO3, '#882D17', '#8DB600', '#654522', '#E68FAC', '#604E97',
  '#F99379', '#2B3D26', '#848482', '#C2B280', '#0067A5', '#B3446C',
];

/** Point styles, cycled by index; the non-standard ones are registered as Highcharts symbols. */
export const POINT_STYLES = [
  'circle', 'rect', 'triangle', 'diamond', 'cross', 'star', 'rectRounded', 'rectRot', 'line',
] as const;
export type PointStyle = (typeof POINT_STYLES)[number];

/** Opacity steps used to tell apart several parameters drawn in one run colour. */
export const OPACITY_STEPS: readonly number[] = [1, 0.8, 0.6, 0.4, 0.2];

export const LINE_TENSION = 0.4;
export const SPAN_GAPS = true;
export const LINE_WIDTH = { highlighted: 3, normal: 1 } as const;
export const POINT_RADIUS = { highlighted: 3, normal: 1 } as const;
export const POINT_HOVER_RADIUS = { highlighted: 10, normal: 4 } as const;

export const COMMENT_LINE = {
  dash: [5, 5] as const,
  width: 2,
  selectedWidth: 3,
  /** Sepia is in no series' palette, so a comment never looks like a reading. */
  color: Colors.SEPIA3,
  /** Characters of the comment shown beside its line; the tooltip has the whole text. */
  labelLength: 18,
  /** Plot lines at zIndex 2 render under the series group (zIndex 3): the data stays on top. */
  zIndex: 2,
} as const;
export const COMMENT_HOVER_RADIUS_PX = 20;

/** Points asked of the server per instrument and visible range: enough for a sharp line, small enough to stay fast. */
export const POINTS_PER_SERIES = 1500;
/** The compare screen's series fetch limit. */
export const COMPARE_SERIES_LIMIT = 1000;

/** Height of one unit's panel when the chart is stacked: the page grows with the panels, a panel never shrinks below this. */
export const STACKED_PANEL_HEIGHT_PX = 180;
/** Title, toolbar spacing and time axis of a stacked chart, above and below its panels. */
export const STACKED_CHROME_PX = 110;
/**
 * Below this width of the chart's frame the legend goes under the plot (with its own scroll) instead
 * of beside it: beside it, the legend and up to three labelled y axes would leave the plot too narrow
 * to read a run of days.
 */
export const LEGEND_SIDE_MIN_WIDTH_PX = 1000;
/** A single plot never gets shorter than this: the chart grows when its axes and labels would squeeze it. */
export const MIN_PLOT_HEIGHT_PX = 260;
/** Room each time-axis label needs, so a narrow plot gets fewer ticks instead of rotated labels. */
export const TIME_AXIS_TICK_SPACING_PX = 64;
/** Points per series past which Highcharts' boost module draws the series in WebGL (no spline, markers or dashes then). */
export const BOOST_POINTS_PER_SERIES = 4000;
/** Compare draws one panel per parameter (small multiples) past this many series. */
export const SMALL_MULTIPLES_MIN_SERIES = 9;
/** Height of one small-multiple panel of Compare. */
export const SMALL_MULTIPLE_HEIGHT_PX = 260;
/** Colour of an axis several series share: it belongs to none of them. */
export const SHARED_AXIS_COLOR = Colors.GRAY1;

export const CHART_MESSAGES = {
  loading: 'Loading chart...',
  empty: 'No data available',
} as const;

export function paletteColor(index: number): string {
  return SERIES_PALETTE[((index % SERIES_PALETTE.length) + SERIES_PALETTE.length) % SERIES_PALETTE.length]!;
}

export function pointStyleAt(index: number): PointStyle {
  return POINT_STYLES[index % POINT_STYLES.length]!;
}

export function opacityAt(index: number): number {
  return OPACITY_STEPS[index % OPACITY_STEPS.length]!;
}

/** The Highcharts marker symbol drawing a point style. */
export function highchartsSymbol(style: PointStyle): string {
  switch (style) {
    case 'rect':
    case 'rectRounded':
      return 'square';
    case 'rectRot':
      return 'diamond';
    default:
      return style;
  }
}

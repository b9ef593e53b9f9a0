import { describe, expect, it } from 'vitest';
import { BOOST_POINTS_PER_SERIES, LEGEND_SIDE_MIN_WIDTH_PX, SERIES_PALETTE, STACKED_PANEL_HEIGHT_PX } from './chart-constants.ts';
import { boostOptions, isBoosted, legendPlacement, seriesOptions, stackedChartHeight } from './chart-options.ts';
import { seriesLook, type ChartSeries } from './series-model.ts';
import { planUnitAxes } from './unit-axes.ts';

function line(id: string, unit: string | null, points: number, extra: Partial<ChartSeries> = {}): ChartSeries {
  return {
    id, name: id, unit, color: '#000000', symbol: 'circle', opacity: 1,
    data: Array.from({ length: points }, (_, index): [number, number] => [index, index % 7]), ...extra,
  };
}
const context = (series: ChartSeries[]) => ({ axes: planUnitAxes(series), hiddenIds: new Set<string>(), toRgba: (color: string) => color, sampleMarkerRadius: 5 });

describe('chart options for many series', () => {
  it('puts the legend beside the plot on wide frames and under it on phones', () => {
    expect(legendPlacement(1440 - 260)).toBe('side');
    expect(legendPlacement(LEGEND_SIDE_MIN_WIDTH_PX)).toBe('side');
    expect(legendPlacement(390 - 32)).toBe('below');
  });

  it('grows a stacked chart with its panels, each at least the panel height', () => {
    expect(stackedChartHeight(2, 400)).toBeGreaterThanOrEqual(400);
    const tall = stackedChartHeight(20, 400);
    expect(tall).toBeGreaterThanOrEqual(20 * STACKED_PANEL_HEIGHT_PX);
    expect(STACKED_PANEL_HEIGHT_PX).toBeGreaterThanOrEqual(180);
  });

  it('has at least twenty distinct colours, then the same colours dashed', () => {
    expect(new Set(SERIES_PALETTE.map((color) => color.toLowerCase())).size).toBe(SERIES_PALETTE.length);
    expect(SERIES_PALETTE.length).toBeGreaterThanOrEqual(20);
    const looks = Array.from({ length: 50 }, (_, index) => seriesLook(index));
    expect(new Set(looks.map((look) => `${look.color}|${look.dashStyle}`)).size).toBe(50);
    expect(looks[0]!.dashStyle).toBe('Solid');
    expect(looks[SERIES_PALETTE.length]).toEqual({ color: looks[0]!.color, dashStyle: 'ShortDash' });
  });

  it('draws a step series as a line held until the next value, the others as splines', () => {
    const series = [line('stirrer', 'rpm', 10, { step: true }), line('temperature', 'celsius', 10)];
    const [stirrer, temperature] = series.map((s) => seriesOptions(s, context(series))) as Array<{ type: string; step?: string }>;
    expect([stirrer!.type, stirrer!.step]).toEqual(['line', 'left']);
    expect([temperature!.type, temperature!.step]).toEqual(['spline', undefined]);
  });

  it('boosts only the series past the point threshold, and never the sample markers', () => {
    const long = line('long', 'celsius', BOOST_POINTS_PER_SERIES + 1);
    const short = line('short', 'celsius', BOOST_POINTS_PER_SERIES);
    const samples = line('samples', 'g/L', BOOST_POINTS_PER_SERIES + 1, { markers: { points: [] } });
    expect([isBoosted(long), isBoosted(short), isBoosted(samples)]).toEqual([true, false, false]);
    const options = [long, short].map((s) => seriesOptions(s, context([long, short]))) as Array<{ type: string; boostThreshold: number }>;
    expect(options.map((o) => [o.type, o.boostThreshold])).toEqual([['line', BOOST_POINTS_PER_SERIES], ['spline', 0]]);
    expect(boostOptions([long, short]).enabled).toBe(true);
    expect(boostOptions([short, samples]).enabled).toBe(false);
    // Forty series must not switch the whole chart to WebGL (and lose every dash style).
    expect(boostOptions(Array.from({ length: 40 }, (_, i) => line(`s${i}`, null, 10))).seriesThreshold).toBeGreaterThan(1000);
  });

  it('puts each unitless series on its own axis and series of one unit on a shared one', () => {
    const series = [line('heater duty', null, 3), line('counter', null, 3), line('jacket', 'celsius', 3), line('broth', 'celsius', 3)];
    const axes = planUnitAxes(series);
    expect(axes.map((axis) => [axis.title, axis.seriesIds])).toEqual([
      ['heater duty', ['heater duty']], ['counter', ['counter']], ['celsius', ['jacket', 'broth']],
    ]);
    const yAxes = series.map((s) => (seriesOptions(s, context(series)) as { yAxis: number }).yAxis);
    expect(yAxes).toEqual([0, 1, 2, 2]);
  });

  it('keeps a hidden series hidden', () => {
    const series = [line('a', 'rpm', 3), line('b', 'rpm', 3)];
    const options = series.map((s) => seriesOptions(s, { ...context(series), hiddenIds: new Set(['b']) }) as { visible: boolean });
    expect(options.map((o) => o.visible)).toEqual([true, false]);
  });
});

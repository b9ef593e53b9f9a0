/**
 * Alert firings drawn on a time-series chart: a shaded band from when the condition began to when it
 * cleared (to the axis end while it still fires), labelled with the rule. Bands are managed on the
 * axis directly, like the comment lines: each render replaces exactly the bands this module added.
 */
import { useEffect, type RefObject } from 'react';
import type { HighchartsReactRefObject } from 'highcharts-react-official';
import { Colors } from '@blueprintjs/core';
import type { Highcharts } from './highcharts-setup.ts';
import { chartText } from './chart-text.ts';

export interface ChartAlertBand {
  id: number;
  /** Minutes since the chart's minute 0. */
  fromMinute: number;
  /** null while the alert still fires. */
  toMinute: number | null;
  label: string;
  firing: boolean;
}

type PlotBandAxis = Highcharts.Axis & {
  addPlotBand(options: Highcharts.AxisPlotBandsOptions): unknown;
  removePlotBand(id: string): void;
};

const appliedBands = new WeakMap<Highcharts.Axis, { signature: string; ids: string[] }>();

export function alertPlotBand(band: ChartAlertBand, axisMax: number): Highcharts.AxisPlotBandsOptions {
  const color = band.firing ? Colors.RED5 : Colors.ORANGE5;
  return {
    id: `alert-${band.id}`,
    from: band.fromMinute,
    // A band too thin to see (a firing resolved at the next reading) still shows as a sliver.
    to: Math.max(band.toMinute ?? axisMax, band.fromMinute + 0.25),
    color: `${color}33`,
    borderColor: color,
    borderWidth: 1,
    zIndex: 0,
    className: 'chart-alert-band',
    label: { text: chartText(band.label), style: { color: Colors.DARK_GRAY3, fontSize: '11px' }, align: 'left', x: 4, y: 12 },
  };
}

export function useAlertBands(chartRef: RefObject<HighchartsReactRefObject | null>, bands: readonly ChartAlertBand[]): void {
  useEffect(() => {
    const axis = chartRef.current?.chart?.xAxis?.[0] as PlotBandAxis | undefined;
    if (!axis) return;
    const options = bands.map((band) => alertPlotBand(band, axis.getExtremes().dataMax ?? band.fromMinute));
    const signature = JSON.stringify(options);
    if (appliedBands.get(axis)?.signature === signature) return;
    for (const id of new Set([...(appliedBands.get(axis)?.ids ?? []), ...options.map((band) => String(band.id))])) axis.removePlotBand(id);
    for (const band of options) axis.addPlotBand(band);
    appliedBands.set(axis, { signature, ids: options.map((band) => String(band.id)) });
  });
}

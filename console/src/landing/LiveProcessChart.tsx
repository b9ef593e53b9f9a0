/** The hero's decorative live chart: temperature, pH and feed rate, a new sample every second. */
import Highcharts from 'highcharts';
// The named export: the package's UMD build hands bundlers an object as its default export.
import { HighchartsReact, type HighchartsReactRefObject } from 'highcharts-react-official';
import { useEffect, useRef, useState } from 'react';
import { createProcessSimulation, type ProcessSample } from './process-simulation.ts';

const VISIBLE_SAMPLES = 60;
const TICK_MS = 1000;
const COLORS = { temperature: '#FF7373', pH: '#4C90F0', feedRate: '#32A467' } as const;

function axis(title: string, color: string, opposite: boolean, min: number, max: number): Highcharts.YAxisOptions {
  return {
    title: { text: title, style: { color } },
    labels: { style: { color } },
    gridLineColor: 'rgba(255,255,255,0.08)',
    opposite,
    min,
    max,
  };
}

function initialSamples(nextSample: () => ProcessSample): ProcessSample[] {
  // Start mid-run so the feed is already visible on first paint.
  for (let i = 0; i < 60; i += 1) nextSample();
  return Array.from({ length: VISIBLE_SAMPLES }, () => nextSample());
}

function chartOptions(samples: ProcessSample[]): Highcharts.Options {
  return {
    chart: { backgroundColor: 'transparent', height: 340, style: { fontFamily: 'inherit' }, animation: { duration: 600 } },
    title: { text: undefined },
    credits: { enabled: false },
    accessibility: { enabled: false },
    legend: { itemStyle: { color: '#D3D8DE' }, itemHoverStyle: { color: '#FFFFFF' } },
    tooltip: { shared: true, valueDecimals: 2, headerFormat: '<span style="font-size: 11px">{point.key:.0f} min</span><br/>' },
    xAxis: {
      title: { text: 'Process time (h)', style: { color: '#ABB3BF' } },
      labels: { style: { color: '#ABB3BF' }, formatter() { return `${Math.round(Number(this.value) / 60)}`; } },
      lineColor: 'rgba(255,255,255,0.2)',
      tickColor: 'rgba(255,255,255,0.2)',
    },
    yAxis: [
      axis('Temperature (°C)', COLORS.temperature, false, 35, 39),
      axis('pH', COLORS.pH, true, 6.6, 7.4),
      axis('Feed rate (L/h)', COLORS.feedRate, true, 0, 5),
    ],
    plotOptions: { series: { marker: { enabled: false }, lineWidth: 2 } },
    series: [
      { type: 'spline', name: 'Temperature', color: COLORS.temperature, yAxis: 0, data: samples.map((s) => [s.minute, s.temperature]) },
      { type: 'spline', name: 'pH', color: COLORS.pH, yAxis: 1, data: samples.map((s) => [s.minute, s.pH]) },
      { type: 'spline', name: 'Feed rate', color: COLORS.feedRate, yAxis: 2, data: samples.map((s) => [s.minute, s.feedRate]) },
    ],
  };
}

export function LiveProcessChart() {
  const chartRef = useRef<HighchartsReactRefObject>(null);
  // useState initialisers run once per mount, so the options object (and the chart) never reset.
  const [nextSample] = useState(() => createProcessSimulation());
  const [options] = useState(() => chartOptions(initialSamples(nextSample)));

  useEffect(() => {
    const timer = window.setInterval(() => {
      const chart = chartRef.current?.chart;
      if (!chart) return;
      const sample = nextSample();
      const values = [sample.temperature, sample.pH, sample.feedRate];
      chart.series.forEach((series, index) => {
        // The window keeps VISIBLE_SAMPLES points: every new point shifts the oldest out.
        series.addPoint([sample.minute, values[index] ?? null], index === chart.series.length - 1, true);
      });
    }, TICK_MS);
    return () => window.clearInterval(timer);
  }, [nextSample]);

  return (
    <div className="app-live-chart" data-testid="live-process-chart" aria-label="Live process chart of temperature, pH and feed rate" role="img">
      <HighchartsReact highcharts={Highcharts} options={options} ref={chartRef} />
    </div>
  );
}

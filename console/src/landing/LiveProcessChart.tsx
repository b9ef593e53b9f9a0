/** The hero's decorative live chart: temperature, pH and feed rate, a new sample every second. */
import Highcharts from 'highcharts';
import HighchartsReact from 'highcharts-react-official';
import { useEffect, useMemo, useRef } from 'react';
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

export function LiveProcessChart() {
  const chartRef = useRef<HighchartsReact.RefObject>(null);
  const simulation = useMemo(() => createProcessSimulation(), []);
  const initial = useMemo(() => {
    const samples: ProcessSample[] = [];
    // Start mid-run so the feed is already visible on first paint.
    for (let i = 0; i < 60; i += 1) simulation();
    for (let i = 0; i < VISIBLE_SAMPLES; i += 1) samples.push(simulation());
    return samples;
  }, [simulation]);

  const options = useMemo<Highcharts.Options>(() => ({
    chart: { backgroundColor: 'transparent', height: 340, style: { fontFamily: 'inherit' }, animation: { duration: 600 } },
    title: { text: undefined },
    credits: { enabled: false },
    accessibility: { enabled: false },
    legend: { itemStyle: { color: '#D3D8DE' }, itemHoverStyle: { color: '#FFFFFF' } },
    tooltip: { shared: true, valueDecimals: 2 },
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
      { type: 'spline', name: 'Temperature', color: COLORS.temperature, yAxis: 0, data: initial.map((s) => [s.minute, s.temperature]) },
      { type: 'spline', name: 'pH', color: COLORS.pH, yAxis: 1, data: initial.map((s) => [s.minute, s.pH]) },
      { type: 'spline', name: 'Feed rate', color: COLORS.feedRate, yAxis: 2, data: initial.map((s) => [s.minute, s.feedRate]) },
    ],
  }), [initial]);

  useEffect(() => {
    const timer = window.setInterval(() => {
      const chart = chartRef.current?.chart;
      if (!chart) return;
      const sample = simulation();
      const values = [sample.temperature, sample.pH, sample.feedRate];
      chart.series.forEach((series, index) => {
        // Shift once the window is full; redraw only with the last series.
        series.addPoint([sample.minute, values[index] ?? null], index === chart.series.length - 1, series.data.length >= VISIBLE_SAMPLES);
      });
    }, TICK_MS);
    return () => window.clearInterval(timer);
  }, [simulation]);

  return (
    <div className="app-live-chart" data-testid="live-process-chart" aria-label="Live process chart of temperature, pH and feed rate" role="img">
      <HighchartsReact highcharts={Highcharts} options={options} ref={chartRef} />
    </div>
  );
}

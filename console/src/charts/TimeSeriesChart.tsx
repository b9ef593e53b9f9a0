/**
 * The time-series line chart of the unit-operation detail and compare screens (spec/02 "Chart
 * component behaviour" and §9): x in minutes since the operation's start, one y axis per unit
 * alternating left/right, legend toggling, a shared tooltip that highlights the nearest x across all
 * series, dashed comment lines behind the data with a hover card within 20 px, click-to-comment, and
 * x zooming handed to the parent so it can fetch finer data for the visible range.
 */
import { useCallback, useEffect, useMemo, useRef, useState, type MouseEvent as ReactMouseEvent } from 'react';
import { HighchartsReact, type HighchartsReactRefObject } from 'highcharts-react-official';
import { Button, Card, Colors, NonIdealState, Spinner } from '@blueprintjs/core';
import { Highcharts, highchartsSymbol } from './highcharts-setup.ts';
import {
  CHART_HEIGHT_PX, CHART_MESSAGES, COMMENT_LINE, LINE_WIDTH, POINT_HOVER_RADIUS, POINT_RADIUS, SPAN_GAPS,
  TIME_AXIS_TICK_LIMIT, X_AXIS_MIN, X_AXIS_TITLE,
} from './chart-constants.ts';
import { buildYAxes, yAxisIndexOf, type ChartSeries } from './series-model.ts';
import { formatElapsedHourMinute, formatMinute } from './time-axis.ts';
import { formatCreatedEnGb, nearestCommentWithin, type ChartComment } from './comment-markers.ts';
import './time-series-chart.css';

export interface XRange {
  min: number;
  max: number;
}

export interface TimeSeriesChartProps {
  title: string;
  series: readonly ChartSeries[];
  comments?: readonly ChartComment[];
  loading?: boolean;
  /** Shown in red in place of the chart. */
  error?: string | null;
  height?: number;
  /** Given only to users who may comment: a click in the plot area asks for a comment at that minute. */
  onPlotClick?: (minute: number) => void;
  /** The zoomed x range (minutes), null for the whole operation. */
  xRange?: XRange | null;
  onXRangeChange?: (range: XRange | null) => void;
  /** A finer fetch for the zoomed range is under way. */
  refining?: boolean;
  testId?: string;
}

/** Highcharts' plot-line methods, present at runtime but missing from its type definitions. */
type PlotLineAxis = Highcharts.Axis & {
  addPlotLine(options: Highcharts.AxisPlotLinesOptions): unknown;
  removePlotLine(id: string): void;
};

/** The comment lines each chart axis currently shows, so they can be replaced without touching others. */
const appliedCommentLines = new WeakMap<Highcharts.Axis, { signature: string; ids: string[] }>();

function withOpacity(color: string, opacity: number): string {
  return opacity >= 1 ? color : (Highcharts.color(color).setOpacity(opacity).get('rgba') as string);
}

export function TimeSeriesChart(props: TimeSeriesChartProps) {
  const { title, series, comments = [], loading, error, height = CHART_HEIGHT_PX, onPlotClick, xRange, onXRangeChange, refining, testId } = props;
  const chartRef = useRef<HighchartsReactRefObject>(null);
  const [hovered, setHovered] = useState<{ comment: ChartComment; left: number; top: number } | null>(null);
  // Handlers read the latest props through a ref so the memoised options do not rebuild the chart on every render.
  const handlers = useRef({ onPlotClick, onXRangeChange });
  handlers.current = { onPlotClick, onXRangeChange };

  const hasData = series.some((s) => s.data.length > 0);
  const axes = useMemo(() => buildYAxes(series), [series]);
  const selectedId = hovered?.comment.id ?? null;

  const options = useMemo<Highcharts.Options>(() => ({
    accessibility: { enabled: false },
    credits: { enabled: false },
    title: { text: title, align: 'left', style: { fontSize: '16px', fontWeight: '600', color: Colors.DARK_GRAY1 } },
    chart: {
      height,
      animation: false,
      spacingTop: 12,
      style: { fontFamily: 'inherit' },
      zooming: { type: 'x', resetButton: { theme: { style: { display: 'none' } } } },
      events: {
        click(event) {
          const minute = (event as Highcharts.PointerEventObject & { xAxis?: Array<{ value: number }> }).xAxis?.[0]?.value;
          if (typeof minute === 'number' && handlers.current.onPlotClick) handlers.current.onPlotClick(minute);
        },
        selection(event) {
          const axis = event.xAxis?.[0];
          if (event.resetSelection || !axis) handlers.current.onXRangeChange?.(null);
          else handlers.current.onXRangeChange?.({ min: Math.max(X_AXIS_MIN, axis.min), max: axis.max });
          // The parent owns the zoom: it passes the range back through xRange and fetches finer data.
          return false;
        },
      },
    },
    legend: { enabled: true, align: 'center', verticalAlign: 'top', y: 0, itemStyle: { fontWeight: '500' } },
    tooltip: {
      shared: true,
      valueDecimals: 3,
      headerFormat: '',
      formatter(this: Highcharts.Point) {
        const points = (this as unknown as { points?: Highcharts.Point[] }).points ?? [this];
        const minute = Number(this.x);
        const lines = points.map((p) => `<span style="color:${p.color as string}">●</span> ${p.series.name}: <b>${Highcharts.numberFormat(Number(p.y), 3)}</b>`);
        return [`<b>Minute ${formatMinute(minute)}</b> (${formatElapsedHourMinute(minute)})`, ...lines].join('<br/>');
      },
    },
    xAxis: {
      type: 'linear',
      min: xRange ? xRange.min : X_AXIS_MIN,
      max: xRange ? xRange.max : undefined,
      title: { text: X_AXIS_TITLE },
      tickPixelInterval: 90,
      // Caps the tick count at TIME_AXIS_TICK_LIMIT whatever the width.
      tickPositioner(this: Highcharts.Axis) {
        const positions = (this as unknown as { tickPositions?: number[] }).tickPositions ?? [];
        if (positions.length <= TIME_AXIS_TICK_LIMIT) return positions;
        const step = Math.ceil(positions.length / TIME_AXIS_TICK_LIMIT);
        return positions.filter((_, i) => i % step === 0);
      },
      crosshair: { color: Colors.GRAY4, width: 1 },
    },
    yAxis: axes.map((axis) => ({
      title: { text: axis.title },
      opposite: axis.opposite,
      gridLineColor: Colors.LIGHT_GRAY3,
    })),
    plotOptions: {
      series: {
        animation: false,
        connectNulls: SPAN_GAPS,
        lineWidth: LINE_WIDTH.normal,
        states: { hover: { lineWidth: LINE_WIDTH.highlighted, lineWidthPlus: 0 }, inactive: { opacity: 0.35 } },
        marker: { enabled: true, radius: POINT_RADIUS.normal, states: { hover: { radius: POINT_HOVER_RADIUS.normal } } },
        turboThreshold: 0,
      },
    },
    series: series.map((s) => ({
      type: 'spline' as const,
      id: s.id,
      name: s.name,
      color: withOpacity(s.color, s.opacity),
      yAxis: yAxisIndexOf(axes, s.unit),
      data: s.data.map(([x, y]) => [x, y]),
      marker: { symbol: highchartsSymbol(s.symbol), lineWidth: 1, lineColor: undefined },
      tooltip: { valueSuffix: s.unit ? ` ${s.unit}` : '' },
    })),
  }), [title, height, xRange, axes, series]);

  // Comment lines are managed on the axis directly: chart.update merges plot-line arrays and would
  // keep stale lines, so each render replaces exactly the lines this component added.
  const commentLines = useMemo<Highcharts.AxisPlotLinesOptions[]>(() => comments.map((comment) => ({
    id: `comment-${comment.id}`,
    value: comment.minute,
    color: comment.color ?? COMMENT_LINE.color,
    width: comment.id === selectedId ? COMMENT_LINE.selectedWidth : COMMENT_LINE.width,
    zIndex: COMMENT_LINE.zIndex,
    className: 'bp-chart-comment-line',
  })), [comments, selectedId]);
  useEffect(() => {
    const axis = chartRef.current?.chart?.xAxis?.[0] as PlotLineAxis | undefined;
    if (!axis) return;
    const signature = JSON.stringify(commentLines);
    if (appliedCommentLines.get(axis)?.signature === signature) return;
    for (const id of appliedCommentLines.get(axis)?.ids ?? []) axis.removePlotLine(id);
    for (const line of commentLines) axis.addPlotLine(line);
    appliedCommentLines.set(axis, { signature, ids: commentLines.map((line) => line.id!) });
  });

  const trackComment = useCallback((event: ReactMouseEvent<HTMLDivElement>) => {
    const chart = chartRef.current?.chart;
    if (!chart || comments.length === 0) return;
    const bounds = event.currentTarget.getBoundingClientRect();
    const pointerX = event.clientX - bounds.left;
    const pointerY = event.clientY - bounds.top;
    const xAxis = chart.xAxis[0]!;
    const insidePlot = pointerY >= chart.plotTop && pointerY <= chart.plotTop + chart.plotHeight;
    const nearest = insidePlot
      ? nearestCommentWithin(comments, pointerX, (minute) => {
        if (minute < xAxis.min! || minute > xAxis.max!) return Number.NaN;
        return xAxis.toPixels(minute, false);
      })
      : null;
    setHovered((current) => {
      if (!nearest) return current ? null : current;
      if (current?.comment.id === nearest.id) return current;
      return { comment: nearest, left: xAxis.toPixels(nearest.minute, false), top: chart.plotTop };
    });
  }, [comments]);

  if (loading) {
    return <ChartFrame height={height} testId={testId}><NonIdealState icon={<Spinner size={24} />} description={CHART_MESSAGES.loading} /></ChartFrame>;
  }
  if (error) {
    return <ChartFrame height={height} testId={testId}><div className="bp-chart-error" role="alert" style={{ color: Colors.RED3 }}>{error}</div></ChartFrame>;
  }
  if (!hasData) {
    return <ChartFrame height={height} testId={testId}><NonIdealState icon="timeline-line-chart" description={CHART_MESSAGES.empty} /></ChartFrame>;
  }

  return (
    <div className="bp-chart" data-testid={testId} onMouseMove={trackComment} onMouseLeave={() => setHovered(null)}
      data-plot-clickable={onPlotClick ? 'true' : 'false'}>
      <HighchartsReact highcharts={Highcharts} options={options} ref={chartRef} />
      {xRange && (
        <div className="bp-chart-zoom">
          {refining && <Spinner size={14} />}
          <Button size="small" variant="outlined" icon="zoom-to-fit" text="Reset zoom" onClick={() => onXRangeChange?.(null)} />
        </div>
      )}
      {hovered && (
        <Card className="bp-chart-comment-card" compact elevation={2} role="tooltip" data-testid="chart-comment-tooltip"
          style={{ left: hovered.left + 8, top: hovered.top + 4 }}>
          <div className="bp-chart-comment-text">{hovered.comment.content}</div>
          <div className="bp-chart-comment-meta">
            {hovered.comment.author}
            {hovered.comment.createdAt ? ` · ${formatCreatedEnGb(hovered.comment.createdAt)}` : ''}
            {` · minute ${formatMinute(hovered.comment.minute)}`}
          </div>
        </Card>
      )}
    </div>
  );
}

function ChartFrame({ height, testId, children }: { height: number; testId?: string; children: React.ReactNode }) {
  return <div className="bp-chart bp-chart-placeholder" data-testid={testId} style={{ height }}>{children}</div>;
}

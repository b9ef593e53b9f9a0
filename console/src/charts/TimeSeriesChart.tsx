/**
 * The time-series line chart of the unit-operation detail and compare screens: x in minutes since
 * the operation's start (labelled in hours or days for long operations), one y axis per unit (at most
 * three labelled, the others picked by the user, or one stacked panel per unit of at least 180 px, the
 * page growing with them; a series without a unit has an axis of its own), the console's legend beside
 * the plot (under it on narrow frames, scrolling on its own) toggling series, one
 * shared tooltip listing the readings and, under them, a comment within 20 px of the pointer; comment
 * lines with a short label behind the data, click-to-comment, and x zooming handed to the parent so it
 * can fetch finer data for the visible range.
 */
import { useCallback, useEffect, useMemo, useRef, useState, type MouseEvent as ReactMouseEvent } from 'react';
import { HighchartsReact, type HighchartsReactRefObject } from 'highcharts-react-official';
import { Button, Colors, NonIdealState, SegmentedControl, Spinner } from '@blueprintjs/core';
import { Highcharts } from './highcharts-setup.ts';
import {
  CHART_HEIGHT_PX, CHART_MESSAGES, LINE_WIDTH, MIN_PLOT_HEIGHT_PX, POINT_HOVER_RADIUS, POINT_RADIUS, SHARED_AXIS_COLOR, SPAN_GAPS,
  STACKED_CHROME_PX, TIME_AXIS_TICK_LIMIT, TIME_AXIS_TICK_SPACING_PX,
} from './chart-constants.ts';
import type { ChartSeries, MarkerPoint } from './series-model.ts';
import { MAX_VISIBLE_Y_AXES, planUnitAxes, toggleShownUnit } from './unit-axes.ts';
import { boostOptions, legendPlacement, seriesExtentMinutes, seriesOptions, stackedChartHeight, type LegendPlacement } from './chart-options.ts';
import { ChartLegend } from './ChartLegend.tsx';
import { formatMinute, minuteToEpochMs } from './time-axis.ts';
import { formatTimeHeading, formatTimeTick, timeAxisTitle, timeScaleUnit, timeTicks } from './time-scale.ts';
import { nearestCommentWithin, type ChartComment } from './comment-markers.ts';
import { chartText } from './chart-text.ts';
import { commentLabelRows, commentLabelWidth, commentPlotLine, legendLabel, tooltipHtml } from './time-series-labels.ts';
import { formatDate } from '../dates/date-time-format.ts';
import { useAlertBands, type ChartAlertBand } from './alert-bands.ts';
import './time-series-chart.css';

export interface XRange {
  min: number;
  max: number;
}

export type ChartLayout = 'overlay' | 'stacked';

export interface TimeSeriesChartProps {
  title: string;
  series: readonly ChartSeries[];
  comments?: readonly ChartComment[];
  loading?: boolean;
  /** Shown in red in place of the chart. */
  error?: string | null;
  height?: number;
  /** The wall-clock time of minute 0, shown in the tooltip; absent when series have different starts (compare). */
  startMs?: number | null;
  /** Given only to users who may comment: a click in the plot area asks for a comment at that minute. */
  onPlotClick?: (minute: number) => void;
  /** The zoomed x range (minutes), null for the whole operation. */
  xRange?: XRange | null;
  onXRangeChange?: (range: XRange | null) => void;
  /** A finer fetch for the zoomed range is under way. */
  refining?: boolean;
  testId?: string;
  /** What minute 0 is when it is not the unit operation's start (compare: 'the first "induced" comment'). */
  timeZeroLabel?: string;
  /** False when the page shows one key for several charts (Compare's small multiples). */
  showLegend?: boolean;
  /** The x extent several charts share (small multiples), in place of this chart's own. */
  xExtent?: XRange | null;
  /** False: comment lines without labels (all but the first small multiple); the tooltip still has the text. */
  commentLabels?: boolean;
  /** A small status shown at the chart's top right (the live indicator). */
  badge?: React.ReactNode;
  /** Alert firings shaded where they happened. */
  alertBands?: readonly ChartAlertBand[];
}

const NO_ALERT_BANDS: readonly ChartAlertBand[] = [];

/** Sample markers stand out from the small points of dense on-line series. */
const SAMPLE_MARKER_RADIUS = 5;

/** Highcharts' plot-line methods, present at runtime but missing from its type definitions. */
type PlotLineAxis = Highcharts.Axis & {
  addPlotLine(options: Highcharts.AxisPlotLinesOptions): unknown;
  removePlotLine(id: string): void;
};

/** The comment lines each chart axis currently shows, so they can be replaced without touching others. */
const appliedCommentLines = new WeakMap<Highcharts.Axis, { signature: string; ids: string[] }>();

function toRgba(color: string, opacity: number): string {
  return Highcharts.color(color).setOpacity(opacity).get('rgba') as string;
}

/** The frame's width, followed as it changes, for where the legend goes. */
function useFrameWidth(): [(element: HTMLDivElement | null) => void, number] {
  const [width, setWidth] = useState(() => (typeof window === 'undefined' ? 1024 : window.innerWidth));
  const observer = useRef<ResizeObserver | null>(null);
  const ref = useCallback((element: HTMLDivElement | null) => {
    observer.current?.disconnect();
    if (!element) return;
    setWidth(element.getBoundingClientRect().width);
    observer.current = new ResizeObserver((entries) => setWidth(entries[0]!.contentRect.width));
    observer.current.observe(element);
  }, []);
  return [ref, width];
}

export function TimeSeriesChart(props: TimeSeriesChartProps) {
  const {
    title, series, comments = [], loading, error, height = CHART_HEIGHT_PX, startMs = null, onPlotClick, xRange, onXRangeChange, refining, testId, timeZeroLabel,
    showLegend = true, xExtent = null, commentLabels = true, badge, alertBands = NO_ALERT_BANDS,
  } = props;
  const [frameRef, frameWidth] = useFrameWidth();
  const placement: LegendPlacement = legendPlacement(frameWidth);
  const [hiddenIds, setHiddenIds] = useState<ReadonlySet<string>>(() => new Set());
  const chartRef = useRef<HighchartsReactRefObject>(null);
  const [hoveredId, setHoveredId] = useState<ChartComment['id'] | null>(null);
  const [shownUnits, setShownUnits] = useState<string[] | null>(null);
  const [layout, setLayout] = useState<ChartLayout>('overlay');
  // Handlers and the tooltip read the latest values through refs so the memoised options do not rebuild the chart.
  const handlers = useRef({ onPlotClick, onXRangeChange });
  handlers.current = { onPlotClick, onXRangeChange };
  const hoveredComment = useRef<ChartComment | null>(null);

  const hasData = series.some((s) => s.data.length > 0);
  const axes = useMemo(() => planUnitAxes(series, shownUnits), [series, shownUnits]);
  const stacked = layout === 'stacked' && axes.length > 1;
  const extent = xExtent ?? seriesExtentMinutes(series);
  const span = xRange ? xRange.max - xRange.min : extent.max - extent.min;
  const scale = timeScaleUnit(span);
  const chartHeight = stacked ? stackedChartHeight(axes.length, height) : height;

  const options = useMemo<Highcharts.Options>(() => {
    const panelShare = 100 / axes.length;
    // A fixed 24 px between panels: a share of the height would eat small panels when there are many.
    const panelGap = Math.min(panelShare / 3, (24 / Math.max(1, chartHeight - STACKED_CHROME_PX)) * 100);
    return {
      accessibility: { enabled: false },
      credits: { enabled: false },
      title: { text: chartText(title), align: 'left', style: { fontSize: '16px', fontWeight: '600', color: Colors.DARK_GRAY1 } },
      chart: {
        height: chartHeight,
        animation: false,
        spacingTop: 12,
        style: { fontFamily: 'inherit' },
        zooming: { type: 'x', resetButton: { theme: { style: { display: 'none' } } } },
        events: {
          render(this: Highcharts.Chart) {
            // Axis titles, labels and the title come out of the chart's height; where they would leave a
            // short plot the chart grows instead, so the plot is never squeezed whatever the fonts.
            const shortfall = MIN_PLOT_HEIGHT_PX - this.plotHeight;
            if (!stacked && shortfall > 0) this.setSize(undefined, this.chartHeight + shortfall, false);
          },
          click(event) {
            const minute = (event as Highcharts.PointerEventObject & { xAxis?: Array<{ value: number }> }).xAxis?.[0]?.value;
            if (typeof minute === 'number' && handlers.current.onPlotClick) handlers.current.onPlotClick(minute);
          },
          selection(event) {
            const axis = event.xAxis?.[0];
            if (event.resetSelection || !axis) handlers.current.onXRangeChange?.(null);
            else handlers.current.onXRangeChange?.({ min: Math.max(extent.min, axis.min), max: axis.max });
            // The parent owns the zoom: it passes the range back through xRange and fetches finer data.
            return false;
          },
        },
      },
      boost: boostOptions(series),
      // The legend on screen is ChartLegend beside the plot; a downloaded image carries Highcharts' own.
      legend: {
        enabled: false, align: 'center', verticalAlign: 'bottom', itemStyle: { fontWeight: '500' },
        labelFormatter(this: Highcharts.Series | Highcharts.Point) {
          const detail = (this as Highcharts.Series).userOptions && ((this as Highcharts.Series).userOptions as { custom?: { detail?: string } }).custom?.detail;
          return legendLabel(String(this.name), detail);
        },
      },
      exporting: {
        // Files are made in the browser: the public export server is not reachable from a plant network.
        fallbackToExportServer: false,
        chartOptions: { legend: { enabled: true } },
        buttons: { contextButton: { menuItems: ['downloadPNG', 'downloadSVG', 'downloadCSV'] } },
      },
      tooltip: {
        shared: true,
        useHTML: true,
        headerFormat: '',
        formatter(this: Highcharts.Point) {
          const points = (this as unknown as { points?: Highcharts.Point[] }).points ?? [this];
          const minute = Number(this.x);
          const comment = hoveredComment.current;
          return tooltipHtml({
            heading: formatTimeHeading(minute, scale),
            clock: startMs === null ? null : formatDate(minuteToEpochMs(minute, startMs), 'dateTimeSeconds'),
            readings: points.map((p) => {
              const marker = (p.options as { custom?: MarkerPoint }).custom;
              return {
                color: String(p.color),
                name: marker ? `${p.series.name} (${marker.label})` : p.series.name,
                value: marker ? marker.value : Highcharts.numberFormat(Number(p.y), 3),
                unit: (p.series.userOptions as { custom?: { unit?: string | null } }).custom?.unit,
              };
            }),
            comment: comment && {
              content: comment.content, author: comment.author, color: comment.color,
              date: comment.timestamp ? formatDate(comment.timestamp) : null, minute: formatMinute(comment.minute),
            },
          });
        },
      },
      xAxis: {
        type: 'linear',
        min: xRange ? xRange.min : extent.min,
        max: xRange ? xRange.max : xExtent ? xExtent.max : undefined,
        title: { text: chartText(timeAxisTitle(scale, timeZeroLabel)) },
        tickPositioner(this: Highcharts.Axis) {
          const { min, max } = this.getExtremes();
          const fitting = Math.floor(this.len / TIME_AXIS_TICK_SPACING_PX);
          return timeTicks(min, max, scale, Math.max(2, Math.min(TIME_AXIS_TICK_LIMIT, fitting)));
        },
        labels: {
          formatter(this: Highcharts.AxisLabelsFormatterContextObject) {
            return formatTimeTick(Number(this.value), scale);
          },
        },
        crosshair: { color: Colors.GRAY4, width: 1 },
      },
      yAxis: axes.map((axis, index) => {
        const color = axis.color ?? SHARED_AXIS_COLOR;
        return {
          title: { text: chartText(axis.title), style: { color } },
          labels: { style: { color } },
          lineColor: color,
          lineWidth: 1,
          minRange: axis.minRange,
          gridLineColor: Colors.LIGHT_GRAY3,
          ...(stacked
            ? { visible: true, opposite: false, top: `${index * panelShare}%`, height: `${panelShare - panelGap}%`, offset: 0 }
            : { visible: axis.visible, opposite: axis.opposite }),
        };
      }),
      plotOptions: {
        series: {
          animation: false,
          connectNulls: SPAN_GAPS,
          lineWidth: LINE_WIDTH.normal,
          states: { hover: { lineWidth: LINE_WIDTH.highlighted, lineWidthPlus: 0 }, inactive: { opacity: 0.35 } },
          // Markers only where points stand apart: on dense series they would hide the dash styles.
          marker: { enabledThreshold: 4, radius: POINT_RADIUS.normal, states: { hover: { radius: POINT_HOVER_RADIUS.normal } } },
          turboThreshold: 0,
        },
      },
      series: series.map((s) => seriesOptions(s, { axes, hiddenIds, toRgba, sampleMarkerRadius: SAMPLE_MARKER_RADIUS })),
    };
  }, [title, chartHeight, xRange, xExtent, axes, series, hiddenIds, stacked, scale, startMs, extent.min, timeZeroLabel]);

  useAlertBands(chartRef, alertBands);

  // Comment lines are managed on the axis directly: chart.update merges plot-line arrays and would
  // keep stale lines, so each render replaces exactly the lines this component added.
  // Label rows come from where the lines fall in pixels, so they are placed once the chart is drawn.
  useEffect(() => {
    const axis = chartRef.current?.chart?.xAxis?.[0] as PlotLineAxis | undefined;
    if (!axis) return;
    const rows = commentLabels
      ? commentLabelRows(comments.map((comment) => ({
        x: comment.minute < axis.min! || comment.minute > axis.max! ? Number.NaN : axis.toPixels(comment.minute, false),
        width: commentLabelWidth(comment.content),
      })))
      : comments.map(() => null);
    const commentLines = comments.map((comment, index) => commentPlotLine(comment, rows[index] ?? null, comment.id === hoveredId));
    const signature = JSON.stringify(commentLines);
    if (appliedCommentLines.get(axis)?.signature === signature) return;
    // Also the ids about to be added: a chart made anew (axes or layout changed) may have taken the
    // lines from the options Highcharts recorded them in, and would draw each twice.
    const stale = new Set([...(appliedCommentLines.get(axis)?.ids ?? []), ...commentLines.map((line) => line.id!)]);
    for (const id of stale) axis.removePlotLine(id);
    for (const line of commentLines) axis.addPlotLine(line);
    appliedCommentLines.set(axis, { signature, ids: commentLines.map((line) => line.id!) });
  });

  // Runs in the capture phase, before Highcharts handles the same move, so the tooltip it draws
  // already knows which comment the pointer is near.
  const trackComment = useCallback((event: ReactMouseEvent<HTMLDivElement>) => {
    const chart = chartRef.current?.chart;
    if (!chart || comments.length === 0) return;
    // Measured from Highcharts' own container: the toolbar above it shifts the plot down.
    const bounds = chart.container.getBoundingClientRect();
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
    if (hoveredComment.current?.id === nearest?.id) return;
    hoveredComment.current = nearest;
    setHoveredId(nearest?.id ?? null);
    // The points under the pointer may not change while it nears a comment: redraw the tooltip anyway.
    const hoverPoints = (chart as unknown as { hoverPoints?: Highcharts.Point[] }).hoverPoints;
    if (hoverPoints?.length) chart.tooltip.refresh(hoverPoints);
  }, [comments]);

  // Pointing at a legend entry brings its series forward and dims the others, as Highcharts' own legend does.
  const highlightSeries = useCallback((seriesId: string | null) => {
    const chart = chartRef.current?.chart;
    if (!chart) return;
    for (const drawn of chart.series) {
      drawn.setState(seriesId === null ? '' : drawn.options.id === seriesId ? 'hover' : 'inactive', true);
    }
  }, []);

  if (loading) {
    return <ChartFrame height={height} testId={testId}><NonIdealState icon={<Spinner size={24} />} description={CHART_MESSAGES.loading} /></ChartFrame>;
  }
  if (error) {
    return <ChartFrame height={height} testId={testId}><div className="bp-chart-error" role="alert" style={{ color: Colors.RED3 }}>{error}</div></ChartFrame>;
  }
  if (!hasData) {
    return <ChartFrame height={height} testId={testId}><NonIdealState icon="timeline-line-chart" description={CHART_MESSAGES.empty} /></ChartFrame>;
  }

  const visibleUnits = axes.filter((axis) => axis.visible).map((axis) => axis.unit);
  return (
    <div className="bp-chart" data-testid={testId} onMouseMoveCapture={trackComment}
      onMouseLeave={() => { hoveredComment.current = null; setHoveredId(null); }}
      data-plot-clickable={onPlotClick ? 'true' : 'false'} data-layout={stacked ? 'stacked' : 'overlay'} ref={frameRef}>
      {axes.length > 1 && (
        <div className="bp-chart-toolbar">
          <SegmentedControl size="small" value={layout} onValueChange={(value) => setLayout(value as ChartLayout)}
            options={[{ label: 'One plot', value: 'overlay' }, { label: 'Panel per unit', value: 'stacked' }]} />
          {!stacked && axes.length > MAX_VISIBLE_Y_AXES && (
            <div className="bp-chart-axis-picker" role="group" aria-label={`Y axes shown (at most ${MAX_VISIBLE_Y_AXES})`}>
              <span className="bp-chart-axis-picker-label">Axes:</span>
              {axes.map((axis) => (
                <Button key={axis.unit} size="small" variant={axis.visible ? 'solid' : 'outlined'} aria-pressed={axis.visible}
                  intent={axis.visible ? 'primary' : 'none'} text={axis.title}
                  onClick={() => setShownUnits(toggleShownUnit(shownUnits ?? visibleUnits, axis.unit))} />
              ))}
            </div>
          )}
        </div>
      )}
      {/* A new chart when the shown axes or the layout change: Highcharts' update leaves a hidden axis drawn. */}
      <div className="bp-chart-body" data-legend={showLegend ? placement : 'none'}
        style={{ ['--bp-chart-legend-max-height' as string]: `${chartHeight}px` }}>
        <div className="bp-chart-plot">
          <HighchartsReact key={`${layout}:${visibleUnits.join('|')}`} highcharts={Highcharts} options={options} ref={chartRef} />
        </div>
        {showLegend && (
          <ChartLegend series={series} hiddenIds={hiddenIds} placement={placement} onHover={highlightSeries}
            onToggle={(id) => setHiddenIds((current) => {
              const next = new Set(current);
              if (!next.delete(id)) next.add(id);
              return next;
            })} />
        )}
      </div>
      {(xRange || badge) && (
        <div className="bp-chart-zoom">
          {badge}
          {xRange && refining && <Spinner size={14} />}
          {xRange && <Button size="small" variant="outlined" icon="zoom-to-fit" text="Reset zoom" onClick={() => onXRangeChange?.(null)} />}
        </div>
      )}
    </div>
  );
}

function ChartFrame({ height, testId, children }: { height: number; testId?: string; children: React.ReactNode }) {
  return <div className="bp-chart bp-chart-placeholder" data-testid={testId} style={{ height }}>{children}</div>;
}

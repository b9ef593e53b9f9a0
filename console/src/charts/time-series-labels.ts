/**
 * The markup the time-series chart hands Highcharts for its legend, tooltip and comment lines, built
 * from names, units and comments that users typed: each of them goes in through chartText, so it is
 * shown as typed and never becomes an element.
 */
import { Colors } from '@blueprintjs/core';
import type Highcharts from 'highcharts';
import { COMMENT_LINE } from './chart-constants.ts';
import { chartColor, chartText } from './chart-text.ts';
import type { ChartComment } from './comment-markers.ts';

/** The first words of a comment for the label beside its line. */
export function shortCommentLabel(content: string, length: number = COMMENT_LINE.labelLength): string {
  const text = content.replace(/\s+/g, ' ').trim();
  return text.length <= length ? text : `${text.slice(0, length - 1).trimEnd()}…`;
}

/** A series in the legend: its name, then its type and unit in grey. */
export function legendLabel(name: string, detail: string | null | undefined): string {
  return detail ? `${chartText(name)} <span style="color:${Colors.GRAY1};font-weight:400">${chartText(detail)}</span>` : chartText(name);
}

export interface TooltipReading {
  /** The series' colour as Highcharts drew it (the console's palette, maybe with opacity). */
  color: string;
  name: string;
  value: string;
  unit: string | null | undefined;
}

export interface TooltipContent {
  heading: string;
  /** The wall-clock time of the pointer, when the chart has one start. */
  clock: string | null;
  readings: readonly TooltipReading[];
  /** The comment within reach of the pointer, with its date already formatted. */
  comment: (Pick<ChartComment, 'content' | 'author' | 'color'> & { date: string | null; minute: string }) | null;
}

/** The shared tooltip (HTML): the time, one row per reading, and the comment near the pointer. */
export function tooltipHtml(content: TooltipContent): string {
  const clock = content.clock === null ? '' : `<div class="bp-chart-tooltip-time">${chartText(content.clock)}</div>`;
  const rows = content.readings.map((reading) => {
    const unit = reading.unit ? ` ${chartText(reading.unit)}` : '';
    return `<div><span style="color:${chartText(reading.color)}">●</span> ${chartText(reading.name)}: <b>${chartText(reading.value)}</b>${unit}</div>`;
  });
  const comment = content.comment;
  const note = comment
    ? `<div class="bp-chart-tooltip-comment" data-testid="chart-comment-tooltip" style="border-color:${chartColor(comment.color, COMMENT_LINE.color)}">`
      + `<div class="bp-chart-comment-text">${chartText(comment.content)}</div>`
      + `<div class="bp-chart-comment-meta">${chartText(comment.author)}`
      + `${comment.date ? ` · ${chartText(comment.date)}` : ''} · minute ${chartText(comment.minute)}</div></div>`
    : '';
  return `<div class="bp-chart-tooltip"><b>${chartText(content.heading)}</b>${clock}${rows.join('')}${note}</div>`;
}

/** Rows of comment labels at the top of a plot, and the pixels a label's character takes (11 px text). */
export const COMMENT_LABEL_ROWS = 3;
const LABEL_CHAR_PX = 6.2;
const LABEL_PADDING_PX = 10;
const LABEL_ROW_HEIGHT_PX = 14;

/** The width a comment's short label takes beside its line. */
export function commentLabelWidth(content: string): number {
  return shortCommentLabel(content).length * LABEL_CHAR_PX + LABEL_PADDING_PX;
}

/**
 * The row of each comment's label (in the order given), or null when it is left out: labels go left
 * to right into the first row where they clear the label before them, and one that fits in no row is
 * not drawn. Its line stays, and the tooltip near the line carries the whole comment.
 */
export function commentLabelRows(labels: ReadonlyArray<{ x: number; width: number }>, rows: number = COMMENT_LABEL_ROWS): Array<number | null> {
  const rowEnds: number[] = Array.from({ length: rows }, () => Number.NEGATIVE_INFINITY);
  const placed: Array<number | null> = labels.map(() => null);
  const order = labels.map((label, index) => ({ ...label, index })).sort((a, b) => a.x - b.x);
  for (const label of order) {
    if (!Number.isFinite(label.x)) continue;
    const row = rowEnds.findIndex((end) => end <= label.x);
    if (row < 0) continue;
    placed[label.index] = row;
    rowEnds[row] = label.x + label.width;
  }
  return placed;
}

/** A comment's dashed line with a short label in its row (`commentLabelRows`), or no label when null. */
export function commentPlotLine(comment: ChartComment, row: number | null, hovered: boolean): Highcharts.AxisPlotLinesOptions {
  const color = chartColor(comment.color, COMMENT_LINE.color);
  // className on a plot-line label works but is missing from Highcharts' types, hence no literal here.
  const label = {
    text: row === null ? '' : chartText(shortCommentLabel(comment.content)), rotation: 0, align: 'left' as const, x: 4,
    y: 12 + (row ?? 0) * LABEL_ROW_HEIGHT_PX,
    style: { color, fontSize: '11px', fontWeight: '500' }, className: 'bp-chart-comment-label',
  };
  return {
    id: `comment-${comment.id}`,
    value: comment.minute,
    color,
    width: hovered ? COMMENT_LINE.selectedWidth : COMMENT_LINE.width,
    zIndex: COMMENT_LINE.zIndex,
    className: 'bp-chart-comment-line',
    label,
  };
}

/** Comment markers on a chart: which one the pointer is on (spec/02 §9: within 20 px). */
import { COMMENT_HOVER_RADIUS_PX } from './chart-constants.ts';

export interface ChartComment {
  id: number | string;
  /** Position on the x axis, minutes since the operation's start. */
  minute: number;
  content: string;
  author: string;
  createdAt?: string | null;
  /** Optional marker colour (the compare chart uses the run's colour). */
  color?: string | null;
}

/**
 * The marker nearest to the pointer's x pixel if it is within `radiusPx`, else null. `toPixel` maps a
 * minute to the chart's pixel space.
 */
export function nearestCommentWithin<T extends Pick<ChartComment, 'minute'>>(
  comments: readonly T[],
  pointerX: number,
  toPixel: (minute: number) => number,
  radiusPx: number = COMMENT_HOVER_RADIUS_PX,
): T | null {
  let best: T | null = null;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const comment of comments) {
    const px = toPixel(comment.minute);
    if (!Number.isFinite(px)) continue;
    const distance = Math.abs(px - pointerX);
    if (distance <= radiusPx && distance < bestDistance) {
      best = comment;
      bestDistance = distance;
    }
  }
  return best;
}

/** Created date and time as en-GB shows them ('22/11/2026, 07:15'). */
export function formatCreatedEnGb(value: string | null | undefined): string {
  if (!value) return '';
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return '';
  return date.toLocaleString('en-GB', { day: '2-digit', month: '2-digit', year: 'numeric', hour: '2-digit', minute: '2-digit' });
}

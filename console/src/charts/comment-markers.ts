/** Comment markers on a chart: which one the pointer is on (within 20 px). */
import { COMMENT_HOVER_RADIUS_PX } from './chart-constants.ts';

export interface ChartComment {
  id: number | string;
  /** Position on the x axis, minutes since the operation's start. */
  minute: number;
  content: string;
  author: string;
  /** The time the comment is about (its place on the chart), shown in the tooltip as in the comment list. */
  timestamp?: string | null;
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

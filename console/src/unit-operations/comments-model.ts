/**
 * Comments as the unit-operation screens show them: the minute on the chart, the
 * author with its 'User {id}' fallback, the dd-mm-yyyy hh:mm date, sorting by minute, the search box,
 * and the timestamp/minutes pair of the create and edit dialogs.
 */
import { formatDate } from '../dates/date-time-format.ts';
import { COMMENT_MESSAGES } from '@bioprocess/shared/entities';
import { commentMinute, fromDateTimeLocalValue, minuteToEpochMs, toDateTimeLocalValue, toEpochMs } from '../charts/time-axis.ts';
import { MINUTE_MS } from '../charts/chart-constants.ts';

/** A comment as the api answers it, camel-cased. */
export interface ApiComment {
  id: number;
  unitOperationsId: number;
  runId?: number;
  unitOperationStartTime?: string | null;
  timestamp: string;
  content: string;
  author: number | null;
  authorName: string | null;
  color?: string | null;
  createdAt: string;
  updatedAt?: string;
}

export interface CommentView {
  id: number;
  unitOperationId: number;
  runId: number | null;
  timestamp: string;
  minute: number;
  content: string;
  author: string;
  createdAt: string;
  color: string | null;
}

export function authorLabel(comment: Pick<ApiComment, 'author' | 'authorName'>): string {
  if (comment.authorName && comment.authorName.trim()) return comment.authorName;
  return `User ${comment.author ?? 'unknown'}`;
}

/** The console's date and time in the browser's time zone; '' for an unreadable value. */
export function formatCommentDate(value: string | number | null | undefined): string {
  const ms = toEpochMs(value ?? null);
  if (Number.isNaN(ms)) return '';
  return formatDate(ms);
}

/** A comment placed on the axis of an operation that started at `startMs` (null: the operation has no start). */
export function toCommentView(comment: ApiComment, startMs: number | null): CommentView {
  const start = startMs ?? toEpochMs(comment.unitOperationStartTime ?? null);
  return {
    id: comment.id,
    unitOperationId: comment.unitOperationsId,
    runId: comment.runId ?? null,
    timestamp: comment.timestamp,
    minute: commentMinute(comment.timestamp, Number.isNaN(start) ? null : start),
    content: comment.content,
    author: authorLabel(comment),
    createdAt: comment.createdAt,
    color: comment.color ?? null,
  };
}

export function sortByMinute<T extends { minute: number; id: number | string }>(comments: readonly T[]): T[] {
  return [...comments].sort((a, b) => a.minute - b.minute || String(a.id).localeCompare(String(b.id), undefined, { numeric: true }));
}

/** The search box: a case-insensitive match on the text or the author. */
export function searchComments<T extends Pick<CommentView, 'content' | 'author'>>(comments: readonly T[], query: string): T[] {
  const needle = query.trim().toLowerCase();
  if (!needle) return [...comments];
  return comments.filter((c) => c.content.toLowerCase().includes(needle) || c.author.toLowerCase().includes(needle));
}

/** The comment text rule: required once trimmed. Returns the message or null. */
export function commentContentError(content: string): string | null {
  return content.trim() === '' ? COMMENT_MESSAGES.contentRequired : null;
}

/** The dialog's two linked fields: a datetime-local value and minutes since the start. */
export interface CommentTimeFields {
  timestamp: string;
  minutes: string;
}

export function fieldsFromMinute(minute: number, startMs: number): CommentTimeFields {
  const rounded = Math.round(minute * 100) / 100;
  return { timestamp: toDateTimeLocalValue(minuteToEpochMs(rounded, startMs)), minutes: String(rounded) };
}

export function fieldsFromTimestampInput(timestamp: string, startMs: number): CommentTimeFields {
  const ms = fromDateTimeLocalValue(timestamp);
  if (Number.isNaN(ms)) return { timestamp, minutes: '' };
  return { timestamp, minutes: String(Math.round(((ms - startMs) / MINUTE_MS) * 100) / 100) };
}

export function fieldsFromMinutesInput(minutes: string, startMs: number): CommentTimeFields {
  const value = Number(minutes);
  if (minutes.trim() === '' || !Number.isFinite(value)) return { timestamp: '', minutes };
  return { timestamp: toDateTimeLocalValue(minuteToEpochMs(value, startMs)), minutes };
}

/**
 * The ISO timestamp to send for the dialog's fields: the minutes when given (they are exact, the
 * datetime-local field only has minute precision), else the timestamp; null when neither reads.
 */
export function isoFromFields(fields: CommentTimeFields, startMs: number): string | null {
  const minutes = Number(fields.minutes);
  if (fields.minutes.trim() !== '' && Number.isFinite(minutes)) return new Date(minuteToEpochMs(minutes, startMs)).toISOString();
  const ms = fromDateTimeLocalValue(fields.timestamp);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

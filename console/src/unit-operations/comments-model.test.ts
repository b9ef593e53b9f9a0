import { describe, expect, it } from 'vitest';
import {
  authorLabel, commentContentError, fieldsFromMinute, fieldsFromMinutesInput, fieldsFromTimestampInput, formatCommentDate, isoFromFields,
  searchComments, sortByMinute, toCommentView, type ApiComment,
} from './comments-model.ts';
import { chartSpan } from './use-instruments-with-data.ts';

const start = new Date(2025, 1, 26, 10, 0).getTime();

function comment(overrides: Partial<ApiComment>): ApiComment {
  return {
    id: 1, unitOperationsId: 7, runId: 3, timestamp: new Date(start + 30 * 60_000).toISOString(), content: 'Feed started',
    author: 5, authorName: 'Ada Lovelace', createdAt: new Date(start).toISOString(), ...overrides,
  };
}

describe('comments', () => {
  it('places a comment at its minute since the operation start', () => {
    expect(toCommentView(comment({}), start).minute).toBe(30);
  });

  it('falls back to the comment\'s unit-operation start when the caller has none', () => {
    const view = toCommentView(comment({ unitOperationStartTime: new Date(start - 60 * 60_000).toISOString() }), null);
    expect(view.minute).toBe(90);
  });

  it('shows the author name, else User {id}', () => {
    expect(authorLabel({ author: 5, authorName: 'Ada' })).toBe('Ada');
    expect(authorLabel({ author: 5, authorName: null })).toBe('User 5');
    expect(authorLabel({ author: null, authorName: '  ' })).toBe('User unknown');
  });

  it('formats dates as dd-mm-yyyy hh:mm', () => {
    expect(formatCommentDate(new Date(2025, 1, 6, 9, 5).toISOString())).toBe('2025-02-06 09:05');
    expect(formatCommentDate('nope')).toBe('');
  });

  it('sorts by minute and searches text and author case-insensitively', () => {
    const views = [
      toCommentView(comment({ id: 1, timestamp: new Date(start + 50 * 60_000).toISOString(), content: 'pH drift' }), start),
      toCommentView(comment({ id: 2, timestamp: new Date(start + 5 * 60_000).toISOString(), content: 'Inoculation', authorName: 'Grace' }), start),
    ];
    expect(sortByMinute(views).map((v) => v.id)).toEqual([2, 1]);
    expect(searchComments(views, 'PH').map((v) => v.id)).toEqual([1]);
    expect(searchComments(views, 'grace').map((v) => v.id)).toEqual([2]);
    expect(searchComments(views, '  ')).toHaveLength(2);
  });

  it('requires a non-blank comment', () => {
    expect(commentContentError('   ')).toBe('Comment is required');
    expect(commentContentError('ok')).toBeNull();
  });

  it('keeps timestamp and minutes in sync', () => {
    expect(fieldsFromMinute(90, start)).toEqual({ timestamp: '2025-02-26T11:30', minutes: '90' });
    expect(fieldsFromTimestampInput('2025-02-26T10:45', start)).toEqual({ timestamp: '2025-02-26T10:45', minutes: '45' });
    expect(fieldsFromMinutesInput('120', start)).toEqual({ timestamp: '2025-02-26T12:00', minutes: '120' });
    expect(fieldsFromMinutesInput('', start)).toEqual({ timestamp: '', minutes: '' });
  });

  it('sends the exact minute as an ISO timestamp, else the datetime-local value', () => {
    expect(isoFromFields({ timestamp: '2025-02-26T10:45', minutes: '12.5' }, start)).toBe(new Date(start + 12.5 * 60_000).toISOString());
    expect(isoFromFields({ timestamp: '2025-02-26T10:45', minutes: '' }, start)).toBe(new Date(start + 45 * 60_000).toISOString());
    expect(isoFromFields({ timestamp: '', minutes: 'x' }, start)).toBeNull();
  });

  it("draws an open unit operation over its data, never before its start, and a closed one over its window", () => {
    const hour = 3_600_000;
    const open = { startMs: start, endMs: null };
    expect(chartSpan(open, { earliestMs: start - hour, latestMs: start + 15 * hour, loading: false }, start + 9_000 * hour))
      .toEqual({ startMs: start, endMs: start + 15 * hour });
    expect(chartSpan(open, { earliestMs: null, latestMs: null, loading: true }, start + hour)).toBeNull();
    expect(chartSpan(open, { earliestMs: null, latestMs: null, loading: false }, start + hour)).toEqual({ startMs: start, endMs: start + hour });
    expect(chartSpan({ startMs: start, endMs: start + 2 * hour }, { earliestMs: null, latestMs: null, loading: true }, 0))
      .toEqual({ startMs: start, endMs: start + 2 * hour });
  });
});

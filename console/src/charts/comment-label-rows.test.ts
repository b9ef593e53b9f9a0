import { describe, expect, it } from 'vitest';
import { commentLabelRows, commentLabelWidth, commentPlotLine } from './time-series-labels.ts';

describe('comment labels', () => {
  it('staggers close labels into rows and leaves out the ones no row can take', () => {
    const labels = [0, 10, 20, 30, 400].map((x) => ({ x, width: 100 }));
    expect(commentLabelRows(labels, 3)).toEqual([0, 1, 2, null, 0]);
  });

  it('places labels by position, whatever order the comments come in', () => {
    expect(commentLabelRows([{ x: 300, width: 50 }, { x: 0, width: 50 }, { x: 30, width: 50 }], 2)).toEqual([0, 0, 1]);
  });

  it('skips comments outside the visible range', () => {
    expect(commentLabelRows([{ x: Number.NaN, width: 50 }, { x: 10, width: 50 }], 1)).toEqual([null, 0]);
  });

  it('keeps the line of a comment without a label', () => {
    const line = commentPlotLine({ id: 3, minute: 12, content: 'Induced with IPTG', author: 'Ann' }, null, false);
    expect(line.value).toBe(12);
    expect(line.label?.text).toBe('');
    expect(commentLabelWidth('a'.repeat(40))).toBe(commentLabelWidth('b'.repeat(60)));
  });
});

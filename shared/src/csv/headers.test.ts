import { describe, expect, it } from 'vitest';
import { sanitizeHeader, sanitizeHeaders } from './headers.ts';

describe('headers', () => {
  it('strips <>"\'& and cuts to 100 characters', () => {
    expect(sanitizeHeader('<b>"pH" & \'DO\'</b>')).toBe('bpH  DO/b');
    expect(sanitizeHeader('x'.repeat(150))).toHaveLength(100);
    expect(sanitizeHeader('  Unit 1.T1.PV [°C] ')).toBe('Unit 1.T1.PV [°C]');
  });

  it('names empty headers by position and makes duplicates unique', () => {
    expect(sanitizeHeaders(['time', '', 'pH', 'PH', 'pH', '<>'])).toEqual([
      'time',
      'Column 2',
      'pH',
      'PH (2)',
      'pH (3)',
      'Column 6',
    ]);
  });

  it('keeps de-duplicated long names within 100 characters', () => {
    const long = 'y'.repeat(120);
    const [first, second] = sanitizeHeaders([long, long]);
    expect(first).toHaveLength(100);
    expect(second).toHaveLength(100);
    expect(second!.endsWith(' (2)')).toBe(true);
  });
});

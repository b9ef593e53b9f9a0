import { describe, expect, it } from 'vitest';
import { parseCsvPreview, truncatePreviewCell } from './preview.ts';

describe('parseCsvPreview', () => {
  it('returns sanitised headers and 10 rows fitted to the header width', () => {
    const lines = ['time,<pH>,pH,', ...Array.from({ length: 30 }, (_, i) => `${i},7.${i},x`)];
    lines.push('99,1,2,3,4');
    const preview = parseCsvPreview(lines.join('\n'))!;
    expect(preview.delimiter).toBe(',');
    expect(preview.section).toBeNull();
    expect(preview.rawHeaders).toEqual(['time', '<pH>', 'pH', '']);
    expect(preview.headers).toEqual(['time', 'pH', 'pH (2)', 'Column 4']);
    expect(preview.rows).toHaveLength(10);
    expect(preview.rows[0]).toEqual(['0', '7.0', 'x', '']);
    expect(preview.rowsParsed).toBe(31);
  });

  it('ignores the cut last record of a partial text and honours maxRows', () => {
    const preview = parseCsvPreview('a;b\r\n1;2\r\n3;4\r\n5;', { partial: true, maxRows: 5 })!;
    expect(preview.delimiter).toBe(';');
    expect(preview.rows).toEqual([
      ['1', '2'],
      ['3', '4'],
    ]);
    expect(parseCsvPreview('a,b\n1,2\n3,4', { maxRows: 1 })!.rows).toEqual([['1', '2']]);
  });

  it('reads a header-only partial text and refuses a text without header', () => {
    expect(parseCsvPreview('time,value', { partial: true })!.headers).toEqual(['time', 'value']);
    expect(parseCsvPreview('')).toBeNull();
    expect(parseCsvPreview('\n\n;;\n')).toBeNull();
  });

  it('previews the data table of a multi-section file', () => {
    const text = '"[Info]"\r\n"Product";"Version"\r\n"[TrackData1]"\r\n"Timestamp";"Duration"\r\n2020-07-14 09:55:33;0\r\n\r\n"[Events]"\r\n"No";"Text"\r\n1;"x"';
    const preview = parseCsvPreview(text, { partial: true })!;
    expect(preview.section).toBe('TrackData1');
    expect(preview.headers).toEqual(['Timestamp', 'Duration']);
    expect(preview.rows).toEqual([['2020-07-14 09:55:33', '0']]);
  });

  it('cuts cells at 10 characters plus an ellipsis', () => {
    expect(truncatePreviewCell('2021-09-30T15:24:29.000Z')).toBe('2021-09-30...');
    expect(truncatePreviewCell('74.3')).toBe('74.3');
    expect(truncatePreviewCell('0123456789')).toBe('0123456789');
  });
});

import { describe, expect, it } from 'vitest';
import { csvCell, csvRow } from './write.ts';

describe('csv cells', () => {
  it('neutralises text cells that a spreadsheet would run as a formula', () => {
    expect(csvCell("=cmd|' /C calc'!A0")).toBe("'=cmd|' /C calc'!A0");
    expect(csvCell('+1+1')).toBe("'+1+1");
    expect(csvCell('-2+3')).toBe("'-2+3");
    expect(csvCell('@SUM(A1)')).toBe("'@SUM(A1)");
    expect(csvCell('\t=1')).toBe("'\t=1");
    expect(csvCell('\r=1')).toBe(`"'\r=1"`);
    expect(csvCell('=HYPERLINK("http://x","y")')).toBe(`"'=HYPERLINK(""http://x"",""y"")"`);
  });

  it('writes numbers as numbers, negative ones included', () => {
    expect(csvCell(-1.5)).toBe('-1.5');
    expect(csvCell(-0)).toBe('0');
    expect(csvCell(12n)).toBe('12');
    expect(csvCell(Number.NaN)).toBe('');
  });

  it('quotes commas, quotes and line breaks, and leaves ordinary text alone', () => {
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('line\nbreak')).toBe('"line\nbreak"');
    expect(csvCell('user@example.test')).toBe('user@example.test');
    expect(csvCell('a-b')).toBe('a-b');
    expect(csvCell(null)).toBe('');
    expect(csvCell(new Date(Date.UTC(2024, 0, 2)))).toBe('2024-01-02T00:00:00.000Z');
    expect(csvCell({ after: { reason: '=1' } })).toBe('"{""after"":{""reason"":""=1""}}"');
    expect(csvRow(['id', 1, true, null])).toBe('id,1,true,\r\n');
  });
});

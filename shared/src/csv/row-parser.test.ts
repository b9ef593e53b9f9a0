import { describe, expect, it } from 'vitest';
import { CsvRowParser, parseCsvRows } from './row-parser.ts';
import { fitRowToWidth } from './row-shape.ts';

function parseInChunks(text: string, chunkSize: number, delimiter: ',' | ';' = ','): string[][] {
  const parser = new CsvRowParser({ delimiter });
  const rows: string[][] = [];
  for (let offset = 0; offset < text.length; offset += chunkSize) rows.push(...parser.push(text.slice(offset, offset + chunkSize)));
  rows.push(...parser.end());
  return rows;
}

/** Deterministic pseudo-random numbers so the generated CSV is the same on every run. */
function seededRandom(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return state / 0x7fffffff;
  };
}

describe('CsvRowParser', () => {
  it('parses plain lines with LF and CRLF, skipping empty lines', () => {
    expect(parseCsvRows('a,b\n1,2\r\n\n3,4\r\n', ',')).toEqual([
      ['a', 'b'],
      ['1', '2'],
      ['3', '4'],
    ]);
  });

  it('returns the last line even without a trailing newline', () => {
    expect(parseCsvRows('a;b\n1;2', ';')).toEqual([
      ['a', 'b'],
      ['1', '2'],
    ]);
  });

  it('reads quoted fields, escaped quotes, empty quoted values and delimiters or newlines inside quotes', () => {
    const text = '"time","value","note"\r\n"2021-09-30T15:24:29.000Z","74.3","a, ""b"""\n"","","line1\nline2"\n';
    expect(parseCsvRows(text, ',')).toEqual([
      ['time', 'value', 'note'],
      ['2021-09-30T15:24:29.000Z', '74.3', 'a, "b"'],
      ['', '', 'line1\nline2'],
    ]);
  });

  it('keeps a quote that does not open a field as a literal character', () => {
    expect(parseCsvRows('size,x\n5" tube,1\n"a"b,2', ',')).toEqual([
      ['size', 'x'],
      ['5" tube', '1'],
      ['ab', '2'],
    ]);
  });

  it('keeps empty fields and a trailing delimiter', () => {
    expect(parseCsvRows('a;;c;\n;"";;', ';')).toEqual([
      ['a', '', 'c', ''],
      ['', '', '', ''],
    ]);
  });

  it('handles quotes, CRLF and escapes split across every chunk boundary', () => {
    const text = '"a","b"\r\n"x ""y""",2\r\n"multi\r\nline",3\r\nplain,4\r\n"",""';
    const expected = parseCsvRows(text, ',');
    expect(expected).toEqual([
      ['a', 'b'],
      ['x "y"', '2'],
      ['multi\r\nline', '3'],
      ['plain', '4'],
      ['', ''],
    ]);
    for (let size = 1; size <= text.length; size += 1) expect(parseInChunks(text, size)).toEqual(expected);
  });

  it('gives the same rows for any chunking of a generated file', () => {
    const random = seededRandom(42);
    const alphabet = ['a', '1', '.', ' ', ',', '"', '\n', '\r\n', 'é', ';'];
    const lines: string[] = [];
    const expected: string[][] = [];
    for (let row = 0; row < 200; row += 1) {
      const fields: string[] = [];
      const written: string[] = [];
      for (let column = 0; column < 4; column += 1) {
        let value = '';
        const length = Math.floor(random() * 6);
        for (let index = 0; index < length; index += 1) value += alphabet[Math.floor(random() * alphabet.length)];
        const mustQuote = /[",\r\n]/.test(value) || (value === '' && column === 0) || random() < 0.3;
        fields.push(value);
        written.push(mustQuote ? `"${value.replace(/"/g, '""')}"` : value);
      }
      expected.push(fields);
      lines.push(written.join(','));
    }
    const text = lines.join(random() < 0.5 ? '\n' : '\r\n');
    for (const size of [1, 2, 3, 7, 64, 1000, text.length]) expect(parseInChunks(text, size)).toEqual(expected);
  });

  it('reports characters held back and refuses input after end', () => {
    const parser = new CsvRowParser({ delimiter: ',' });
    expect(parser.push('a,b\n1,')).toEqual([['a', 'b']]);
    expect(parser.pendingLength).toBe(2);
    expect(parser.end()).toEqual([['1', '']]);
    expect(() => parser.push('x')).toThrow();
  });

  it('drops the cut last record of a partial text and honours maxRows', () => {
    expect(parseCsvRows('a,b\n1,2\n3,', ',', { partial: true })).toEqual([
      ['a', 'b'],
      ['1', '2'],
    ]);
    expect(parseCsvRows('\uFEFFa\n1\n2\n3\n', ',', { maxRows: 2 })).toEqual([['a'], ['1']]);
  });
});

describe('fitRowToWidth', () => {
  it('pads short rows with empty cells and truncates long rows', () => {
    expect(fitRowToWidth(['1'], 3)).toEqual(['1', '', '']);
    expect(fitRowToWidth(['1', '2', '3', '4'], 2)).toEqual(['1', '2']);
    expect(fitRowToWidth(['1', '2'], 2)).toEqual(['1', '2']);
  });
});

/**
 * Hostile CSVs against the shared reader: every shape either reads or fails with the limit it hit, and
 * the work done (characters scanned, cells returned, header names tried) stays a small multiple of
 * the input and at most doubles when the input doubles. Work is counted, never timed.
 */
import { describe, expect, it } from 'vitest';
import { CsvContentError, CsvStreamReader } from './stream-reader.ts';
import { CsvRowParser } from './row-parser.ts';
import { sanitizeHeader, sanitizeHeaders } from './headers.ts';
import { readTimezoneBiasMinutes, sectionNameOfRow } from './sections.ts';
import { parseCsvPreview } from './preview.ts';
import { detectDelimiter } from './delimiter.ts';
import { CsvLimitError } from './limits.ts';
import { CSV_LIMITS } from './messages.ts';
import {
  adversarialCsvs, giantLine, giantQuotedField, longSecondLine, repeatedHeaderNames, wideHeaderShortRows, type AdversarialCsv,
} from '../../test/support/adversarial-csv.ts';

const encoder = new TextEncoder();

interface Outcome { bytes: number; charsScanned: number; cells: number; error: string | null }

function readThrough(csv: AdversarialCsv, chunkBytes: number): Outcome {
  const bytes = encoder.encode(csv.text);
  const reader = new CsvStreamReader();
  let error: string | null = null;
  try {
    for (let offset = 0; offset < bytes.length && !reader.finished; offset += chunkBytes) reader.push(bytes.subarray(offset, offset + chunkBytes));
    reader.end();
  } catch (caught) {
    expect(caught).toBeInstanceOf(CsvContentError);
    error = (caught as Error).message;
  }
  return { bytes: bytes.length, charsScanned: reader.charsScanned, cells: reader.cellsReturned, error };
}

function failure(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('expected a failure');
}

describe('adversarial CSVs through the stream reader', () => {
  // Both sizes past the first 64 Ki characters, which the reader gathers and parses in one go.
  const small = adversarialCsvs(128);
  const large = adversarialCsvs(256);
  for (const chunkBytes of [1024, 65_536]) {
    it.each(small.map((csv, index) => [csv.name, index] as const))(`%s: work linear in the input (chunks of ${chunkBytes} bytes)`, (_name, index) => {
      const once = readThrough(small[index]!, chunkBytes);
      const twice = readThrough(large[index]!, chunkBytes);
      for (const outcome of [once, twice]) {
        expect(outcome.charsScanned).toBeLessThanOrEqual(8 * outcome.bytes + 1024);
        expect(outcome.cells).toBeLessThanOrEqual(outcome.bytes);
      }
      // Doubling the input at most doubles the work: the added bytes cost at most the same constant
      // per byte (a quadratic reader's added work grows with what it had already read).
      expect(twice.bytes).toBeGreaterThan(1.9 * once.bytes);
      expect(twice.charsScanned - once.charsScanned).toBeLessThanOrEqual(8 * (twice.bytes - once.bytes));
      expect(twice.cells).toBeLessThanOrEqual(2 * once.cells + 2);
    });
  }

  it('a wide header over short rows returns the rows as written, not padded to the header', () => {
    const { cells, error } = readThrough(wideHeaderShortRows(9_000, 20_000), 65_536);
    expect(error).toBeNull();
    expect(cells).toBe(20_000 * 2);
  });

  it('fails a header over the column limit, naming it', () => {
    expect(readThrough(wideHeaderShortRows(CSV_LIMITS.defaultMaxColumns + 1, 10), 65_536).error)
      .toBe('The header has 10,001 columns; at most 10,000 columns are allowed');
    expect(readThrough(wideHeaderShortRows(50, 10), 4096).error).toBeNull();
    const reader = new CsvStreamReader({ maxColumns: 40 });
    expect(failure(() => { reader.push(encoder.encode(wideHeaderShortRows(50, 3).text)); reader.end(); }))
      .toBe('The header has 50 columns; at most 40 columns are allowed');
  });

  it('fails a line, a line without a line feed, or a quoted field over lines past 1 MiB, naming the line', () => {
    const limit = 'is longer than 1 MiB; a line, or a quoted field running over several lines, may have at most 1,048,576 bytes';
    expect(readThrough(longSecondLine(CSV_LIMITS.defaultMaxLineBytes + 10), 65_536).error).toBe(`Line 2 ${limit}`);
    expect(readThrough(giantLine(3 * 1024 * 1024), 65_536).error).toBe(`Line 1 ${limit}`);
    expect(readThrough(giantQuotedField(CSV_LIMITS.defaultMaxLineBytes + 10), 65_536).error).toBe(`Line 2 ${limit}`);
    expect(readThrough(longSecondLine(CSV_LIMITS.defaultMaxLineBytes - 100), 65_536).error).toBeNull();
  });
});

describe('the row parser on giant records', () => {
  it('scans a line without a line feed fed one character at a time a bounded number of times per character', () => {
    const parser = new CsvRowParser({ delimiter: ',', maxLineBytes: 1 << 20 });
    const text = 'a,'.repeat(100_000);
    for (const character of text) parser.push(character);
    expect(parser.end()).toHaveLength(1);
    expect(parser.charsScanned).toBeLessThanOrEqual(6 * text.length);
  });

  it('scans a quoted field over many lines fed in small pieces a bounded number of times per character', () => {
    const { text } = giantQuotedField(400_000, 16);
    const parser = new CsvRowParser({ delimiter: ',' });
    const rows: string[][] = [];
    for (let offset = 0; offset < text.length; offset += 7) rows.push(...parser.push(text.slice(offset, offset + 7)));
    rows.push(...parser.end());
    expect(rows).toHaveLength(3);
    expect(rows[1]![2]).toHaveLength(400_000);
    expect(parser.charsScanned).toBeLessThanOrEqual(6 * text.length);
  });

  it('names the line a record over the limit starts on, with earlier records spanning lines', () => {
    const parser = new CsvRowParser({ delimiter: ',', maxLineBytes: 100 });
    const text = `a,b\n"x\ny",1\n\n1,2\n"${'z\n'.repeat(60)}",3\n`;
    expect(failure(() => { for (const character of text) parser.push(character); })).toMatch(/^Line 6 is longer than 100 bytes/);
  });
});

describe('unique header names', () => {
  /** The rule as written before (try (2), (3)... in turn): the model the linear form must agree with. */
  function modelHeaders(names: readonly string[]): string[] {
    const used = new Set<string>();
    return names.map((raw, index) => {
      const base = sanitizeHeader(raw) || `Column ${index + 1}`;
      let candidate = base;
      for (let copy = 2; used.has(candidate.toLowerCase()); copy += 1) {
        const suffix = ` (${copy})`;
        candidate = base.slice(0, CSV_LIMITS.headerMaxLength - suffix.length) + suffix;
      }
      used.add(candidate.toLowerCase());
      return candidate;
    });
  }

  it('tries each name about once for 8,000 repeats of one name', () => {
    const names = repeatedHeaderNames(8_000).text.split('\n')[0]!.split(',');
    const work = { candidates: 0 };
    const headers = sanitizeHeaders(names, work);
    expect(new Set(headers.map((name) => name.toLowerCase())).size).toBe(names.length);
    expect(headers.at(-1)).toBe('x (8000)');
    expect(work.candidates).toBeLessThanOrEqual(names.length);
  });

  it('stays linear when long names share their cut stem, and when the suffixes are already taken', () => {
    const stem = 's'.repeat(96);
    // Sizes kept small for the model's sake: it is the quadratic rule.
    const names = [...Array.from({ length: 400 }, (_, index) => `${stem}${String(index).padStart(4, '0')}`)];
    const doubled = [...names, ...names];
    const work = { candidates: 0 };
    expect(sanitizeHeaders(doubled, work)).toEqual(modelHeaders(doubled));
    expect(work.candidates).toBeLessThanOrEqual(2 * doubled.length);
    const taken = [...Array.from({ length: 500 }, (_, index) => `x (${index + 2})`), ...Array(500).fill('x')];
    const takenWork = { candidates: 0 };
    expect(sanitizeHeaders(taken, takenWork)).toEqual(modelHeaders(taken));
    expect(takenWork.candidates).toBeLessThanOrEqual(2 * taken.length);
  });

  it('agrees with the model on a mix of repeats, cases, empty and long names', () => {
    const pool = ['a', 'A', 'a (2)', 'a (3)', '', '<>', 'x'.repeat(100), `${'x'.repeat(96)} (2)`, 'Column 5', 'b (10)', 'b'];
    let state = 7;
    const names = Array.from({ length: 400 }, () => {
      state = (state * 1103515245 + 12345) & 0x7fffffff;
      return pool[state % pool.length]!;
    });
    expect(sanitizeHeaders(names)).toEqual(modelHeaders(names));
  });
});

describe('patterns that backtracked', () => {
  it('rejects a marker-like cell followed by a long run of tabs', () => {
    expect(sectionNameOfRow([`[a]${'\t'.repeat(200_000)}x`])).toBeNull();
    expect(sectionNameOfRow([`[TrackData1]${'\t'.repeat(200_000)}`])).toBe('TrackData1');
  });

  it('finds TimezoneBias after many blank lines and ignores long lines', () => {
    expect(readTimezoneBiasMinutes(`${' \n'.repeat(200_000)}"TimezoneBias";120`)).toBe(120);
    expect(readTimezoneBiasMinutes(`"TimezoneBias"\t-60\n`)).toBe(-60);
    expect(readTimezoneBiasMinutes(`TimezoneBias${'\t'.repeat(100_000)}x\n"TimezoneBias";60`)).toBe(60);
  });
});

describe('the console preview on hostile text', () => {
  it('returns every row unpadded for a wide header, and refuses a header past the column limit', () => {
    const wide = wideHeaderShortRows(9_000, 5_000);
    const preview = parseCsvPreview(wide.text, { maxRows: Number.POSITIVE_INFINITY, padRows: false })!;
    expect(preview.rows).toHaveLength(5_000);
    expect(preview.rows.reduce((sum, row) => sum + row.length, 0)).toBe(10_000);
    expect(parseCsvPreview(wide.text, { maxRows: 10 })!.rows[0]).toHaveLength(9_000);
    expect(() => parseCsvPreview(wideHeaderShortRows(10_001, 2).text)).toThrow(CsvLimitError);
  });

  it('detects the delimiter of wide mixed lines from a bounded sample', () => {
    expect(['|', ',', ';', '\t']).toContain(detectDelimiter(adversarialCsvs(64)[7]!.text));
  });
});

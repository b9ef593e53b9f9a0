/**
 * The browser preview runs the shared layout detection on the file's first MiB: hostile shapes there read
 * at the cost of their rows (the sample rows are not padded to a wide header), and a header past the
 * column limit is refused with the message the upload would give.
 */
import { describe, expect, it } from 'vitest';
import { repeatedHeaderNames, wideHeaderShortRows } from '../../../shared/test/support/adversarial-csv.ts';
import { readCsvPreview } from './read-preview.ts';

function fileOf(text: string, name = 'hostile.csv') {
  const bytes = new TextEncoder().encode(text);
  return { name, type: 'text/csv', size: bytes.length, slice: (start: number, end: number) => ({ arrayBuffer: async () => bytes.slice(start, end).buffer }) };
}

describe('the console preview of hostile CSVs', () => {
  it('keeps the sample rows of a wide header over short rows as written', async () => {
    const outcome = await readCsvPreview(fileOf(wideHeaderShortRows(9_000, 50_000).text));
    if (!outcome.ok) throw new Error(outcome.message);
    expect(outcome.partial).toBe(true);
    expect(outcome.preview.headers).toHaveLength(9_000);
    expect(outcome.preview.rows[0]).toHaveLength(9_000);
    expect(outcome.sampleRows.length).toBeGreaterThan(1_000);
    expect(outcome.sampleRows.every((row) => row.length === 2)).toBe(true);
  });

  it('names 8,000 repeats of one header name apart', async () => {
    const outcome = await readCsvPreview(fileOf(repeatedHeaderNames(8_000).text));
    if (!outcome.ok) throw new Error(outcome.message);
    expect(new Set(outcome.preview.headers).size).toBe(8_002);
  });

  it('refuses a header past the column limit with the upload\'s message', async () => {
    expect(await readCsvPreview(fileOf(wideHeaderShortRows(10_001, 5).text))).toEqual({
      ok: false, title: 'Invalid CSV content', message: 'The header has 10,001 columns; at most 10,000 columns are allowed',
    });
  });
});

/**
 * The wizard's window check needs the file's first and last reading before anything is mapped: the
 * last from the file's final bytes, cut at a line break, read like the preview reads the start.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { detectTimestampFormat } from '@bioprocess/shared/csv/index';
import { readCsvPreview } from './read-preview.ts';
import { FILE_RANGE_MESSAGES, readFileTimeRange, TAIL_BYTES, type TimestampReading } from './file-time-range.ts';

function fileOf(bytes: Uint8Array, name = 'readings.csv') {
  return { name, type: 'text/csv', size: bytes.length, slice: (start: number, end: number) => ({ arrayBuffer: async () => bytes.slice(start, end).buffer }) };
}

async function rangeOf(bytes: Uint8Array, overrides: Partial<TimestampReading> = {}) {
  const file = fileOf(bytes);
  const outcome = await readCsvPreview(file);
  if (!outcome.ok) throw new Error(outcome.message);
  const detection = detectTimestampFormat(outcome.preview.rows.map((row) => row[0] ?? ''));
  return readFileTimeRange(file, { headRows: outcome.sampleRows, partial: outcome.partial, encoding: outcome.encoding }, {
    columnIndex: 0, delimiter: outcome.preview.delimiter, mode: 'absolute', detection, zone: 'UTC', elapsedUnit: 'seconds', startMs: null, ...overrides,
  });
}

describe("a file's first and last reading, read in the browser", () => {
  it('reads the Pioreactor export from its first rows and its last 256 KB', async () => {
    const bytes = new Uint8Array(readFileSync(new URL('../../../api/demo-data/od_readings_with_too_frequently_outlier_detections.csv', import.meta.url)));
    expect(bytes.length).toBeGreaterThan(TAIL_BYTES);
    expect(await rangeOf(bytes)).toEqual({
      known: true, firstMs: Date.parse('2025-02-26T10:27:40.854Z'), lastMs: Date.parse('2025-02-27T01:39:35.841Z'),
    });
  });

  it('reads zone-less timestamps in the chosen zone, and elapsed time from the start', async () => {
    const rows = Array.from({ length: 40_000 }, (_, i) => `2025-03-01 ${String(Math.floor(i / 3600) % 24).padStart(2, '0')}:${String(Math.floor(i / 60) % 60).padStart(2, '0')}:${String(i % 60).padStart(2, '0')},${i}`);
    const text = `time,value\n${rows.slice(0, 86_399).join('\n')}\n`;
    const range = await rangeOf(new TextEncoder().encode(text), { zone: 'Europe/Amsterdam' });
    expect(range).toEqual({ known: true, firstMs: Date.parse('2025-02-28T23:00:00Z'), lastMs: Date.parse('2025-03-01T10:06:39Z') });

    const elapsed = `hours,value\n${Array.from({ length: 30_000 }, (_, i) => `${(i / 100).toFixed(2)},${i}`).join('\n')}\n`;
    const start = Date.parse('2025-01-01T06:00:00Z');
    expect(await rangeOf(new TextEncoder().encode(elapsed), { mode: 'elapsed', elapsedUnit: 'hours', startMs: start }))
      .toEqual({ known: true, firstMs: start, lastMs: start + 299.99 * 3_600_000 });
    expect(await rangeOf(new TextEncoder().encode(elapsed), { mode: 'elapsed', elapsedUnit: 'hours', startMs: null }))
      .toEqual({ known: false, reason: FILE_RANGE_MESSAGES.elapsedNeedsStart });
  });

  it('says the end is unknown when the last lines hold no timestamp that reads', async () => {
    const rows = Array.from({ length: 20_000 }, (_, i) => `2025-03-01T00:00:${String(i % 60).padStart(2, '0')}Z,${i}`);
    const trailer = Array.from({ length: 20_000 }, () => 'end of export,see the instrument log').join('\n');
    const range = await rangeOf(new TextEncoder().encode(`time,value\n${rows.join('\n')}\n${trailer}\n`));
    expect(range).toEqual({ known: false, reason: FILE_RANGE_MESSAGES.lastUnreadable });
  });
});

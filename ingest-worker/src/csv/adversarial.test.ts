/**
 * Hostile CSVs through the worker's read pass (record reader and staging): each either stages its
 * points or fails with the limit it hit before anything is handed over, and the work counted (bytes
 * searched and copied, characters parsed, cells looked at) stays a small multiple of the file and
 * at most doubles when the file doubles. Work is counted, never timed.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { CsvMapping } from '@bioprocess/shared/timeseries';
import { CSV_LIMITS } from '@bioprocess/shared/csv/index';
import {
  giantLine, giantQuotedField, longSecondLine, manyEmptyLines, repeatedHeaderNames, wideHeaderShortRows, type AdversarialCsv,
} from '../../../shared/test/support/adversarial-csv.ts';
import { CsvRejected, emptyStagingWork, readAndStageCsv, type StagingOptions, type StagingWork } from './staging-reader.ts';
import { emptyReadStats, readRecords } from './record-reader.ts';

const folder = mkdtempSync(path.join(tmpdir(), 'adversarial-csv-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

const LINE_LIMIT = 'is longer than 1 MiB; a line, or a quoted field running over several lines, may have at most 1,048,576 bytes';

function writeCsv(csv: AdversarialCsv): { file: string; bytes: number } {
  const file = path.join(folder, `${Math.random().toString(36).slice(2)}.csv`);
  writeFileSync(file, csv.text);
  return { file, bytes: Buffer.byteLength(csv.text) };
}

interface Staged { points: number; batches: number; work: StagingWork; bytes: number; error: string | null }

async function stage(csv: AdversarialCsv, overrides: Partial<StagingOptions> = {}, columns: string[] = ['v'], fillForward = false): Promise<Staged> {
  const { file, bytes } = writeCsv(csv);
  const mapping = {
    timestamp_column: 'time', timestamp_mode: 'absolute', replace_existing: false,
    columns: columns.map((column, index) => ({ column, instrument_id: index + 1, fill_forward: fillForward })),
  } as CsvMapping;
  const work = emptyStagingWork();
  let points = 0;
  let batches = 0;
  let error: string | null = null;
  try {
    await readAndStageCsv({
      filePath: file, mapping, timeZone: 'UTC', timeZoneSource: 'organization', startMs: null, endMs: null, versionSeq: 1,
      maxRows: 10_000_000, batchPoints: 1_000_000, from: null, versioned: false, work, ...overrides,
    }, {
      async batch(_chunks, count) {
        points += count;
        batches += 1;
      },
      progress() {},
    });
  } catch (caught) {
    if (!(caught instanceof CsvRejected)) throw caught;
    error = caught.message;
  }
  return { points, batches, work, bytes, error };
}

/** Bytes searched, copied and parsed, and cells looked at, each per byte of the file. */
function perByte(staged: Staged): number[] {
  const { work, bytes } = staged;
  return [work.bytesScanned / bytes, work.bytesCopied / bytes, work.charsParsed / bytes, work.cellsVisited / bytes];
}

describe('the worker read pass on hostile CSVs', () => {
  it('stages a wide header over short rows at the cost of the rows as written, and doubling the rows doubles the cells', async () => {
    const once = await stage(wideHeaderShortRows(9_000, 10_000));
    const twice = await stage(wideHeaderShortRows(9_000, 20_000));
    expect(once).toMatchObject({ error: null, points: 10_000 });
    expect(twice).toMatchObject({ error: null, points: 20_000 });
    // The timestamp and the one mapped cell of each row: not the header's 9,000.
    expect(once.work.cellsVisited).toBe(2 * 10_000);
    expect(twice.work.cellsVisited).toBe(2 * 20_000);
    for (const ratio of [...perByte(once), ...perByte(twice)]) expect(ratio).toBeLessThanOrEqual(4);
  });

  it('looks at the mapped columns a short row reaches, not at every mapped column, for each row', async () => {
    const mapped = ['v', ...Array.from({ length: 1_000 }, (_, index) => `c${index + 3}`)];
    const once = await stage(wideHeaderShortRows(2_000, 10_000), {}, mapped);
    const twice = await stage(wideHeaderShortRows(2_000, 20_000), {}, mapped);
    expect(once).toMatchObject({ error: null, points: 10_000 });
    expect(once.work.cellsVisited).toBe(2 * 10_000);
    expect(twice.work.cellsVisited).toBe(2 * 20_000);
    // Columns that fill forward are looked at on every row (they repeat their last value there).
    const filled = await stage(wideHeaderShortRows(2_000, 1_000), {}, ['v', 'c3', 'c4'], true);
    expect(filled.work.cellsVisited).toBe(4 * 1_000);
  });

  it('fails a header over the column limit before staging anything, naming the limit', async () => {
    const staged = await stage(wideHeaderShortRows(CSV_LIMITS.defaultMaxColumns + 1, 100));
    expect(staged.error).toBe('The header has 10,001 columns; at most 10,000 columns are allowed');
    expect(staged.batches).toBe(0);
    expect((await stage(wideHeaderShortRows(50, 10), { maxColumns: 49 })).error).toBe('The header has 50 columns; at most 49 columns are allowed');
  });

  it('reads 8,000 repeats of one header name', async () => {
    const staged = await stage(repeatedHeaderNames(8_000));
    expect(staged).toMatchObject({ error: null, points: 1 });
  });

  it('fails a long line, a line without a line feed and a quoted field over lines past 1 MiB, naming the line, staging nothing', async () => {
    const cases: Array<[AdversarialCsv, number]> = [
      [longSecondLine(CSV_LIMITS.defaultMaxLineBytes + 10), 2],
      [giantLine(3 * 1024 * 1024), 1],
      [giantQuotedField(CSV_LIMITS.defaultMaxLineBytes + 10), 2],
    ];
    for (const [csv, line] of cases) {
      for (const readChunkBytes of [64 * 1024, 1024 * 1024]) {
        const staged = await stage(csv, { readChunkBytes });
        expect(staged.error, csv.name).toBe(`Line ${line} ${LINE_LIMIT}`);
        expect(staged.batches).toBe(0);
      }
    }
    // Just under the limit, a quoted note over many lines in a column not mapped reads.
    expect(await stage(giantQuotedField(CSV_LIMITS.defaultMaxLineBytes - 100), { readChunkBytes: 64 * 1024 })).toMatchObject({ error: null, points: 2 });
  });

  it('names the line under a limit smaller than a read, where several lines share one read', async () => {
    const text = `time,v\n2024-01-01T00:00:00Z,1\n2024-01-01T00:00:01Z,${'2'.repeat(300)}\n`;
    const staged = await stage({ name: 'a 300-byte line 3', text }, { maxLineBytes: 200 });
    expect(staged.error).toBe('Line 3 is longer than 200 bytes; a line, or a quoted field running over several lines, may have at most 200 bytes');
  });

  it('stages many empty lines with work linear in them', async () => {
    const once = await stage(manyEmptyLines(200_000));
    const twice = await stage(manyEmptyLines(400_000));
    expect(once).toMatchObject({ error: null, points: 1 });
    for (const ratio of [...perByte(once), ...perByte(twice)]) expect(ratio).toBeLessThanOrEqual(4);
  });
});

describe('the record reader on a line without a line feed', () => {
  async function readLine(bytes: number) {
    const { file } = writeCsv(giantLine(bytes));
    const stats = emptyReadStats();
    let rows = 0;
    for await (const batch of readRecords({ filePath: file, delimiter: ',', maxLineBytes: 64 * 1024 * 1024, chunkBytes: 64 * 1024, stats })) rows += batch.rows?.length ?? 0;
    return { rows, stats };
  }

  it('copies and searches each byte a bounded number of times, however many reads the line spans', async () => {
    const once = await readLine(8 * 1024 * 1024);
    const twice = await readLine(16 * 1024 * 1024);
    expect(once.rows).toBe(1);
    for (const { stats } of [once, twice]) {
      expect(stats.bytesRead).toBeGreaterThan(0);
      expect(stats.bytesScanned).toBeLessThanOrEqual(2 * stats.bytesRead);
      expect(stats.bytesCopied).toBeLessThanOrEqual(2 * stats.bytesRead);
      expect(stats.charsParsed).toBeLessThanOrEqual(8 * stats.bytesRead);
    }
    expect(twice.stats.bytesCopied).toBeLessThanOrEqual(2 * once.stats.bytesCopied);
    expect(twice.stats.bytesScanned).toBeLessThanOrEqual(2 * once.stats.bytesScanned);
  });
});

/**
 * The read pass on files of several read chunks: from the second chunk on, quote-free lines are read
 * in place (no strings per cell), and every point, counter and rejection must be what reading the
 * same rows as strings gives. The expectations come from a plain model of the rules, not from the
 * reader.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { pointVersion } from '@bioprocess/shared/ingest/versions';
import type { CsvMapping } from '@bioprocess/shared/timeseries';
import { CsvRejected, NeedsRowVersions, readAndStageCsv, type CsvPlan, type StagingOptions } from './staging-reader.ts';
import { READ_CHUNK_BYTES } from './record-reader.ts';

const T0 = Date.UTC(2024, 0, 1);
const HEADER = ['time', 'a', 'b', 'c', 'ff'];
const ROWS = 80_000;
const folder = mkdtempSync(path.join(tmpdir(), 'staging-reader-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

interface StagedPoint { instrumentId: number; ts: number; micros: number; value: number; version: bigint | null }

/** Decodes the staged RowBinary rows: instrument UInt64, ts Int64, Nullable(Float64), ts_micros UInt16[, version UInt64]. */
function decode(chunk: Uint8Array, versioned: boolean): StagedPoint[] {
  const view = new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  const size = versioned ? 35 : 27;
  const points: StagedPoint[] = [];
  for (let offset = 0; offset < chunk.byteLength; offset += size) {
    if (view.getUint8(offset + 16) !== 0) throw new Error(`a null value staged at byte ${offset}`);
    points.push({
      instrumentId: Number(view.getBigUint64(offset, true)),
      ts: Number(view.getBigInt64(offset + 8, true)),
      value: view.getFloat64(offset + 17, true),
      micros: view.getUint16(offset + 25, true),
      version: versioned ? view.getBigUint64(offset + 27, true) : null,
    });
  }
  return points;
}

async function stage(lines: string[], overrides: Partial<StagingOptions> = {}): Promise<{ plan: CsvPlan; points: StagedPoint[] }> {
  const file = path.join(folder, `upload-${Math.random().toString(36).slice(2)}.csv`);
  writeFileSync(file, lines.join(''));
  const mapping: CsvMapping = {
    timestamp_column: 'time', timestamp_mode: 'absolute', replace_existing: false,
    columns: HEADER.slice(1).map((column, index) => ({ column, instrument_id: 100 + index, fill_forward: column === 'ff' })),
  } as CsvMapping;
  const options: StagingOptions = {
    filePath: file, mapping, timeZone: 'UTC', timeZoneSource: 'organization', startMs: null, endMs: null,
    versionSeq: 7, maxRows: 10_000_000, batchPoints: 50_000, from: null, versioned: false, ...overrides,
  };
  const points: StagedPoint[] = [];
  const plan = await readAndStageCsv(options, {
    async batch(chunks) {
      for (const chunk of chunks) points.push(...decode(chunk, options.versioned));
    },
    progress() {},
  });
  points.sort((left, right) => left.instrumentId - right.instrumentId || left.ts - right.ts);
  return { plan, points };
}

/** A file of every kind of line, spread over several read chunks; answers its lines (with their breaks). */
function mixedFile(): string[] {
  const lines = [`${HEADER.join(',')}\n`];
  for (let row = 0; row < ROWS; row += 1) {
    const time = new Date(T0 + row * 1000).toISOString();
    const shapes = ['', '1.5e-3', ' 7.25 ', '12345678901234567', '-0', '0.000000000000000000123', '+3.5', '.5'];
    const b = row % 2 === 0 ? shapes[(row / 2) % shapes.length]! : (row / 7).toFixed(3);
    const cells = [time, (Math.sin(row) * 1000).toFixed(6), b, String(row % 1000), row % 5 === 0 ? (row / 3).toFixed(2) : ''];
    if (row % 1000 === 500) cells[0] = 'not a time';
    if (row % 1000 === 600) cells.length = 2;
    if (row % 1000 === 700) cells.push('extra');
    if (row % 1000 === 900) cells.fill('', 1);
    if (row % 1000 === 901) cells.fill('');
    lines.push(`${cells.join(',')}${row % 3 === 0 ? '\r\n' : '\n'}`);
    if (row % 1000 === 800) lines.push('\n');
  }
  return lines;
}

/** The rules in their plainest form: what the reader must make of mixedFile(). */
function expectedOf(lines: string[], startMs: number, endMs: number) {
  const points: StagedPoint[] = [];
  const counts = { dataRows: 0, validRows: 0, skippedBadTimestamp: 0, skippedOutOfRange: 0, skippedEmpty: 0, points: 0, filledPoints: 0 };
  let carried: string | null = null;
  for (const line of lines.slice(1)) {
    const text = line.replace(/\r?\n$/, '');
    if (text === '') continue;
    counts.dataRows += 1;
    const cells = text.split(',').slice(0, HEADER.length);
    while (cells.length < HEADER.length) cells.push('');
    const ts = /^\d{4}-/.test(cells[0]!) ? Date.parse(cells[0]!) : null;
    const blank = (cell: string) => cell.trim() === '';
    if (ts === null) {
      if (cells.every(blank)) counts.skippedEmpty += 1;
      else counts.skippedBadTimestamp += 1;
      continue;
    }
    if (ts < startMs || ts > endMs) {
      if (!blank(cells[4]!)) carried = cells[4]!;
      counts.skippedOutOfRange += 1;
      continue;
    }
    let rowPoints = 0;
    cells.slice(1).forEach((cell, index) => {
      let raw = cell;
      if (index === 3) {
        if (blank(raw)) {
          if (carried === null) return;
          raw = carried;
          counts.filledPoints += 1;
        } else {
          carried = raw;
        }
      }
      if (blank(raw)) return;
      points.push({ instrumentId: 100 + index, ts, micros: 0, value: Number(raw), version: null });
      rowPoints += 1;
    });
    if (rowPoints === 0) counts.skippedEmpty += 1;
    else counts.validRows += 1;
    counts.points += rowPoints;
  }
  points.sort((left, right) => left.instrumentId - right.instrumentId || left.ts - right.ts);
  return { points, counts };
}

describe('the CSV read pass over several read chunks', () => {
  it('stages every point, bit for bit, and counts every skipped row as reading rows as strings does', async () => {
    const lines = mixedFile();
    expect(lines.join('').length).toBeGreaterThan(3 * READ_CHUNK_BYTES);
    const startMs = T0 + 150_000;
    const endMs = T0 + (ROWS - 2_500) * 1000;
    const { plan, points } = await stage(lines, { startMs, endMs });
    const expected = expectedOf(lines, startMs, endMs);
    expect(points.length).toBe(expected.points.length);
    for (let index = 0; index < points.length; index += 1) {
      const [got, want] = [points[index]!, expected.points[index]!];
      if (got.instrumentId !== want.instrumentId || got.ts !== want.ts || !Object.is(got.value, want.value)) {
        expect(got, `point ${index}`).toEqual(want);
      }
    }
    const { dataRows, validRows, skippedBadTimestamp, skippedOutOfRange, skippedEmpty, filledPoints } = plan;
    expect({ dataRows, validRows, skippedBadTimestamp, skippedOutOfRange, skippedEmpty, points: plan.points, filledPoints }).toEqual(expected.counts);
    expect(plan.increasing).toBe(true);
  });

  it('stages instants before 1970 as negative Int64 timestamps', async () => {
    const times = ['1950-06-01T12:00:00.125Z', '1969-12-31T23:59:59.999Z', '1970-01-01T00:00:00.001Z'];
    const { points } = await stage([`${HEADER.join(',')}\n`, ...times.map((time, row) => `${time},${row + 0.5},,,\n`)]);
    expect(points).toEqual(times.map((time, row) => ({ instrumentId: 100, ts: Date.parse(time), micros: 0, value: row + 0.5, version: null })));
  });

  it('stages the microseconds a timestamp states beside its millisecond, cutting digits past the sixth', async () => {
    const rows: Array<[time: string, ms: number, micros: number]> = [
      ['1969-12-31T23:59:59.999001Z', -1, 1],
      ['2021-05-02T07:12:51.123456Z', Date.UTC(2021, 4, 2, 7, 12, 51, 123), 456],
      ['2021-05-02T07:12:51.1245Z', Date.UTC(2021, 4, 2, 7, 12, 51, 124), 500],
      ['2021-05-02T07:12:52.0000019Z', Date.UTC(2021, 4, 2, 7, 12, 52, 0), 1],
      ['2021-05-02T07:12:53.5Z', Date.UTC(2021, 4, 2, 7, 12, 53, 500), 0],
      ['2021-05-02T09:12:54.000999+02:00', Date.UTC(2021, 4, 2, 7, 12, 54, 0), 999],
    ];
    const { points } = await stage([`${HEADER.join(',')}\n`, ...rows.map(([time], row) => `${time},${row},,,\n`)]);
    expect(points.map(({ ts, micros }) => [ts, micros])).toEqual(rows.map(([, ms, micros]) => [ms, micros]));
  });

  it('rejects a non-numeric value far into the file, naming it', async () => {
    const lines = mixedFile();
    lines[ROWS - 10] = lines[ROWS - 10]!.replace(/^([^,]*),[^,]*,/, '$1,pump B,');
    await expect(stage(lines)).rejects.toThrow(new CsvRejected("Column 'a' has non-numeric values: pump B"));
  });

  it('stores a flagged cell far into the file as missing, counted with its text, and fails nothing', async () => {
    const lines = mixedFile();
    lines[ROWS - 10] = lines[ROWS - 10]!.replace(/^([^,]*),[^,]*,/, '$1,< 0.400,');
    const { plan } = await stage(lines);
    expect(plan.flagged[0]).toEqual({ count: 1, examples: ['< 0.400'] });
  });

  it('asks for row versions when a timestamp repeats far into the file, and stages each row with its own', async () => {
    const lines = mixedFile();
    lines[ROWS - 10] = lines[ROWS - 11]!;
    await expect(stage(lines)).rejects.toBeInstanceOf(NeedsRowVersions);
    const { plan, points } = await stage(lines, { versioned: true });
    expect(plan.increasing).toBe(false);
    const repeatedTs = Date.parse(lines[ROWS - 11]!.split(',')[0]!);
    const versions = points.filter((point) => point.instrumentId === 100 && point.ts === repeatedTs).map((point) => point.version);
    // A row's version is its line in the file (lines[i] is line i + 1, whose version index is i): the duplicate count names lines.
    expect(versions.sort()).toEqual([BigInt(pointVersion(7, ROWS - 11)), BigInt(pointVersion(7, ROWS - 10))]);
  });
});

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CsvContentError, CsvStreamReader, type CsvStreamReaderOptions } from './stream-reader.ts';
import { realExportPath, type RealExportName } from '../../test-data/real-exports.ts';

const encode = (text: string) => new TextEncoder().encode(text);

function readAll(bytes: Uint8Array, chunkSize: number, options: CsvStreamReaderOptions = {}) {
  const reader = new CsvStreamReader(options);
  const rows: string[][] = [];
  for (let offset = 0; offset < bytes.length && !reader.finished; offset += chunkSize) {
    rows.push(...reader.push(bytes.subarray(offset, offset + chunkSize)));
  }
  rows.push(...reader.end());
  return { reader, rows };
}

function failureOf(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(CsvContentError);
    return (error as Error).message;
  }
  throw new Error('expected a CsvContentError');
}

describe('CsvStreamReader', () => {
  it('detects the delimiter, sanitises the header and cuts rows to its width (a short row stays short)', () => {
    const text = '\uFEFFtime;<pH>;pH\r\n2024-01-01 00:00:00;7,1\r\n2024-01-01 00:00:30;7,2;x;extra';
    for (const size of [1, 5, 1000]) {
      const { reader, rows } = readAll(encode(text), size);
      expect(reader.delimiter).toBe(';');
      expect(reader.headers).toEqual(['time', 'pH', 'pH (2)']);
      expect(reader.rawHeaders).toEqual(['time', '<pH>', 'pH']);
      expect(rows).toEqual([
        ['2024-01-01 00:00:00', '7,1'],
        ['2024-01-01 00:00:30', '7,2', 'x'],
      ]);
      expect(reader.rowCount).toBe(2);
      expect(reader.bytesRead).toBe(encode(text).length);
      expect(reader.encoding).toBe('utf-8');
    }
  });

  it('uses a given delimiter', () => {
    const { rows } = readAll(encode('a|b\n1,5|2'), 3, { delimiter: '|' });
    expect(rows).toEqual([['1,5', '2']]);
  });

  it('fails with the fixed messages for empty content, a missing header, malicious content and too many rows', () => {
    expect(failureOf(() => readAll(encode(''), 10))).toBe('File content is empty');
    expect(failureOf(() => readAll(encode('\r\n  \n'), 10))).toBe('File content is empty');
    expect(failureOf(() => readAll(encode(';;;\n1;2;3;4'), 10))).toBe('CSV file must contain a header row');
    expect(failureOf(() => readAll(encode('a,b\n1,<scr' + 'ipt>\n'), 3))).toBe('File contains potentially malicious content');
    expect(failureOf(() => readAll(encode('a\n1\n2\n3\n'), 2, { maxRows: 2 }))).toBe('File must not have more than 2 rows');
    expect(readAll(encode('a\n1\n2\n'), 2, { maxRows: 2 }).rows).toHaveLength(2);
  });

  it('reads a header-only file as zero rows', () => {
    const { reader, rows } = readAll(encode('time,value'), 4);
    expect(reader.headers).toEqual(['time', 'value']);
    expect(rows).toEqual([]);
  });

  it('reads the data table of the real DASware export and stops at the next section', () => {
    const bytes = new Uint8Array(readFileSync(realExportPath('CTPC06603.20200714 - 5GB1 - KDB.Control.csv')));
    const { reader, rows } = readAll(bytes, 16_384);
    expect(reader.delimiter).toBe(';');
    expect(reader.sectionName).toBe('TrackData1');
    expect(reader.headers).toHaveLength(67);
    expect(reader.headers).toContain('Unit 1.T1.PV [°C]');
    expect(reader.encoding).toBe('latin1');
    expect(rows).toHaveLength(6_394);
    expect(reader.finished).toBe(true);
    expect(reader.bytesRead).toBeLessThan(bytes.length);
  });

  it.each<[RealExportName, number, number]>([
    ['od_readings_with_too_frequently_outlier_detections.csv', 4, 10_944],
    ['2021-05-02 07_12_51_M0_data.csv', 40, 15_473],
    ['O2_2021-10-01-10-59 Chronograf Data.csv', 3, 71_664],
  ])('reads %s with %i columns and %i rows', (name, columns, count) => {
    const bytes = new Uint8Array(readFileSync(realExportPath(name)));
    const { reader, rows } = readAll(bytes, 65_536);
    expect(reader.delimiter).toBe(',');
    expect(reader.headers).toHaveLength(columns);
    expect(rows).toHaveLength(count);
    expect(rows.every((row) => row.length === columns)).toBe(true);
  });
});

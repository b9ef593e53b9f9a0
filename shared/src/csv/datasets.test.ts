/**
 * The four real instrument exports (api/demo-data and shared/test-data, each with its SOURCES.md), read
 * the way the worker reads them (bytes streamed in odd-sized chunks) and the way the console previews
 * them (first 64 KiB).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CsvTextDecoder, decodeCsvBytes } from './encoding.ts';
import { MaliciousContentScanner } from './malicious-content.ts';
import { CsvRowParser, type CsvDelimiter } from './row-parser.ts';
import { DataSectionFilter, isMultiSectionCsv, readTimezoneBiasMinutes } from './sections.ts';
import { parseCsvPreview } from './preview.ts';
import { sanitizeHeaders } from './headers.ts';
import { NonNumericCollector } from './numeric-validation.ts';
import { decimalCommaAllowed } from './numeric.ts';
import { createTimestampParser, detectTimestampFormat, elapsedToEpochMs } from './timestamps.ts';
import { parseTimeZone } from './time-zones.ts';
import { dasWareTimeBase, distinctKeys } from './export-shapes.ts';
import { realExportPath, type RealExportName } from '../../test-data/real-exports.ts';

function readDataset(name: RealExportName): Uint8Array {
  return new Uint8Array(readFileSync(realExportPath(name)));
}

interface StreamedFile {
  header: string[];
  rows: string[][];
  encoding: string;
  malicious: boolean;
  section: string | null;
}

/** The worker's path: decode, scan, parse and (for multi-section files) filter, chunk by chunk. */
function streamFile(bytes: Uint8Array, delimiter: CsvDelimiter, multiSection: boolean, chunkSize: number): StreamedFile {
  const decoder = new CsvTextDecoder();
  const scanner = new MaliciousContentScanner();
  const parser = new CsvRowParser({ delimiter });
  const filter = multiSection ? new DataSectionFilter() : null;
  let header: string[] | null = null;
  const rows: string[][] = [];
  let ended = false;
  const take = (parsed: string[][]) => {
    for (const row of parsed) {
      if (ended) return;
      if (filter) {
        const verdict = filter.accept(row);
        if (verdict === 'skip') continue;
        if (verdict === 'end') {
          ended = true;
          return;
        }
        if (verdict === 'header') {
          header = row;
          continue;
        }
      } else if (header === null) {
        header = row;
        continue;
      }
      rows.push(row);
    }
  };
  const feed = (text: string) => {
    scanner.push(text);
    take(parser.push(text));
  };
  for (let offset = 0; offset < bytes.length; offset += chunkSize) feed(decoder.decode(bytes.subarray(offset, offset + chunkSize)));
  feed(decoder.end());
  take(parser.end());
  return { header: header ?? [], rows, encoding: decoder.encoding, malicious: scanner.found, section: filter?.sectionName ?? null };
}

function previewOf(bytes: Uint8Array) {
  const { text } = decodeCsvBytes(bytes.subarray(0, 64 * 1024), { partial: bytes.length > 64 * 1024 });
  return { text, preview: parseCsvPreview(text, { partial: bytes.length > 64 * 1024, maxRows: 20 })! };
}

function columnValues(rows: string[][], index: number): string[] {
  return rows.map((row) => row[index] ?? '');
}

describe('real datasets', () => {
  it('Pioreactor OD readings: 4 columns, 10,944 rows, ISO UTC with microseconds', () => {
    const bytes = readDataset('od_readings_with_too_frequently_outlier_detections.csv');
    const { preview } = previewOf(bytes);
    expect(preview.delimiter).toBe(',');
    expect(preview.headers).toEqual(['timestamp', 'od_reading', 'angle', 'channel']);
    const file = streamFile(bytes, preview.delimiter, false, 7919);
    expect(file.rows).toHaveLength(10_944);
    expect(file.malicious).toBe(false);
    const detection = detectTimestampFormat(columnValues(preview.rows, 0));
    expect(detection).toMatchObject({ format: 'iso', confidence: 1 });
    const parse = createTimestampParser(detection);
    const times = file.rows.map((row) => parse(row[0]!));
    expect(times.every((time) => time !== null)).toBe(true);
    expect(times[0]).toBe(Date.UTC(2025, 1, 26, 10, 27, 40, 854));
    expect(times.at(-1)).toBe(Date.UTC(2025, 1, 27, 1, 39, 35, 841));
    const collector = new NonNumericCollector();
    for (const row of file.rows) for (let column = 1; column < 4; column += 1) collector.check(preview.headers[column]!, row[column]!);
    expect(collector.hasErrors).toBe(false);
  });

  it('Chi.Bio log: 40 columns, CRLF, 15,473 rows, exp_time suggested as elapsed seconds', () => {
    const bytes = readDataset('2021-05-02 07_12_51_M0_data.csv');
    const { preview } = previewOf(bytes);
    expect(preview.delimiter).toBe(',');
    expect(preview.headers).toHaveLength(40);
    expect(preview.headers[0]).toBe('exp_time');
    expect(preview.headers[39]).toBe('growth_rate');
    const file = streamFile(bytes, preview.delimiter, false, 65_536);
    expect(file.rows).toHaveLength(15_473);
    expect(file.rows.every((row) => row.length === 40)).toBe(true);
    const detection = detectTimestampFormat(columnValues(file.rows, 0), { columnName: 'exp_time' });
    expect(detection.format).toBe('spreadsheet-serial');
    expect(detection.elapsed).toEqual({ unit: 'seconds' });
    const start = Date.UTC(2021, 4, 2, 7, 12, 51);
    expect(elapsedToEpochMs(Number(file.rows.at(-1)![0]), 'seconds', start)).toBe(start + 929_259_560);
    const collector = new NonNumericCollector();
    for (const row of file.rows) for (let column = 0; column < 40; column += 1) collector.check(preview.headers[column]!, row[column]!);
    expect(collector.message()).toBeNull();
  });

  it('Chronograf O2 export: every field quoted, no final newline, 71,664 rows', () => {
    const bytes = readDataset('O2_2021-10-01-10-59 Chronograf Data.csv');
    const { preview } = previewOf(bytes);
    expect(preview.delimiter).toBe(',');
    expect(preview.headers).toEqual(['time', 'Presens_data.O2_value', 'position']);
    expect(preview.rows[0]).toEqual(['2021-09-30T15:24:29.000Z', '74.3', '0']);
    const file = streamFile(bytes, preview.delimiter, false, 4093);
    expect(file.rows).toHaveLength(71_664);
    expect(file.rows.at(-1)).toEqual(['2021-10-01T09:43:52.000Z', '105.27', '9']);
    const detection = detectTimestampFormat(columnValues(preview.rows, 0));
    expect(detection).toMatchObject({ format: 'iso', confidence: 1 });
    const parse = createTimestampParser(detection);
    expect(file.rows.every((row) => parse(row[0]!) !== null)).toBe(true);
    const collector = new NonNumericCollector();
    for (const row of file.rows) collector.check('Presens_data.O2_value', row[1]!);
    expect(collector.hasErrors).toBe(false);
    // Long format: the position column names 48 reactors, all of them within the preview's first bytes.
    expect(distinctKeys(columnValues(file.rows, 2))).toEqual(Array.from({ length: 48 }, (_, index) => String(index)));
    const firstBytes = parseCsvPreview(new TextDecoder().decode(bytes.subarray(0, 256 * 1024)), { partial: true, maxRows: Number.POSITIVE_INFINITY })!;
    expect(distinctKeys(columnValues(firstBytes.rows, 2))).toHaveLength(48);
  });

  it('DASware multi-section export: Latin-1, semicolons, [TrackData1] with 67 columns and 6,394 rows', () => {
    const bytes = readDataset('CTPC06603.20200714 - 5GB1 - KDB.Control.csv');
    const { text, preview } = previewOf(bytes);
    expect(isMultiSectionCsv(text)).toBe(true);
    expect(preview.section).toBe('TrackData1');
    expect(preview.delimiter).toBe(';');
    expect(preview.headers).toHaveLength(67);
    expect(preview.headers.slice(0, 2)).toEqual(['Timestamp', 'Duration']);
    expect(readTimezoneBiasMinutes(text)).toBe(120);

    const file = streamFile(bytes, preview.delimiter, true, 10_007);
    expect(file.encoding).toBe('latin1');
    expect(file.section).toBe('TrackData1');
    expect(file.malicious).toBe(false);
    expect(file.header).toHaveLength(67);
    expect(sanitizeHeaders(file.header)).toContain('Unit 1.T1.PV [°C]');
    expect(file.rows).toHaveLength(6_394);

    const detection = detectTimestampFormat(columnValues(file.rows, 0));
    expect(detection).toMatchObject({ format: 'iso-space', confidence: 1 });
    // The timestamps are UTC: the inoculation event says '11:46:05 AM (UTC)' and the TrackData's
    // inoculation clock starts counting at that time; TimezoneBias is the station's offset.
    const timeBase = dasWareTimeBase(readTimezoneBiasMinutes(text));
    expect(timeBase).toMatchObject({ zone: 'UTC', stationOffsetMinutes: 120 });
    const parse = createTimestampParser(detection, { timeZone: parseTimeZone(timeBase!.zone)! });
    expect(parse(file.rows[0]![0]!)).toBe(Date.UTC(2020, 6, 14, 9, 55, 33));
    expect(file.rows.every((row) => parse(row[0]!) !== null)).toBe(true);
    const whole = new TextDecoder('latin1').decode(bytes);
    expect(whole).toContain('2020-07-14 11:46:05;"Inoculation started: 7/14/2020 11:46:05 AM (UTC)"');
    const inoculated = file.rows.find((row) => row[2] !== '')!;
    expect(inoculated.slice(0, 3)).toEqual(['2020-07-14 11:46:09', '0.0768065080972222', '1899-12-30 00:00:04']);
    expect(detectTimestampFormat(columnValues(file.rows, 1), { columnName: 'Duration' }).elapsed).toEqual({ unit: 'days' });

    // Missing values are "" (empty quoted): numeric columns hold numbers or nothing; the inoculation
    // time (written as 1900-01-01 hh:mm:ss) is the one column that is not numeric.
    const headers = sanitizeHeaders(file.header);
    const collector = new NonNumericCollector();
    for (const row of file.rows) {
      for (let column = 1; column < 67; column += 1) {
        collector.check(headers[column]!, row[column] ?? '', { decimalComma: decimalCommaAllowed(';') });
      }
    }
    const bad = collector.result();
    expect(bad.map((entry) => entry.column)).toEqual(['Unit 1.InoculationTime []']);
    expect(bad[0]!.badValues).toHaveLength(5);
    expect(bad[0]!.moreCount).toBeGreaterThan(0);
    expect(collector.message()).toMatch(/^Column 'Unit 1\.InoculationTime \[\]' has non-numeric values: 1899-12-30 00:00:04, .* and \d+ more$/);
  });
});

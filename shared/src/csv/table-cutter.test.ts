import { describe, expect, it } from 'vitest';
import { TableCutter } from './table-cutter.ts';
import { parseElapsedClock, elapsedCellToEpochMs } from './timestamps.ts';
import { CsvTextDecoder, decodeCsvBytes } from './encoding.ts';
import { sniffBinary } from './binary-sniff.ts';

function cut(text: string, options: ConstructorParameters<typeof TableCutter>[0], step: number): string {
  const cutter = new TableCutter(options);
  let output = '';
  for (let index = 0; index < text.length; index += step) output += cutter.push(text.slice(index, index + step));
  return output + cutter.end();
}

describe('TableCutter', () => {
  const file = 'Date\t09/15/2023\r\nTime\t12:30:01 PM\r\n\r\nTime\tA1\r\n0:00:22\t0.1\r\n0:04:22\t0.2\r\n0:00:00\r\n0:00:00\r\nResults\r\n';
  it('drops the preamble and stops where the table ends, however the text arrives', () => {
    for (const step of [1, 3, 7, file.length]) {
      expect(cut(file, { headerLine: 4, tableEnd: true, delimiter: '\t' }, step)).toBe('Time\tA1\r\n0:00:22\t0.1\r\n0:04:22\t0.2\r\n');
    }
  });
  it('without a table end keeps every line from the header on, a last line without a line feed too', () => {
    expect(cut('sep=;\na;b\n1;2\nx', { headerLine: 2, tableEnd: false, delimiter: ';' }, 2)).toBe('a;b\n1;2\nx');
  });
});

describe('elapsed clock values', () => {
  it('reads H:MM:SS, D.HH:MM:SS and hours past a day', () => {
    expect(parseElapsedClock('0:04:22')).toBe(262_000);
    expect(parseElapsedClock('1.02:00:00')).toBe(26 * 3_600_000);
    expect(parseElapsedClock('66:35:00')).toBe((66 * 60 + 35) * 60_000);
    expect(parseElapsedClock('0:00:22.5')).toBe(22_500);
    expect(parseElapsedClock('12:61:00')).toBeNull();
    expect(parseElapsedClock('2021-01-01')).toBeNull();
  });
  it('an elapsed cell is a clock or a number in the unit', () => {
    expect(elapsedCellToEpochMs('0:00:22', 'hours', 1000)).toBe(23_000);
    expect(elapsedCellToEpochMs('1.5', 'hours', 0)).toBe(5_400_000);
    expect(elapsedCellToEpochMs('n/a', 'hours', 0)).toBeNull();
  });
});

describe('UTF-16 and binary files', () => {
  const utf16le = (text: string) => new Uint8Array([0xff, 0xfe, ...[...text].flatMap((c) => [c.charCodeAt(0) & 0xff, c.charCodeAt(0) >> 8])]);
  const utf16be = (text: string) => new Uint8Array([0xfe, 0xff, ...[...text].flatMap((c) => [c.charCodeAt(0) >> 8, c.charCodeAt(0) & 0xff])]);
  it('decodes UTF-16 by its byte-order mark, in chunks cut anywhere', () => {
    const text = 'Temperature(°C)\tμm\r\n1\t2\r\n';
    for (const bytes of [utf16le(text), utf16be(text)]) {
      expect(decodeCsvBytes(bytes).text).toBe(text);
      const decoder = new CsvTextDecoder();
      let streamed = '';
      for (let index = 0; index < bytes.length; index += 3) streamed += decoder.decode(bytes.subarray(index, index + 3));
      expect(streamed + decoder.end()).toBe(text);
    }
    expect(decodeCsvBytes(utf16be(text)).encoding).toBe('utf-16be');
  });
  it('a UTF-16 file is text; NUL bytes without its mark are not', () => {
    expect(sniffBinary(utf16le('a,b\n'))).toBeNull();
    expect(sniffBinary(new Uint8Array([0x61, 0x00, 0x2c, 0x00]))).toMatch(/^This file is not text/);
    expect(sniffBinary(new Uint8Array([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]))).toMatch(/old Excel workbook/);
    expect(sniffBinary(new TextEncoder().encode('time,°C\n1,2\n'))).toBeNull();
  });
});

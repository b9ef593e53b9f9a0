import { describe, expect, it } from 'vitest';
import { decodePointRows, NO_SOURCE_DETAILS, PointRowWriter, stampVersions, type ReadingSource } from './point-rows.ts';

function rowsOf(versionSeq: number): Uint8Array {
  const writer = new PointRowWriter(7, versionSeq, 64);
  const readings: Array<[number, number, number | null, ReadingSource]> = [
    [3, 1_700_000_000_000, 36.6, { micros: 456, quality: null, historical: false }],
    [3, 1_700_000_001_000, null, { micros: 0, quality: 0x80_32_00_00, historical: true }],
    [2 ** 40, -5_000, -0.25, { micros: 999, quality: 0, historical: false }],
    [9, 0, null, NO_SOURCE_DETAILS],
  ];
  readings.forEach(([instrumentId, ts, value, source], index) => writer.point(instrumentId, ts, value, index + 1, source));
  return writer.bytes.slice(0, writer.length);
}

describe('PointRowWriter', () => {
  it('writes each reading\'s microseconds, quality code and historical flag after its version, read back as written', () => {
    expect(decodePointRows(rowsOf(5)).map(({ ts, value, micros, quality, historical }) => ({ ts, value, micros, quality, historical }))).toEqual([
      { ts: 1_700_000_000_000, value: 36.6, micros: 456, quality: null, historical: false },
      { ts: 1_700_000_001_000, value: null, micros: 0, quality: 0x80_32_00_00, historical: true },
      { ts: -5_000, value: -0.25, micros: 999, quality: 0, historical: false },
      { ts: 0, value: null, micros: 0, quality: null, historical: false },
    ]);
  });
});

describe('stampVersions', () => {
  it('gives rows written without a version exactly the rows written with it, null values included', () => {
    for (const versionSeq of [1, 987_654, 2 ** 30 + 11, 900_000_000]) {
      const stamped = rowsOf(0);
      stampVersions(stamped, versionSeq);
      expect(Buffer.from(stamped).equals(Buffer.from(rowsOf(versionSeq)))).toBe(true);
      expect(decodePointRows(stamped).map((row) => row.version)).toEqual([1, 2, 3, 4].map((suffix) => (BigInt(versionSeq) * 10n ** 10n + BigInt(suffix)).toString()));
    }
  });

  it('stamps rows inside a larger buffer without touching the bytes around them', () => {
    const rows = rowsOf(0);
    const around = new Uint8Array(rows.length + 8).fill(0xab);
    around.set(rows, 4);
    stampVersions(around.subarray(4, 4 + rows.length), 42);
    expect(Buffer.from(around.subarray(4, 4 + rows.length)).equals(Buffer.from(rowsOf(42)))).toBe(true);
    expect([...around.subarray(0, 4), ...around.subarray(4 + rows.length)]).toEqual(Array(8).fill(0xab));
  });
});

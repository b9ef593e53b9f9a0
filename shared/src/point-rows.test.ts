import { describe, expect, it } from 'vitest';
import { decodePointRows, PointRowWriter, stampVersions } from './point-rows.ts';

function rowsOf(versionSeq: number): Uint8Array {
  const writer = new PointRowWriter(7, versionSeq, 64);
  const readings: Array<[number, number, number | null]> = [[3, 1_700_000_000_000, 36.6], [3, 1_700_000_001_000, null], [2 ** 40, -5_000, -0.25], [9, 0, null]];
  readings.forEach(([instrumentId, ts, value], index) => writer.point(instrumentId, ts, value, index + 1));
  return writer.bytes.slice(0, writer.length);
}

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

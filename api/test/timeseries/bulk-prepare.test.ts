/**
 * The bulk body scanner: the common shape is read by bytes, anything else by JSON.parse; both must
 * give the same answer and rows, and the slow path the exact messages of the schema's rules.
 */
import { describe, expect, it } from 'vitest';
import { decodePointRows } from '@bioprocess/shared/point-rows';
import { BULK_CHUNK_POINTS } from '@bioprocess/shared/timeseries';
import { pointVersion } from '@bioprocess/shared/ingest/versions';
import { prepareBulkPost, type BulkPreparation, type PreparedBulk } from '../../src/timeseries/bulk-prepare.ts';

const T0 = Date.UTC(2024, 0, 1);
const encode = (body: unknown) => new Uint8Array(Buffer.from(typeof body === 'string' ? body : JSON.stringify(body)));
const ok = (result: BulkPreparation): PreparedBulk => {
  if (!result.ok) throw new Error(result.error);
  return result;
};
const readings = (result: PreparedBulk) => JSON.parse(Buffer.from(result.readings).toString('utf8')) as unknown[];
/** Each chunk's rows as `organization instrument ts value version deleted` lines. */
const rows = (result: PreparedBulk) => result.chunks.map((chunk) => decodePointRows(chunk)
  .map((row) => `${row.organizationId} ${row.instrumentId} ${row.ts} ${row.value} ${row.version} ${row.isDeleted ? 1 : 0}`));
const VERSION = 77;

describe('prepareBulkPost', () => {
  const data = [
    { measured_at: T0, instrument_id: 7, float_value: 1.5 },
    { measured_at: new Date(T0 + 1000).toISOString(), instrument_id: 7, int_value: -3 },
    { ts: T0 + 2000, instrument_id: 8, value: null },
    { ts: T0 + 2500, instrument_id: 8, value: 2.5e-7 },
  ];

  it('reads the common shape into the answer, and rows with the version mark', () => {
    const result = ok(prepareBulkPost(encode({ data }), 42, VERSION));
    expect(readings(result)).toEqual([
      { ts: '2024-01-01T00:00:00.000Z', instrument_id: 7, value: 1.5 },
      { ts: '2024-01-01T00:00:01.000Z', instrument_id: 7, value: -3 },
      { ts: '2024-01-01T00:00:02.000Z', instrument_id: 8, value: null },
      { ts: '2024-01-01T00:00:02.500Z', instrument_id: 8, value: 2.5e-7 },
    ]);
    expect(rows(result)).toEqual([[
      `42 7 ${T0} 1.5 ${VERSION}0000000001 0`,
      `42 7 ${T0 + 1000} -3 ${VERSION}0000000002 0`,
      `42 8 ${T0 + 2000} null ${VERSION}0000000003 0`,
      `42 8 ${T0 + 2500} 2.5e-7 ${VERSION}0000000004 0`,
    ]]);
    expect(result).toMatchObject({ points: 4, instruments: [[7, 0], [8, 2]], startMs: T0, endMs: T0 + 2500 });
    // The versions are the worker's: point i of request v has pointVersion(v, i).
    expect(decodePointRows(result.chunks[0]!)[3]!.version).toBe(pointVersion(VERSION, 3));
  });

  it('writes no answer when none is wanted, and the same rows', () => {
    const echoed = ok(prepareBulkPost(encode({ data }), 42, VERSION));
    const minimal = ok(prepareBulkPost(encode({ data }), 42, VERSION, false));
    expect(minimal.readings).toHaveLength(0);
    expect(rows(minimal)).toEqual(rows(echoed));
    // The slow path (a shape the scanner leaves to JSON.parse) too.
    const spaced = encode(JSON.stringify({ data }, null, 1));
    const slow = ok(prepareBulkPost(spaced, 42, VERSION, false));
    expect(slow.readings).toHaveLength(0);
    expect(rows(slow)).toEqual(rows(echoed));
  });

  it('writes large ids, versions past 2^53 and timestamps before 1970 bit for bit', () => {
    const organization = 2 ** 40 + 3;
    const instrument = 2 ** 33 + 7;
    const versionSeq = 987_654_321;
    const stamps = [Date.UTC(1901, 0, 1), -1, 0, 2 ** 32, Date.UTC(2199, 11, 31, 23, 59, 59, 999)];
    const result = ok(prepareBulkPost(encode({ data: stamps.map((ts) => ({ ts, instrument_id: instrument, value: -0.5 })) }), organization, versionSeq));
    expect(decodePointRows(result.chunks[0]!)).toEqual(stamps.map((ts, index) => ({
      organizationId: organization, instrumentId: instrument, ts, value: -0.5, version: pointVersion(versionSeq, index), isDeleted: false,
      micros: 0, quality: null, historical: false,
    })));
  });

  it('stores every value as the double Number() reads from its text', () => {
    let seed = 11;
    const random = () => {
      seed = (seed * 16807) % 2147483647;
      return seed / 2147483647;
    };
    const texts: string[] = ['0', '-0', '0.1', '1.2600393', '2.776232', '15.633470', '-8.8982463382516537', '123456789012345', '1234567890123456789',
      '0.0000000000000000000001', '0.00000000000000000000000123', '9007199254740993', '1e21', '-2.5E-3', '5e-324', '1.7976931348623157e308'];
    for (let index = 0; index < 5000; index += 1) {
      const digits = 1 + Math.floor(random() * 18);
      let text = String(Math.floor(random() * 9) + 1);
      for (let digit = 1; digit < digits; digit += 1) text += Math.floor(random() * 10);
      const point = Math.floor(random() * (digits + 1));
      texts.push(`${random() < 0.3 ? '-' : ''}${point === 0 ? `0.${text}` : point >= digits ? text : `${text.slice(0, point)}.${text.slice(point)}`}`);
    }
    const body = `{"data":[${texts.map((text, index) => `{"ts":${T0 + index},"instrument_id":1,"value":${text}}`).join(',')}]}`;
    const result = ok(prepareBulkPost(encode(body), 1, VERSION));
    const stored = decodePointRows(result.chunks[0]!).map((row) => row.value);
    expect(stored.filter((value, index) => !Object.is(value, Number(texts[index])))).toEqual([]);
    expect(stored).toHaveLength(texts.length);
  });

  it('writes each point with its own instrument when posts interleave instruments', () => {
    const interleaved = [5, 6, 5, 123456, 6, 5].map((instrument_id, index) => ({ ts: T0 + index * 1000, instrument_id, value: index }));
    const result = ok(prepareBulkPost(encode({ data: interleaved }), 42, VERSION));
    expect((readings(result) as Array<{ instrument_id: number }>).map((reading) => reading.instrument_id)).toEqual([5, 6, 5, 123456, 6, 5]);
    expect(rows(result)[0]!.map((line) => line.split(' ').slice(0, 4).join(' ')))
      .toEqual(interleaved.map((point) => `42 ${point.instrument_id} ${point.ts} ${point.value}`));
    expect(result.instruments).toEqual([[5, 0], [6, 1], [123456, 3]]);
  });

  it('gives the same result through JSON.parse when the body leaves the common shape', () => {
    const common = ok(prepareBulkPost(encode({ data }), 42, VERSION));
    // An unknown key (ignored by the rules) and an instrument id as text send the body down the slow path.
    const unusual = ok(prepareBulkPost(encode({ data: data.map((point, index) => ({ ...point, note: 'x', instrument_id: String(point.instrument_id), index })) }), 42, VERSION));
    expect(readings(unusual)).toEqual(readings(common));
    expect(rows(unusual)).toEqual(rows(common));
    const spaced = ok(prepareBulkPost(encode(JSON.stringify({ data }, null, 2)), 42, VERSION));
    expect(rows(spaced)).toEqual(rows(common));
  });

  it('writes every timestamp of the answer as toISOString does, before 1970 too', () => {
    const stamps = [Date.UTC(1965, 4, 6, 7, 8, 9, 5), T0 - 1, T0 + 59_999, T0 + 60_000, T0 + 3_599_999, T0 + 86_400_000 * 400 + 12_345];
    const result = ok(prepareBulkPost(encode({ data: stamps.map((ts) => ({ ts, instrument_id: 3, value: 1 })) }), 1, VERSION));
    expect((readings(result) as Array<{ ts: string }>).map((reading) => reading.ts)).toEqual(stamps.map((ts) => new Date(ts).toISOString()));
  });

  it('reads ISO timestamps exactly as Date.parse does, in toISOString form or any other', () => {
    let seed = 7;
    const random = () => {
      seed = (seed * 16807) % 2147483647;
      return seed / 2147483647;
    };
    const stamps: string[] = [];
    for (let index = 0; index < 2000; index += 1) {
      const iso = new Date(Date.UTC(1900, 0, 1) + Math.floor(random() * (Date.UTC(2199, 11, 31) - Date.UTC(1900, 0, 1)))).toISOString();
      stamps.push(iso, `${iso.slice(0, 19)}Z`);
    }
    stamps.push(
      '2024-02-29T12:00:00Z', '2023-02-29T12:00:00Z', '2000-02-29T00:00:00.000Z', '1900-02-29T00:00:00Z', '2024-04-31T00:00:00Z',
      '2024-01-01T24:00:00Z', '2024-13-01T00:00:00Z', '2024-00-10T00:00:00Z', '2024-01-01T23:60:00Z', '2024-01-01T23:59:60Z',
      '1899-12-31T23:59:59.999Z', '1900-01-01T00:00:00.000Z', '2024-01-01T00:00:00.5Z', '2024-01-01T00:00:00.123456Z',
      '2024-01-01T00:00:00+02:00', '2024-01-01 00:00:00Z', '2024-01-01T00:00:00', '2024-1-01T00:00:00Z', '+002024-01-01T00:00:00Z',
      '0050-01-01T00:00:00Z', '2024-01-32T00:00:00Z', '2024-01-00T00:00:00Z',
    );
    const points = stamps.map((measured_at) => ({ measured_at, instrument_id: 1, value: 1 }));
    for (const [index, stamp] of stamps.entries()) {
      const expected = Date.parse(stamp);
      const result = prepareBulkPost(encode({ data: [points[index]] }), 1, VERSION);
      if (expected >= Date.UTC(1900, 0, 1) && expected <= Date.UTC(2200, 0, 1)) {
        expect(result.ok ? decodePointRows(result.chunks[0]!)[0]!.ts : result.error, stamp).toBe(expected);
      } else {
        expect(result.ok, stamp).toBe(false);
      }
    }
  });

  it('reads only the exact key names in the fast path: a near miss is an unknown key', () => {
    const misspelt = (key: string) => {
      const result = prepareBulkPost(encode(`{"data":[{"ts":${T0},"instrument_id":1,"${key}":2}]}`), 1, VERSION);
      return result.ok ? null : result.error;
    };
    for (const key of ['flaot_value', 'measured_on', 'vaiue', 'int_valve', 'instrument_ix', 'qualitx', 'historicai']) {
      expect(misspelt(key)).toBe('data.0: exactly one of int_value, float_value or value is required');
    }
  });

  it('keeps a point\'s microseconds, quality code and historical flag, the same through the scanner and JSON.parse', () => {
    const sourced = [
      { ts: '2021-05-02T07:12:51.123456Z', instrument_id: 7, value: 1.5, quality: 2_150_891_520, historical: true },
      { ts: '2021-05-02T07:12:51.124Z', instrument_id: 7, value: null, quality: 0 },
      { ts: '2021-05-02T09:12:52.0000019+02:00', instrument_id: 7, value: 2, historical: false },
      { ts: 1_619_939_573_000.25, instrument_id: 8, value: 3, quality: null },
      { measured_at: T0, instrument_id: 8, value: 4 },
    ];
    const expected = [
      { ts: Date.UTC(2021, 4, 2, 7, 12, 51, 123), micros: 456, quality: 2_150_891_520, historical: true },
      { ts: Date.UTC(2021, 4, 2, 7, 12, 51, 124), micros: 0, quality: 0, historical: false },
      { ts: Date.UTC(2021, 4, 2, 7, 12, 52, 0), micros: 1, quality: null, historical: false },
      { ts: 1_619_939_573_000, micros: 250, quality: null, historical: false },
      { ts: T0, micros: 0, quality: null, historical: false },
    ];
    const fast = ok(prepareBulkPost(encode({ data: sourced }), 42, VERSION));
    const slow = ok(prepareBulkPost(encode(JSON.stringify({ data: sourced }, null, 2)), 42, VERSION));
    const stored = (result: PreparedBulk) => decodePointRows(result.chunks[0]!).map(({ ts, micros, quality, historical }) => ({ ts, micros, quality, historical }));
    expect(stored(fast)).toEqual(expected);
    expect(stored(slow)).toEqual(expected);
    expect(Buffer.from(fast.readings).toString()).toBe(Buffer.from(slow.readings).toString());
    expect(readings(fast)).toEqual([
      { ts: '2021-05-02T07:12:51.123456Z', instrument_id: 7, value: 1.5, quality: 2_150_891_520, historical: true },
      { ts: '2021-05-02T07:12:51.124Z', instrument_id: 7, value: null, quality: 0 },
      { ts: '2021-05-02T07:12:52.000001Z', instrument_id: 7, value: 2 },
      { ts: '2021-05-02T07:12:53.000250Z', instrument_id: 8, value: 3 },
      { ts: '2024-01-01T00:00:00.000Z', instrument_id: 8, value: 4 },
    ]);
  });

  it('refuses a quality that is no 32-bit code and a historical flag that is no boolean, naming the index', () => {
    const error = (extra: string) => {
      const result = prepareBulkPost(encode(`{"data":[{"ts":${T0},"instrument_id":1,"value":2},{"ts":${T0},"instrument_id":1,"value":2,${extra}}]}`), 1, VERSION);
      return result.ok ? null : result.error;
    };
    const qualityMessage = 'data.1.quality: must be an integer from 0 to 4294967295, or null';
    expect(error('"quality":-1')).toBe(qualityMessage);
    expect(error('"quality":4294967296')).toBe(qualityMessage);
    expect(error('"quality":1.5')).toBe(qualityMessage);
    expect(error('"quality":"192"')).toBe(qualityMessage);
    expect(error('"historical":1')).toBe('data.1.historical: must be true or false');
    expect(error('"historical":"true"')).toBe('data.1.historical: must be true or false');
    expect(error('"historical":null')).toBe('data.1.historical: must be true or false');
    expect(error('"quality":4294967295,"historical":false')).toBeNull();
  });

  it('splits the rows into chunks', () => {
    const many = Array.from({ length: BULK_CHUNK_POINTS + 1 }, (_, index) => ({ measured_at: T0 + index * 10, instrument_id: 1, value: index % 7 === 0 ? null : index }));
    const result = ok(prepareBulkPost(encode({ data: many }), 1, VERSION));
    expect(rows(result).map((chunk) => chunk.length)).toEqual([BULK_CHUNK_POINTS, 1]);
    expect(rows(result).flat().map((line) => line.split(' ')[2])).toEqual(many.map((point) => String(point.measured_at)));
  });

  it('answers the rule that a bad post breaks, naming the first bad index', () => {
    const error = (body: unknown) => {
      const result = prepareBulkPost(encode(body), 1, VERSION);
      return result.ok ? null : result.error;
    };
    expect(error('{"data":[')).toBe('Body is not valid JSON');
    expect(error({ nodata: 1 })).toBe('data: must be a list of points');
    expect(error({ data: [] })).toBe('data: data must hold at least one point');
    expect(error({ data: [{ ts: T0, instrument_id: 1, value: 1 }, { ts: T0, instrument_id: 1, int_value: 1.5 }] })).toBe('data.1.int_value: must be an integer');
    expect(error('{"data":[{"ts":0,"instrument_id":1,"value":1e999}]}')).toBe('data.0.value: must be a finite number or null');
    expect(error({ data: [{ ts: 'soon', instrument_id: 1, value: 1 }] })).toBe('data.0.measured_at: Invalid date format.');
    expect(error({ data: [{ ts: T0, instrument_id: 0, value: 1 }] })).toBe('data.0.instrument_id: must be a positive integer');
    expect(error({ data: [{ ts: T0, instrument_id: 1, value: 1, float_value: 2 }] })).toBe('data.0: exactly one of int_value, float_value or value is required');
  });
});

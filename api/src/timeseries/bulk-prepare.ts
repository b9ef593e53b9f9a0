/**
 * Prepares a bulk post for the queue, on a worker thread (bulk-thread.ts): parses and validates the
 * body, and writes the answer (the accepted readings as JSON), the ClickHouse rows of each chunk
 * (shared/src/point-rows.ts) and the post's per-minute figures (shared/src/minute-figures.ts) as bytes.
 * Posts carry up to about a million points, so the common shape of a feed's body is read by a byte
 * scanner that echoes each value's own text in the answer (no object per point, no number-to-text
 * conversion); anything else (other whitespace is fine; escapes, unknown keys, bad values) goes
 * through JSON.parse and validateBulkPoints, which name the first bad index exactly as before.
 *
 * Point i of the post gets version versionSeq * 10^10 + i + 1 (shared/src/ingest/versions.ts), so a
 * later point of the same key wins.
 */
import { BULK_CHUNK_POINTS, MAX_TIMESTAMP_MS, MIN_TIMESTAMP_MS, parseTimestampInput } from '@bioprocess/shared/timeseries';
import { AsciiBuffer } from '@bioprocess/shared/ascii-buffer';
import { MinuteFiguresBuilder } from '@bioprocess/shared/minute-figures';
import { MAX_POINT_ROW_BYTES, PointRowWriter } from '@bioprocess/shared/point-rows';
import { HttpError } from '../platform/http-error.ts';
import { validateBulkPoints } from './bulk.ts';

// Module-local copies: the TypeScript loader turns imported bindings into getter calls, which cost
// measurably when read once per point.
const CHUNK_POINTS = BULK_CHUNK_POINTS;
const MIN_TS = MIN_TIMESTAMP_MS;
const MAX_TS = MAX_TIMESTAMP_MS;

export interface PreparedBulk {
  ok: true;
  points: number;
  /** The answer: `[{"ts":"…","instrument_id":…,"value":…},…]`. */
  readings: Uint8Array;
  /** ClickHouse rows (RowBinary) per chunk of BULK_CHUNK_POINTS points. */
  chunks: Uint8Array[];
  /** Per-minute figures of each instrument; null unless `increasing` (a key seen twice would be counted twice). */
  minuteFigures: Uint8Array | null;
  /** Each instrument with the index of its first point (to name a foreign instrument's first index). */
  instruments: Array<[instrumentId: number, firstIndex: number]>;
  startMs: number;
  endMs: number;
  /** Timestamps strictly increase per instrument: no key appears twice in the post. */
  increasing: boolean;
}

export type BulkPreparation = PreparedBulk | { ok: false; error: string };

const ascii = (text: string) => new Uint8Array(Buffer.from(text, 'latin1'));
const NULL_JSON = ascii('null');

/** A point's value (null for a JSON null) and, when the body wrote it as a plain decimal, that text at [start, end). */
interface ValueRef {
  source: Uint8Array | null;
  start: number;
  end: number;
  number: number | null;
}

/** One instrument of the post: the answer's text around its id, and its last timestamp and open minute. */
class InstrumentState {
  /** `","instrument_id":<id>,"value":` */
  readonly reading: Uint8Array;
  lastTs = Number.NEGATIVE_INFINITY;
  minute = Number.NaN;
  points = 0;
  count = 0;
  sum = 0;
  min = Number.POSITIVE_INFINITY;
  max = Number.NEGATIVE_INFINITY;

  constructor(readonly instrumentId: number) {
    this.reading = ascii(`","instrument_id":${instrumentId},"value":`);
  }

  /** Hands the open minute to `figures` and starts `minute`. */
  closeMinute(figures: MinuteFiguresBuilder, minute: number): void {
    if (this.points > 0) figures.add(this.instrumentId, this.minute, this.points, this.count, this.sum, this.min, this.max);
    this.minute = minute;
    this.points = 0;
    this.count = 0;
    this.sum = 0;
    this.min = Number.POSITIVE_INFINITY;
    this.max = Number.NEGATIVE_INFINITY;
  }
}

/** Writes the answer, the rows and the minute figures; points arrive in post order. */
class BulkWriter {
  readonly readings: AsciiBuffer;
  readonly rows: PointRowWriter;
  private readonly figures = new MinuteFiguresBuilder();
  private readonly chunkEnds: number[] = [];
  private count = 0;
  private minuteStart = Number.NaN;
  /** `{"ts":"YYYY-MM-DDTHH:MM:` of the current minute. */
  private minuteText: Uint8Array = new Uint8Array(0);
  readonly firstIndex = new Map<number, number>();
  private readonly instruments = new Map<number, InstrumentState>();
  /** Feeds post runs of one instrument: its state is kept at hand until another comes. */
  private current: InstrumentState | null = null;
  increasing = true;
  startMs = Number.POSITIVE_INFINITY;
  endMs = Number.NEGATIVE_INFINITY;

  constructor(organizationId: number, versionSeq: number, bodyBytes: number) {
    this.readings = new AsciiBuffer(bodyBytes * 1.2);
    // The common body spends about 70 bytes per point; a row takes at most MAX_POINT_ROW_BYTES.
    this.rows = new PointRowWriter(organizationId, versionSeq, (bodyBytes / 70) * MAX_POINT_ROW_BYTES);
    this.readings.byte(0x5b /* [ */);
  }

  add(instrumentId: number, ts: number, value: ValueRef): void {
    const index = this.count;
    this.count += 1;
    let state = this.current;
    if (state === null || instrumentId !== state.instrumentId) state = this.switchInstrument(instrumentId, index);
    if (ts <= state.lastTs) this.increasing = false;
    state.lastTs = ts;
    if (ts < this.startMs) this.startMs = ts;
    if (ts > this.endMs) this.endMs = ts;

    const number = value.number;
    let valueText: Uint8Array;
    let valueStart = 0;
    let valueEnd: number;
    if (number === null) {
      valueText = NULL_JSON;
      valueEnd = NULL_JSON.length;
    } else if (value.source !== null) {
      valueText = value.source;
      valueStart = value.start;
      valueEnd = value.end;
    } else {
      valueText = ascii(String(number));
      valueEnd = valueText.length;
    }

    // The reading: `,{"ts":"…","instrument_id":…,"value":…}`.
    const readings = this.readings;
    if (index > 0) readings.byte(0x2c); // ,
    this.writeIso(ts);
    readings.all(state.reading);
    readings.copy(valueText, valueStart, valueEnd);
    readings.byte(0x7d); // }

    this.rows.point(instrumentId, ts, number, index + 1);
    if (this.count % CHUNK_POINTS === 0) this.chunkEnds.push(this.rows.length);

    // writeIso left the reading's minute in minuteStart.
    if (this.minuteStart !== state.minute) state.closeMinute(this.figures, this.minuteStart);
    state.points += 1;
    if (number !== null) {
      state.count += 1;
      state.sum += number;
      if (number < state.min) state.min = number;
      if (number > state.max) state.max = number;
    }
  }

  private switchInstrument(instrumentId: number, index: number): InstrumentState {
    let state = this.instruments.get(instrumentId);
    if (!state) {
      state = new InstrumentState(instrumentId);
      this.instruments.set(instrumentId, state);
      this.firstIndex.set(instrumentId, index);
    }
    this.current = state;
    return state;
  }

  /** Writes `{"ts":"YYYY-MM-DDTHH:MM:SS.mmmZ`. */
  private writeIso(ts: number): void {
    let offset = ts - this.minuteStart;
    if (!(offset >= 0 && offset < 60_000)) {
      this.minuteStart = ts - (((ts % 60_000) + 60_000) % 60_000);
      this.minuteText = ascii(`{"ts":"${new Date(this.minuteStart).toISOString().slice(0, 17)}`);
      offset = ts - this.minuteStart;
    }
    const readings = this.readings;
    readings.all(this.minuteText);
    readings.reserve(7);
    const bytes = readings.bytes;
    let position = readings.length;
    const seconds = Math.floor(offset / 1000);
    const millis = offset % 1000;
    bytes[position++] = 0x30 + Math.floor(seconds / 10);
    bytes[position++] = 0x30 + (seconds % 10);
    bytes[position++] = 0x2e; // .
    bytes[position++] = 0x30 + Math.floor(millis / 100);
    bytes[position++] = 0x30 + (Math.floor(millis / 10) % 10);
    bytes[position++] = 0x30 + (millis % 10);
    bytes[position++] = 0x5a; // Z
    readings.length = position;
  }

  finish(): PreparedBulk {
    this.readings.byte(0x5d /* ] */);
    if (this.chunkEnds.at(-1) !== this.rows.length) this.chunkEnds.push(this.rows.length);
    // Views, not copies: the thread moves the buffers to the api's thread as they are.
    const chunks: Uint8Array[] = [];
    let start = 0;
    for (const end of this.chunkEnds) {
      chunks.push(this.rows.bytes.subarray(start, end));
      start = end;
    }
    for (const state of this.instruments.values()) state.closeMinute(this.figures, Number.NaN);
    return {
      ok: true,
      points: this.count,
      readings: this.readings.contents(),
      chunks,
      minuteFigures: this.increasing ? this.figures.encode() : null,
      instruments: [...this.firstIndex],
      startMs: this.startMs,
      endMs: this.endMs,
      increasing: this.increasing,
    };
  }
}

const latin1Of = (bytes: Uint8Array, start: number, end: number) => Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString('latin1');

/** 10^0 .. 10^22, each exactly a double. */
const POWERS_OF_TEN = Array.from({ length: 23 }, (_, exponent) => Number(`1e${exponent}`));

/**
 * The double of a JSON number's text, as Number() reads it. A plain decimal of at most 15 significant
 * digits and 22 decimals is read with integer arithmetic: its digits and 10^decimals are exact doubles,
 * so their quotient is the correctly rounded value; anything else goes to Number().
 */
function numberAt(bytes: Uint8Array, start: number, end: number): number {
  let index = start;
  const negative = bytes[index] === 0x2d;
  if (negative) index += 1;
  let digits = 0;
  let significant = 0;
  let decimals = -1;
  for (; index < end; index += 1) {
    const code = bytes[index]!;
    if (code === 0x2e) {
      decimals = 0;
      continue;
    }
    const digit = code - 0x30;
    if (digit < 0 || digit > 9) return Number(latin1Of(bytes, start, end));
    if (significant > 0 || digit !== 0) significant += 1;
    digits = digits * 10 + digit;
    if (decimals >= 0) decimals += 1;
  }
  if (significant > 15 || decimals > 22) return Number(latin1Of(bytes, start, end));
  const magnitude = decimals > 0 ? digits / POWERS_OF_TEN[decimals]! : digits;
  return negative ? -magnitude : magnitude;
}

/** The unsigned decimal of `count` digits at `start`, or -1 when one is not a digit. */
function decimalAt(bytes: Uint8Array, start: number, count: number): number {
  let value = 0;
  for (let index = start; index < start + count; index += 1) {
    const digit = bytes[index]! - 0x30;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}

/** Thrown by the scanner when the body is not in the common shape: the slow path decides. */
class NotCommonShape extends Error {}
const notCommon = new NotCommonShape();

const KEY_MEASURED_AT = 1;
const KEY_TS = 2;
const KEY_INSTRUMENT = 3;
const KEY_INT_VALUE = 4;
const KEY_FLOAT_VALUE = 5;
const KEY_VALUE = 6;
/** The key names' bytes, indexed by key. */
const KEY_NAMES: Uint8Array[] = ['', 'measured_at', 'ts', 'instrument_id', 'int_value', 'float_value', 'value'].map((name) => Buffer.from(name, 'latin1'));
const DATA_KEY = Buffer.from('"data"', 'latin1');

/** Reads `{"data":[{…},…]}` with keys among KEYS, numbers, plain strings and null; throws NotCommonShape otherwise. */
class BodyScanner {
  private position = 0;
  private readonly length: number;
  /** The last number token: [start, end), and whether it is an integer without fraction or exponent. */
  private tokenStart = 0;
  private tokenEnd = 0;
  private tokenInteger = false;
  /** The last number token has no exponent: an optional minus, digits and at most one decimal point. */
  private tokenPlain = false;
  private readonly value: ValueRef = { source: null, start: 0, end: 0, number: null };

  constructor(private readonly body: Uint8Array, private readonly writer: BulkWriter) {
    this.length = body.length;
  }

  private skipWhitespace(): void {
    const body = this.body;
    let position = this.position;
    while (position < this.length) {
      const code = body[position]!;
      if (code !== 0x20 && code !== 0x0a && code !== 0x0d && code !== 0x09) break;
      position += 1;
    }
    this.position = position;
  }

  private expect(code: number): void {
    this.skipWhitespace();
    if (this.body[this.position] !== code) throw notCommon;
    this.position += 1;
  }

  /** Reads a JSON number token at the position. */
  private number(): void {
    const body = this.body;
    const length = this.length;
    let index = this.position;
    this.tokenStart = index;
    if (body[index] === 0x2d) index += 1;
    const digitsStart = index;
    while (index < length && body[index]! >= 0x30 && body[index]! <= 0x39) index += 1;
    if (index === digitsStart || (body[digitsStart] === 0x30 && index - digitsStart > 1)) throw notCommon;
    this.tokenInteger = true;
    if (body[index] === 0x2e) {
      this.tokenInteger = false;
      index += 1;
      const fractionStart = index;
      while (index < length && body[index]! >= 0x30 && body[index]! <= 0x39) index += 1;
      if (index === fractionStart) throw notCommon;
    }
    this.tokenPlain = true;
    if (body[index] === 0x65 || body[index] === 0x45) {
      this.tokenInteger = false;
      this.tokenPlain = false;
      index += 1;
      if (body[index] === 0x2b || body[index] === 0x2d) index += 1;
      const exponentStart = index;
      while (index < length && body[index]! >= 0x30 && body[index]! <= 0x39) index += 1;
      if (index === exponentStart) throw notCommon;
    }
    this.tokenEnd = index;
    this.position = index;
  }

  /** The last token as an integer (it must be one, of at most 15 digits). */
  private tokenAsInteger(): number {
    const body = this.body;
    let index = this.tokenStart;
    const negative = body[index] === 0x2d;
    if (negative) index += 1;
    if (!this.tokenInteger || this.tokenEnd - index > 15) throw notCommon;
    let value = 0;
    for (; index < this.tokenEnd; index += 1) value = value * 10 + (body[index]! - 0x30);
    return negative ? -value : value;
  }

  private key(): number {
    this.expect(0x22);
    const body = this.body;
    const start = this.position;
    let position = start;
    while (position < this.length && body[position] !== 0x22) {
      if (body[position] === 0x5c) throw notCommon;
      position += 1;
    }
    this.position = position + 1;
    const keyLength = position - start;
    // Told apart by length and first letter, then compared in full.
    let key: number;
    switch (keyLength) {
      case 2: key = KEY_TS; break;
      case 5: key = KEY_VALUE; break;
      case 9: key = KEY_INT_VALUE; break;
      case 11: key = body[start] === 0x6d /* m */ ? KEY_MEASURED_AT : KEY_FLOAT_VALUE; break;
      case 13: key = KEY_INSTRUMENT; break;
      default: throw notCommon;
    }
    const name = KEY_NAMES[key]!;
    for (let index = 0; index < keyLength; index += 1) if (body[start + index] !== name[index]) throw notCommon;
    return key;
  }

  /**
   * The string at the position when it is in toISOString's form, `YYYY-MM-DDTHH:MM:SS[.fff]Z` with a
   * year from 1900, read from its bytes (feeds send one per point) to what Date.parse answers (a day
   * past the month's end rolls over in both); the position then moves past it. NaN, with the position
   * unchanged, for any other text, which Date.parse then reads.
   */
  private isoUtcTimestamp(): number {
    const body = this.body;
    const start = this.position + 1;
    const length = body[start + 19] === 0x5a ? 20 : body[start + 23] === 0x5a ? 24 : 0;
    if (length === 0 || body[start + length] !== 0x22) return Number.NaN;
    if (body[start + 4] !== 0x2d || body[start + 7] !== 0x2d || body[start + 10] !== 0x54 || body[start + 13] !== 0x3a || body[start + 16] !== 0x3a) return Number.NaN;
    if (length === 24 && body[start + 19] !== 0x2e) return Number.NaN;
    const year = decimalAt(body, start, 4);
    const month = decimalAt(body, start + 5, 2);
    const day = decimalAt(body, start + 8, 2);
    const hour = decimalAt(body, start + 11, 2);
    const minute = decimalAt(body, start + 14, 2);
    const second = decimalAt(body, start + 17, 2);
    const millis = length === 24 ? decimalAt(body, start + 20, 3) : 0;
    if (year < 1900 || month < 1 || month > 12 || day < 1 || day > 31
      || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59 || millis < 0) return Number.NaN;
    this.position = start + length + 1;
    return Date.UTC(year, month - 1, day, hour, minute, second, millis);
  }

  /** A string value without escapes, as latin1 text (non-ASCII leaves it to the slow path). */
  private plainString(): string {
    const body = this.body;
    const start = this.position + 1;
    let end = start;
    while (end < this.length && body[end] !== 0x22) {
      if (body[end] === 0x5c || body[end]! >= 0x80) throw notCommon;
      end += 1;
    }
    this.position = end + 1;
    return latin1Of(body, start, end);
  }

  scan(): void {
    const body = this.body;
    this.expect(0x7b);
    this.skipWhitespace();
    for (let index = 0; index < DATA_KEY.length; index += 1) if (body[this.position + index] !== DATA_KEY[index]) throw notCommon;
    this.position += DATA_KEY.length;
    this.expect(0x3a);
    this.expect(0x5b);
    this.skipWhitespace();
    if (body[this.position] === 0x5d) throw notCommon; // empty: the slow path has the message
    for (;;) {
      this.point();
      this.skipWhitespace();
      const code = body[this.position];
      this.position += 1;
      if (code === 0x2c) continue;
      if (code === 0x5d) break;
      throw notCommon;
    }
    this.expect(0x7d);
    this.skipWhitespace();
    if (this.position !== this.length) throw notCommon;
  }

  private point(): void {
    const body = this.body;
    this.expect(0x7b);
    let instrumentId = -1;
    let ts = Number.NaN;
    let seen = 0;
    let valueKey = 0;
    const value = this.value;
    value.source = null;
    value.number = null;
    for (;;) {
      const key = this.key();
      if (seen & (1 << key)) throw notCommon;
      seen |= 1 << key;
      this.expect(0x3a);
      this.skipWhitespace();
      const code = body[this.position];
      if (key === KEY_INSTRUMENT) {
        this.number();
        instrumentId = this.tokenAsInteger();
        if (instrumentId <= 0) throw notCommon;
      } else if (key === KEY_MEASURED_AT || key === KEY_TS) {
        if (seen & (1 << KEY_MEASURED_AT) && seen & (1 << KEY_TS)) throw notCommon;
        if (code === 0x22) {
          ts = this.isoUtcTimestamp();
          if (Number.isNaN(ts)) ts = parseTimestampInput(this.plainString());
        } else {
          this.number();
          if (this.tokenInteger) {
            ts = this.tokenAsInteger();
          } else {
            ts = parseTimestampInput(Number(latin1Of(body, this.tokenStart, this.tokenEnd)));
          }
        }
        if (!(ts >= MIN_TS && ts <= MAX_TS)) throw notCommon;
      } else {
        if (valueKey !== 0) throw notCommon;
        valueKey = key;
        if (code === 0x6e /* n */) {
          if (body[this.position + 1] !== 0x75 || body[this.position + 2] !== 0x6c || body[this.position + 3] !== 0x6c) throw notCommon;
          this.position += 4;
        } else {
          this.number();
          // A plain decimal is echoed in the answer as written; any other form as the number's text.
          value.source = this.tokenPlain ? body : null;
          value.start = this.tokenStart;
          value.end = this.tokenEnd;
          const number = numberAt(body, this.tokenStart, this.tokenEnd);
          if (!Number.isFinite(number) || (key === KEY_INT_VALUE && !Number.isInteger(number))) throw notCommon;
          value.number = number;
        }
      }
      this.skipWhitespace();
      const next = body[this.position];
      this.position += 1;
      if (next === 0x2c) continue;
      if (next === 0x7d) break;
      throw notCommon;
    }
    if (instrumentId < 0 || Number.isNaN(ts) || valueKey === 0) throw notCommon;
    this.writer.add(instrumentId, ts, value);
  }
}

/** Parses, validates and writes a post; a bad post answers the 400 message naming its first bad index. */
export function prepareBulkPost(body: Uint8Array, organizationId: number, versionSeq: number): BulkPreparation {
  try {
    const fast = new BulkWriter(organizationId, versionSeq, body.length);
    new BodyScanner(body, fast).scan();
    return fast.finish();
  } catch (error) {
    if (!(error instanceof NotCommonShape)) throw error;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.length).toString('utf8'));
  } catch {
    return { ok: false, error: 'Body is not valid JSON' };
  }
  if (typeof parsed !== 'object' || parsed === null || !('data' in parsed)) return { ok: false, error: 'data: must be a list of points' };
  try {
    const points = validateBulkPoints(parsed.data);
    const writer = new BulkWriter(organizationId, versionSeq, body.length);
    for (const [instrumentId, ts, value] of points) writer.add(instrumentId, ts, { source: null, start: 0, end: 0, number: value });
    return writer.finish();
  } catch (error) {
    if (error instanceof HttpError) return { ok: false, error: error.message };
    throw error;
  }
}

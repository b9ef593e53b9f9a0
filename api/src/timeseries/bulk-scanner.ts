/**
 * The byte scanner of a bulk post's common shape, `{"data":[{…},…]}` with the known keys, numbers,
 * plain strings and null: it hands each point to the BulkWriter without creating an object per point
 * and throws NotCommonShape at anything else (escapes, unknown keys, bad values), for the slow path.
 * Numbers are read here too: a plain decimal with integer arithmetic, anything else with Number().
 */
import { BULK_QUALITY_MAX, MAX_TIMESTAMP_MS, MIN_TIMESTAMP_MS, parseTimestampInputMicros } from '@bioprocess/shared/timeseries';
import type { ReadingSource } from '@bioprocess/shared/point-rows';
import type { BulkWriter, ValueRef } from './bulk-writer.ts';

// Module-local copies: the TypeScript loader turns imported bindings into getter calls, which cost
// measurably when read once per point.
const MIN_TS = MIN_TIMESTAMP_MS;
const MAX_TS = MAX_TIMESTAMP_MS;
const QUALITY_MAX = BULK_QUALITY_MAX;

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
export class NotCommonShape extends Error {}
const notCommon = new NotCommonShape();

const KEY_MEASURED_AT = 1;
const KEY_TS = 2;
const KEY_INSTRUMENT = 3;
const KEY_INT_VALUE = 4;
const KEY_FLOAT_VALUE = 5;
const KEY_VALUE = 6;
const KEY_QUALITY = 7;
const KEY_HISTORICAL = 8;
/** The key names' bytes, indexed by key. */
const KEY_NAMES: Uint8Array[] = ['', 'measured_at', 'ts', 'instrument_id', 'int_value', 'float_value', 'value', 'quality', 'historical']
  .map((name) => Buffer.from(name, 'latin1'));
const TRUE = Buffer.from('true', 'latin1');
const NULL_LITERAL = Buffer.from('null', 'latin1');
const FALSE = Buffer.from('false', 'latin1');
const DATA_KEY = Buffer.from('"data"', 'latin1');

/** Reads `{"data":[{…},…]}` with keys among KEYS, numbers, plain strings and null; throws NotCommonShape otherwise. */
export class BodyScanner {
  private position = 0;
  private readonly length: number;
  /** The last number token: [start, end), and whether it is an integer without fraction or exponent. */
  private tokenStart = 0;
  private tokenEnd = 0;
  private tokenInteger = false;
  /** The last number token has no exponent: an optional minus, digits and at most one decimal point. */
  private tokenPlain = false;
  private readonly value: ValueRef = { source: null, start: 0, end: 0, number: null };
  /** The point's microseconds, quality and historical flag: one object, refilled per point (the writer copies it). */
  private readonly source: ReadingSource = { micros: 0, quality: null, historical: false };
  /** The microseconds of the last timestamp read. */
  private micros = 0;

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
      case 7: key = KEY_QUALITY; break;
      case 9: key = KEY_INT_VALUE; break;
      case 10: key = KEY_HISTORICAL; break;
      case 11: key = body[start] === 0x6d /* m */ ? KEY_MEASURED_AT : KEY_FLOAT_VALUE; break;
      case 13: key = KEY_INSTRUMENT; break;
      default: throw notCommon;
    }
    const name = KEY_NAMES[key]!;
    for (let index = 0; index < keyLength; index += 1) if (body[start + index] !== name[index]) throw notCommon;
    return key;
  }

  /**
   * The string at the position when it is in toISOString's form, `YYYY-MM-DDTHH:MM:SS[.fff[fff]]Z` with
   * a year from 1900, read from its bytes (feeds send one per point) to what Date.parse answers (a day
   * past the month's end rolls over in both), its microseconds to `micros`; the position then moves
   * past it. NaN, with the position unchanged, for any other text, which Date.parse then reads.
   */
  private isoUtcTimestamp(): number {
    const body = this.body;
    const start = this.position + 1;
    const length = body[start + 19] === 0x5a ? 20 : body[start + 23] === 0x5a ? 24 : body[start + 26] === 0x5a ? 27 : 0;
    if (length === 0 || body[start + length] !== 0x22) return Number.NaN;
    if (body[start + 4] !== 0x2d || body[start + 7] !== 0x2d || body[start + 10] !== 0x54 || body[start + 13] !== 0x3a || body[start + 16] !== 0x3a) return Number.NaN;
    if (length > 20 && body[start + 19] !== 0x2e) return Number.NaN;
    const year = decimalAt(body, start, 4);
    const month = decimalAt(body, start + 5, 2);
    const day = decimalAt(body, start + 8, 2);
    const hour = decimalAt(body, start + 11, 2);
    const minute = decimalAt(body, start + 14, 2);
    const second = decimalAt(body, start + 17, 2);
    const millis = length > 20 ? decimalAt(body, start + 20, 3) : 0;
    const micros = length === 27 ? decimalAt(body, start + 23, 3) : 0;
    if (year < 1900 || month < 1 || month > 12 || day < 1 || day > 31
      || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59 || millis < 0 || micros < 0) return Number.NaN;
    this.position = start + length + 1;
    this.micros = micros;
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
    const source = this.source;
    source.quality = null;
    source.historical = false;
    this.micros = 0;
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
          if (Number.isNaN(ts)) ts = this.preciseTimestamp(this.plainString());
        } else {
          this.number();
          if (this.tokenInteger) {
            ts = this.tokenAsInteger();
            this.micros = 0;
          } else {
            ts = this.preciseTimestamp(Number(latin1Of(body, this.tokenStart, this.tokenEnd)));
          }
        }
        if (!(ts >= MIN_TS && ts <= MAX_TS)) throw notCommon;
      } else if (key === KEY_QUALITY) {
        if (code === 0x6e /* n */) {
          this.literal(NULL_LITERAL);
        } else {
          this.number();
          const quality = this.tokenAsInteger();
          if (quality < 0 || quality > QUALITY_MAX) throw notCommon;
          source.quality = quality;
        }
      } else if (key === KEY_HISTORICAL) {
        if (code === 0x74 /* t */) {
          this.literal(TRUE);
          source.historical = true;
        } else {
          this.literal(FALSE);
        }
      } else {
        if (valueKey !== 0) throw notCommon;
        valueKey = key;
        if (code === 0x6e /* n */) {
          this.literal(NULL_LITERAL);
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
    source.micros = this.micros;
    this.writer.add(instrumentId, ts, value, source);
  }

  /** A timestamp in any form parseTimestampInputMicros reads (the one the slow path uses); its microseconds to `micros`. */
  private preciseTimestamp(input: string | number): number {
    const { ms, micros } = parseTimestampInputMicros(input);
    this.micros = micros;
    return ms;
  }

  /** Moves past `word` (true, false, null) at the position. */
  private literal(word: Uint8Array): void {
    const body = this.body;
    for (let index = 0; index < word.length; index += 1) if (body[this.position + index] !== word[index]) throw notCommon;
    this.position += word.length;
  }
}


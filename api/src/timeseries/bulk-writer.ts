/**
 * The encoder of a bulk post: from points in post order, the answer (the accepted readings as JSON,
 * echoing each value's own text when the body gave one) and the ClickHouse rows of each chunk
 * (shared/src/point-rows.ts), which the ingest-worker inserts.
 * Point i of the post gets version versionSeq * 10^10 + i + 1 (shared/src/ingest/versions.ts), so a
 * later point of the same key wins.
 */
import { BULK_CHUNK_POINTS } from '@bioprocess/shared/timeseries';
import { AsciiBuffer } from '@bioprocess/shared/ascii-buffer';
import { MAX_POINT_ROW_BYTES, NO_SOURCE_DETAILS, PointRowWriter, type ReadingSource } from '@bioprocess/shared/point-rows';

// Module-local copies: the TypeScript loader turns imported bindings into getter calls, which cost
// measurably when read once per point.
const CHUNK_POINTS = BULK_CHUNK_POINTS;

export interface PreparedBulk {
  ok: true;
  points: number;
  /**
   * The answer: `[{"ts":"…","instrument_id":…,"value":…},…]` (empty when no echo was asked for); `ts`
   * with six fraction digits when the point had microseconds, and `"quality"` and `"historical":true`
   * on the points that gave them.
   */
  readings: Uint8Array;
  /** ClickHouse rows (RowBinary) per chunk of BULK_CHUNK_POINTS points. */
  chunks: Uint8Array[];
  /** Each instrument with the index of its first point (to name a foreign instrument's first index). */
  instruments: Array<[instrumentId: number, firstIndex: number]>;
  startMs: number;
  endMs: number;
}

export type BulkPreparation = PreparedBulk | { ok: false; error: string };

const ascii = (text: string) => new Uint8Array(Buffer.from(text, 'latin1'));
const NULL_JSON = ascii('null');
const HISTORICAL_JSON = ascii(',"historical":true');

/** A point's value (null for a JSON null) and, when the body wrote it as a plain decimal, that text at [start, end). */
export interface ValueRef {
  source: Uint8Array | null;
  start: number;
  end: number;
  number: number | null;
}

/** One instrument of the post: the answer's text around its id. */
class InstrumentState {
  /** `","instrument_id":<id>,"value":` */
  readonly reading: Uint8Array;

  constructor(readonly instrumentId: number) {
    this.reading = ascii(`","instrument_id":${instrumentId},"value":`);
  }
}

/** Writes the answer and the rows; points arrive in post order. */
export class BulkWriter {
  readonly readings: AsciiBuffer;
  readonly rows: PointRowWriter;
  private readonly chunkEnds: number[] = [];
  private count = 0;
  private minuteStart = Number.NaN;
  /** `{"ts":"YYYY-MM-DDTHH:MM:` of the current minute. */
  private minuteText: Uint8Array = new Uint8Array(0);
  readonly firstIndex = new Map<number, number>();
  private readonly instruments = new Map<number, InstrumentState>();
  /** Feeds post runs of one instrument: its state is kept at hand until another comes. */
  private current: InstrumentState | null = null;
  startMs = Number.POSITIVE_INFINITY;
  endMs = Number.NEGATIVE_INFINITY;

  /** `echo`: write the answer (the accepted readings); a client that asked for a minimal answer gets none. */
  constructor(organizationId: number, versionSeq: number, bodyBytes: number, private readonly echo = true) {
    this.readings = new AsciiBuffer(echo ? bodyBytes * 1.2 : 2);
    // The common body spends about 70 bytes per point; a row takes at most MAX_POINT_ROW_BYTES.
    this.rows = new PointRowWriter(organizationId, versionSeq, (bodyBytes / 70) * MAX_POINT_ROW_BYTES);
    if (echo) this.readings.byte(0x5b /* [ */);
  }

  add(instrumentId: number, ts: number, value: ValueRef, source: ReadingSource = NO_SOURCE_DETAILS): void {
    const index = this.count;
    this.count += 1;
    let state = this.current;
    if (state === null || instrumentId !== state.instrumentId) state = this.switchInstrument(instrumentId, index);
    if (ts < this.startMs) this.startMs = ts;
    if (ts > this.endMs) this.endMs = ts;

    const number = value.number;
    const offset = this.offsetInMinute(ts);
    if (this.echo) {
      let valueText: Uint8Array = NULL_JSON;
      let valueStart = 0;
      let valueEnd = NULL_JSON.length;
      if (number !== null && value.source !== null) {
        valueText = value.source;
        valueStart = value.start;
        valueEnd = value.end;
      } else if (number !== null) {
        valueText = ascii(String(number));
        valueEnd = valueText.length;
      }
      // The reading: `,{"ts":"…","instrument_id":…,"value":…}`.
      const readings = this.readings;
      if (index > 0) readings.byte(0x2c); // ,
      this.writeIso(offset, source.micros);
      readings.all(state.reading);
      readings.copy(valueText, valueStart, valueEnd);
      if (source.quality !== null) readings.all(ascii(`,"quality":${source.quality}`));
      if (source.historical) readings.all(HISTORICAL_JSON);
      readings.byte(0x7d); // }
    }

    this.rows.point(instrumentId, ts, number, index + 1, source);
    if (this.count % CHUNK_POINTS === 0) this.chunkEnds.push(this.rows.length);
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

  /** The time's offset in its minute; moves minuteStart (and the minute's text, when echoing) to its minute. */
  private offsetInMinute(ts: number): number {
    let offset = ts - this.minuteStart;
    if (!(offset >= 0 && offset < 60_000)) {
      this.minuteStart = ts - (((ts % 60_000) + 60_000) % 60_000);
      if (this.echo) this.minuteText = ascii(`{"ts":"${new Date(this.minuteStart).toISOString().slice(0, 17)}`);
      offset = ts - this.minuteStart;
    }
    return offset;
  }

  /** Writes `{"ts":"YYYY-MM-DDTHH:MM:SS.mmm[uuu]Z` of the time `offset` ms (and `micros`) into the current minute. */
  private writeIso(offset: number, micros: number): void {
    const readings = this.readings;
    readings.all(this.minuteText);
    readings.reserve(10);
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
    if (micros !== 0) {
      bytes[position++] = 0x30 + Math.floor(micros / 100);
      bytes[position++] = 0x30 + (Math.floor(micros / 10) % 10);
      bytes[position++] = 0x30 + (micros % 10);
    }
    bytes[position++] = 0x5a; // Z
    readings.length = position;
  }

  finish(): PreparedBulk {
    if (this.echo) this.readings.byte(0x5d /* ] */);
    if (this.chunkEnds.at(-1) !== this.rows.length) this.chunkEnds.push(this.rows.length);
    // Views, not copies: the thread moves the buffers to the api's thread as they are.
    const chunks: Uint8Array[] = [];
    let start = 0;
    for (const end of this.chunkEnds) {
      chunks.push(this.rows.bytes.subarray(start, end));
      start = end;
    }
    return {
      ok: true,
      points: this.count,
      readings: this.readings.contents(),
      chunks,
      instruments: [...this.firstIndex],
      startMs: this.startMs,
      endMs: this.endMs,
    };
  }
}


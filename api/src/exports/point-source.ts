/**
 * Reads an export section's points from ClickHouse as the read endpoints mean them: per key
 * (instrument, time) the row of the highest version, tombstones dropped; the statements are
 * points-read.ts's. The range is read in time windows of about WINDOW_POINTS points (planned from the
 * hourly rollups), one query each. Raw rows come ordered by time, instrument and version, so the newest
 * version of a key is the last of its adjacent rows and the deduplication is a streaming pass here
 * (pointVersionsInKeyOrder says why), and no query holds the whole export. Rows arrive as RowBinary
 * (no float text to format in ClickHouse and parse again here). The consumer pulls, so a slow client
 * slows the ClickHouse read (backpressure) instead of filling memory. SQL holds validated integers only.
 */
import type { Readable } from 'node:stream';
import type { ClickHouseClient } from '@bioprocess/shared/server/clickhouse';
import { floorExpr, floorTo, int } from '@bioprocess/shared/points-sql';
import { countReadings, dedupedPoints, pointVersionsInKeyOrder, readingsPerHour, standingReadingsFinal, windowsOn } from '../timeseries/points-read.ts';
import type { ExportSection } from './scope.ts';

const WINDOW_POINTS = 1_000_000;
/** Rows per batch handed to a format. */
const BATCH_ROWS = 8_192;
const TWO_32 = 4_294_967_296;

/**
 * Rows in time order (then instrument). `ts` is the reading's time, or the bucket's start when
 * downsampled; `micros` the microseconds within the reading's millisecond (0 for buckets); `value` the
 * reading or the bucket's average; `min`/`max` only when downsampled. NaN is a missing value (stored
 * values are always finite). A raw reading's `quality` code (NaN: none) and `historical` flag (1) are
 * its source's; buckets have none.
 */
export interface PointBatch {
  count: number;
  ts: Float64Array;
  micros: Uint16Array;
  quality: Float64Array;
  historical: Uint8Array;
  instrument: Float64Array;
  value: Float64Array;
  min: Float64Array | null;
  max: Float64Array | null;
}

const instrumentIdsOf = (section: ExportSection) => section.instruments.map((instrument) => instrument.id);

/** Stored points of the section (exact: rollups where whole, points at the edges). */
export async function countSectionPoints(clickhouse: ClickHouseClient, organizationId: number, section: ExportSection): Promise<number> {
  if (section.instruments.length === 0 || section.endMs < section.startMs) return 0;
  const counts = await countReadings(clickhouse, { organizationId, instrumentIds: instrumentIdsOf(section) }, [{ startMs: section.startMs, endMs: section.endMs }]);
  let total = 0;
  for (const count of counts.values()) total += count;
  return total;
}

export interface SectionPlan {
  /** Inclusive [from, to] windows covering the section, cut at hours (multiples of the alignment). */
  windows: Array<[number, number]>;
  /** The first and last hour holding points (null: none). */
  firstHour: number | null;
  lastHour: number | null;
}

/** Windows of about `windowPoints` points each, planned from the hourly rollups. */
export async function planSection(clickhouse: ClickHouseClient, organizationId: number, section: ExportSection, alignMs: number, windowPoints = WINDOW_POINTS): Promise<SectionPlan> {
  const hours = await readingsPerHour(clickhouse, organizationId, instrumentIdsOf(section), [section.startMs, section.endMs]);
  const windows: Array<[number, number]> = [];
  let from = section.startMs;
  let held = 0;
  for (const [hour, points] of hours) {
    const cut = floorTo(hour, Math.max(alignMs, 1));
    if (held >= windowPoints && cut > from && cut <= section.endMs) {
      windows.push([from, cut - 1]);
      from = cut;
      held = 0;
    }
    held += points;
  }
  windows.push([from, section.endMs]);
  return { windows, firstHour: hours.length ? hours[0]![0] : null, lastHour: hours.length ? hours.at(-1)![0] : null };
}

/** Starts a query; its answer is read later (ClickHouse sorts meanwhile). */
function startQuery(clickhouse: ClickHouseClient, query: string): Promise<Readable> {
  // exec, not query: the raw answer, whatever its format.
  const started = clickhouse.exec({ query }).then(({ stream }) => stream as Readable);
  // Awaited later; until then a failure must not count as an unhandled rejection (it would end the process).
  started.catch(() => undefined);
  return started;
}

function newBatch(bucketed: boolean): PointBatch {
  return {
    count: 0,
    ts: new Float64Array(BATCH_ROWS),
    micros: new Uint16Array(BATCH_ROWS),
    quality: new Float64Array(BATCH_ROWS).fill(Number.NaN),
    historical: new Uint8Array(BATCH_ROWS),
    instrument: new Float64Array(BATCH_ROWS),
    value: new Float64Array(BATCH_ROWS),
    min: bucketed ? new Float64Array(BATCH_ROWS) : null,
    max: bucketed ? new Float64Array(BATCH_ROWS) : null,
  };
}

/** Bytes of a Nullable(Float64) at `offset`, or -1 when the buffer ends first. */
function nullableFloatLength(buffer: Buffer, offset: number): number {
  if (offset >= buffer.length) return -1;
  return buffer[offset] === 1 ? 1 : 9;
}

function readNullableFloat(buffer: Buffer, offset: number): number {
  return buffer[offset] === 1 ? Number.NaN : buffer.readDoubleLE(offset + 1);
}

function readInt64(buffer: Buffer, offset: number): number {
  return buffer.readInt32LE(offset + 4) * TWO_32 + buffer.readUInt32LE(offset);
}

/**
 * Raw rows `ts Int64, instrument_id UInt64, value Nullable(Float64), is_deleted UInt8, ts_micros
 * UInt16, quality Nullable(UInt32), historical UInt8`, sorted by time, instrument and version: keeps
 * the last row of each key, drops it when it is a tombstone.
 */
async function* rawBatches(chunks: AsyncIterable<Buffer>): AsyncGenerator<PointBatch> {
  let batch = newBatch(false);
  let rest: Buffer | null = null;
  let haveKey = false;
  let keyTs = 0;
  let keyInstrument = 0;
  let keyValue = 0;
  let keyDeleted = false;
  let keyMicros = 0;
  let keyQuality = Number.NaN;
  let keyHistorical = 0;
  const emit = () => {
    if (!haveKey || keyDeleted) return;
    const index = batch.count;
    batch.ts[index] = keyTs;
    batch.micros[index] = keyMicros;
    batch.quality[index] = keyQuality;
    batch.historical[index] = keyHistorical;
    batch.instrument[index] = keyInstrument;
    batch.value[index] = keyValue;
    batch.count = index + 1;
  };
  for await (const chunk of chunks) {
    const buffer: Buffer = rest ? Buffer.concat([rest, chunk]) : chunk;
    let offset = 0;
    for (;;) {
      if (offset + 17 > buffer.length) break;
      const valueLength = nullableFloatLength(buffer, offset + 16);
      // After the value: is_deleted (1 byte), ts_micros (2), quality's null flag (1, then 4 unless null), historical (1).
      const qualityAt = offset + 16 + valueLength + 3;
      if (valueLength < 0 || qualityAt >= buffer.length) break;
      const qualityLength = buffer[qualityAt] === 1 ? 1 : 5;
      if (qualityAt + qualityLength + 1 > buffer.length) break;
      const ts = readInt64(buffer, offset);
      const instrument = readInt64(buffer, offset + 8);
      const value = readNullableFloat(buffer, offset + 16);
      const deleted = buffer[offset + 16 + valueLength] === 1;
      const micros = buffer.readUInt16LE(offset + 16 + valueLength + 1);
      const quality = qualityLength === 1 ? Number.NaN : buffer.readUInt32LE(qualityAt + 1);
      const historical = buffer[qualityAt + qualityLength]!;
      offset = qualityAt + qualityLength + 1;
      if (haveKey && (ts !== keyTs || instrument !== keyInstrument)) {
        emit();
        if (batch.count === BATCH_ROWS) {
          yield batch;
          batch = newBatch(false);
        }
      }
      haveKey = true;
      keyTs = ts;
      keyInstrument = instrument;
      keyValue = value;
      keyDeleted = deleted;
      keyMicros = micros;
      keyQuality = quality;
      keyHistorical = historical;
    }
    rest = offset < buffer.length ? buffer.subarray(offset) : null;
  }
  if (rest) throw new Error('ClickHouse ended a RowBinary answer in the middle of a row');
  emit();
  if (batch.count > 0) yield batch;
}

/** Bucketed rows `bucket Int64, instrument_id UInt64, avg, min, max Nullable(Float64)`. */
async function* bucketBatches(chunks: AsyncIterable<Buffer>): AsyncGenerator<PointBatch> {
  let batch = newBatch(true);
  let rest: Buffer | null = null;
  for await (const chunk of chunks) {
    const buffer: Buffer = rest ? Buffer.concat([rest, chunk]) : chunk;
    let offset = 0;
    for (;;) {
      const avgLength = nullableFloatLength(buffer, offset + 16);
      if (avgLength < 0) break;
      const minLength = nullableFloatLength(buffer, offset + 16 + avgLength);
      if (minLength < 0) break;
      const maxLength = nullableFloatLength(buffer, offset + 16 + avgLength + minLength);
      if (maxLength < 0 || offset + 16 + avgLength + minLength + maxLength > buffer.length) break;
      const index = batch.count;
      batch.ts[index] = readInt64(buffer, offset);
      batch.instrument[index] = readInt64(buffer, offset + 8);
      batch.value[index] = readNullableFloat(buffer, offset + 16);
      batch.min![index] = readNullableFloat(buffer, offset + 16 + avgLength);
      batch.max![index] = readNullableFloat(buffer, offset + 16 + avgLength + minLength);
      batch.count = index + 1;
      offset += 16 + avgLength + minLength + maxLength;
      if (batch.count === BATCH_ROWS) {
        yield batch;
        batch = newBatch(true);
      }
    }
    rest = offset < buffer.length ? buffer.subarray(offset) : null;
  }
  if (rest) throw new Error('ClickHouse ended a RowBinary answer in the middle of a row');
  if (batch.count > 0) yield batch;
}

/**
 * The section's readings in time order (then instrument), or with a bucket width one row per bucket
 * and instrument (buckets aligned to multiples of the width, as the read endpoints align them).
 */
export async function* sectionBatches(
  clickhouse: ClickHouseClient,
  organizationId: number,
  section: ExportSection,
  bucketMs: number | null,
  windowPoints = WINDOW_POINTS,
  plan?: SectionPlan,
): AsyncGenerator<PointBatch> {
  if (section.instruments.length === 0 || section.endMs < section.startMs) return;
  const { windows } = plan ?? await planSection(clickhouse, organizationId, section, bucketMs ?? 1, windowPoints);
  const instrumentIds = instrumentIdsOf(section);
  const queryOf = (window: [number, number]) => {
    if (bucketMs === null) return pointVersionsInKeyOrder(organizationId, instrumentIds, window);
    return `SELECT toInt64(${floorExpr('ts', bucketMs)}) AS bucket, toUInt64(instrument_id),
                   CAST(avg(v) AS Nullable(Float64)), CAST(min(v) AS Nullable(Float64)), CAST(max(v) AS Nullable(Float64))
              FROM (${dedupedPoints(organizationId, windowsOn(instrumentIds, [window]))})
             WHERE d = 0
             GROUP BY bucket, instrument_id ORDER BY bucket, instrument_id`;
  };
  for await (const answer of windowAnswers(clickhouse, windows.map((window) => `${queryOf(window)} FORMAT RowBinary`))) {
    yield* bucketMs === null ? rawBatches(answer) : bucketBatches(answer);
  }
}

/**
 * The answers of the queries in turn. The next window's query starts while this one is read, so
 * ClickHouse sorts it while the rows of this one are formatted (two cores busy instead of one at a
 * time); its answer waits in the socket.
 */
async function* windowAnswers(clickhouse: ClickHouseClient, queries: string[]): AsyncGenerator<Readable> {
  let next: Promise<Readable> | null = queries.length ? startQuery(clickhouse, queries[0]!) : null;
  try {
    for (let index = 0; index < queries.length; index += 1) {
      const current = await next!;
      next = index + 1 < queries.length ? startQuery(clickhouse, queries[index + 1]!) : null;
      try {
        yield current;
      } finally {
        current.destroy();
      }
    }
  } finally {
    // A client that went away: the query started ahead is not needed.
    if (next) void next.then((stream) => stream.destroy(), () => undefined);
  }
}

/** Bytes kept free in the output buffer before a row is written (a row's own cells are far shorter). */
const ROW_ROOM = 512;
const OUTPUT_BYTES = 256 * 1024;
const TAB = 9;
const NEWLINE = 10;
const MINUS = 45;
const ZERO = 48;
const BACKSLASH = 92;
const LOWER_E = 101;
const TRUE_TEXT = Buffer.from('true', 'latin1');

/**
 * `YYYY-MM-DDTHH:MM:` of a time, made once per minute: readings of many instruments at 1 Hz cross a
 * second every few rows, and a Date and its ISO text per second cost about a tenth of the export.
 */
class IsoMinutePrefix {
  private minute = Number.NaN;
  bytes = Buffer.alloc(0);

  of(ms: number): Buffer {
    const minute = Math.floor(ms / 60_000);
    if (minute !== this.minute) {
      this.minute = minute;
      this.bytes = Buffer.from(new Date(minute * 60_000).toISOString().slice(0, 17), 'latin1');
    }
    return this.bytes;
  }
}

/**
 * What the source said of a reading, as one number: `micros + 1000 * historical + 2000 * (quality + 1)`,
 * the last term 0 when no quality code was given (at most about 8.6e12: exact as a double). Almost
 * every reading said nothing and reads as `0`: ClickHouse writes one short cell instead of three (a
 * Nullable one among them), and the row's parse reads one digit instead of three fields.
 */
const SOURCE_DETAILS_SQL = 'ts_micros + 1000 * historical + 2000 * ifNull(toUInt64(quality) + 1, 0)';
const QUALITY_STEP = 2000;
const HISTORICAL_STEP = 1000;
/** The quality code plus one, or 0 when none was given. */
const packedQualityCode = (packed: number) => Math.floor(packed / QUALITY_STEP);
const packedHistorical = (packed: number) => packed % QUALITY_STEP >= HISTORICAL_STEP;
const packedMicros = (packed: number) => (packed % QUALITY_STEP) % HISTORICAL_STEP;

/**
 * One window of raw readings as ClickHouse's text, `ts<TAB>position<TAB>source<TAB>value`
 * lines, held whole so its rows can be put in time order here: per row its time, the instrument's
 * position (1-based), what the source said (SOURCE_DETAILS_SQL) and
 * where its value's text lies; `runStart` cuts the rows into runs, stretches of one instrument in rising
 * time. The text and the arrays are reused from window to window (fresh ones each time would leave the
 * allocator tens of megabytes of holes).
 */
interface WindowRows {
  count: number;
  ts: Float64Array;
  position: Int32Array;
  /** What the source said, packed (SOURCE_DETAILS_SQL): 0 for a reading with none. */
  source: Float64Array;
  valueStart: Uint32Array;
  valueEnd: Uint32Array;
  /** Run r holds rows runStart[r] .. runStart[r + 1] - 1. */
  runStart: Uint32Array;
  runs: number;
  /** The rows in time order (timeOrder's answer). */
  order: Uint32Array;
}

function grown<T extends Float64Array | Int32Array | Uint32Array | Uint16Array | Uint8Array>(array: T, length: number): T {
  const bigger = new (array.constructor as new (size: number) => T)(length);
  bigger.set(array);
  return bigger;
}

function emptyWindow(): WindowRows {
  const capacity = 64 * 1024;
  return {
    count: 0, ts: new Float64Array(capacity), position: new Int32Array(capacity),
    source: new Float64Array(capacity),
    valueStart: new Uint32Array(capacity), valueEnd: new Uint32Array(capacity), runStart: new Uint32Array(64), runs: 0,
    order: new Uint32Array(capacity),
  };
}

/** A window's answer, copied into a buffer that grows as needed and is used again for a later window. */
class WindowText {
  bytes = Buffer.allocUnsafe(4 * 1024 * 1024);
  length = 0;

  append(chunk: Buffer): void {
    if (this.length + chunk.length > this.bytes.length) {
      const bigger = Buffer.allocUnsafe(Math.max(2 * this.bytes.length, this.length + chunk.length));
      this.bytes.copy(bigger, 0, 0, this.length);
      this.bytes = bigger;
    }
    chunk.copy(this.bytes, this.length);
    this.length += chunk.length;
  }
}

/** An answer being read whole into `into` (the next window's is read while this one is written); `cancel` drops it. */
interface WholeAnswer {
  text: Promise<WindowText>;
  cancel(): void;
}

function readWhole(answer: Promise<Readable>, into: WindowText): WholeAnswer {
  let cancelled = false;
  let source: Readable | null = null;
  const text = answer.then(async (stream) => {
    source = stream;
    if (cancelled) stream.destroy();
    into.length = 0;
    for await (const chunk of stream as AsyncIterable<Buffer>) into.append(chunk);
    return into;
  });
  // Awaited later; until then a failure must not count as an unhandled rejection (it would end the process).
  text.catch(() => undefined);
  return {
    text,
    cancel() {
      cancelled = true;
      (source as Readable | null)?.destroy();
    },
  };
}

/** Indexes the lines of `window` into `rows` (its arrays grown as needed). */
function parseWindow(window: WindowText, rows: WindowRows): void {
  const text = window.bytes;
  const end = window.length;
  if (end > 0 && text[end - 1] !== NEWLINE) throw new Error('ClickHouse ended a TabSeparated answer in the middle of a line');
  let count = 0;
  let runs = 0;
  let lastTs = Number.NEGATIVE_INFINITY;
  let lastPosition = -1;
  let at = 0;
  while (at < end) {
    if (count === rows.ts.length) {
      const capacity = 2 * count;
      rows.ts = grown(rows.ts, capacity);
      rows.position = grown(rows.position, capacity);
      rows.source = grown(rows.source, capacity);
      rows.valueStart = grown(rows.valueStart, capacity);
      rows.valueEnd = grown(rows.valueEnd, capacity);
    }
    let byte = text[at]!;
    const negative = byte === MINUS;
    if (negative) byte = text[++at]!;
    let ms = 0;
    while (byte !== TAB) {
      ms = ms * 10 + byte - ZERO;
      byte = text[++at]!;
    }
    if (negative) ms = -ms;
    let index = 0;
    byte = text[++at]!;
    while (byte !== TAB) {
      index = index * 10 + byte - ZERO;
      byte = text[++at]!;
    }
    let source = 0;
    byte = text[++at]!;
    while (byte !== TAB) {
      source = source * 10 + byte - ZERO;
      byte = text[++at]!;
    }
    const start = at + 1;
    at = text.indexOf(NEWLINE, start);
    if (index !== lastPosition || ms <= lastTs) {
      if (runs + 1 >= rows.runStart.length) rows.runStart = grown(rows.runStart, rows.runStart.length * 2);
      rows.runStart[runs++] = count;
      lastPosition = index;
    }
    lastTs = ms;
    rows.ts[count] = ms;
    rows.position[count] = index;
    rows.source[count] = source;
    rows.valueStart[count] = start;
    rows.valueEnd[count] = at;
    count += 1;
    at += 1;
  }
  rows.count = count;
  rows.runs = runs;
  rows.runStart[runs] = count;
}

/**
 * The rows of a window in time order, then instrument id (null: they already are, one run): a merge of
 * its runs (each in rising time, one instrument) through a binary heap of the runs' next rows.
 */
function timeOrder(rows: WindowRows, rankOf: Int32Array): Uint32Array | null {
  const { ts, position, runStart, runs } = rows;
  if (runs <= 1) return null;
  if (rows.order.length < rows.count) rows.order = new Uint32Array(rows.ts.length);
  const { order } = rows;
  const cursor = new Uint32Array(runs);
  const stop = new Uint32Array(runs);
  const rank = new Int32Array(runs);
  const heap = new Int32Array(runs);
  let size = 0;
  for (let run = 0; run < runs; run += 1) {
    cursor[run] = runStart[run]!;
    stop[run] = runStart[run + 1]!;
    rank[run] = rankOf[position[runStart[run]!]!]!;
    if (cursor[run]! < stop[run]!) heap[size++] = run;
  }
  const before = (a: number, b: number) => {
    const ta = ts[cursor[a]!]!;
    const tb = ts[cursor[b]!]!;
    return ta < tb || (ta === tb && rank[a]! < rank[b]!);
  };
  const siftDown = () => {
    let parent = 0;
    const moving = heap[0]!;
    for (;;) {
      let child = 2 * parent + 1;
      if (child >= size) break;
      if (child + 1 < size && before(heap[child + 1]!, heap[child]!)) child += 1;
      if (!before(heap[child]!, moving)) break;
      heap[parent] = heap[child]!;
      parent = child;
    }
    heap[parent] = moving;
  };
  // The heap is built by sifting each run's first row up.
  for (let filled = 1; filled < size; filled += 1) {
    let child = filled;
    const moving = heap[child]!;
    while (child > 0) {
      const parent = (child - 1) >> 1;
      if (!before(moving, heap[parent]!)) break;
      heap[child] = heap[parent]!;
      child = parent;
    }
    heap[child] = moving;
  }
  let written = 0;
  while (size > 0) {
    const run = heap[0]!;
    const row = cursor[run]!;
    order[written++] = row;
    cursor[run] = row + 1;
    if (row + 1 === stop[run]) {
      heap[0] = heap[--size]!;
      if (size === 0) break;
    }
    siftDown();
  }
  return order;
}

/**
 * The raw rows of CSV long as bytes. ClickHouse reads each window with FINAL (standingReadingsFinal):
 * it merges the table's parts in their own key order (instrument, time) and keeps each key's newest
 * version, NULL values included; tombstones are dropped after that merge. It writes each reading as
 * `ts<TAB>position<TAB>source<TAB>value` (source: SOURCE_DETAILS_SQL), the value in its shortest round-trip
 * text (ClickHouse's, the same digits as JavaScript's String(number)). ClickHouse never sorts (18.16 cannot read in key order under an
 * ORDER BY, and re-sorting ten million rows by time cost it twice the api's whole work): the window's
 * text is held here and its per-instrument runs are merged into time order, then instrument id, the
 * order the other formats use. Whatever order an engine's FINAL streams its parts in, the merge takes
 * rising runs as they come. Each line is written as bytes: the ISO time (its minute made once; six
 * fraction digits when the reading has microseconds), elapsed seconds from the integer microseconds
 * (exact: the shortest text of a whole number of microseconds over 10^6 is that number with the point
 * moved), the instrument's cells (formatted and neutralised once per instrument), the value, with
 * JavaScript's spelling where ClickHouse's differs (`1e+21`, `0` for -0, nothing for NULL), then the
 * quality code (empty: none) and the historical flag (`true`, else empty). No string or number object per reading: the formatting is what bounded the
 * export's speed. Memory: one window's text and row index (about 50 bytes a reading) and the next
 * window's text, read meanwhile.
 */
export async function* csvLongText(
  clickhouse: ClickHouseClient, organizationId: number, section: ExportSection, plan: SectionPlan, middles: readonly Buffer[], onRows: (rows: number) => void,
): AsyncGenerator<Buffer> {
  if (section.instruments.length === 0 || section.endMs < section.startMs || plan.firstHour === null) return;
  const ids = section.instruments.map((instrument) => int(instrument.id)).join(',');
  const instrumentIds = instrumentIdsOf(section);
  const queries = plan.windows.map((window) => `SELECT ts, indexOf([${ids}], instrument_id), ${SOURCE_DETAILS_SQL}, value
    FROM (${standingReadingsFinal(organizationId, instrumentIds, window)})
   FORMAT TabSeparated`);
  // Ties in time go by instrument id, whatever order the section lists its instruments in.
  const byId = section.instruments.map((instrument, index) => ({ id: instrument.id, position: index + 1 })).sort((a, b) => a.id - b.id);
  const rankOf = new Int32Array(section.instruments.length + 1);
  byId.forEach((entry, rank) => { rankOf[entry.position] = rank; });
  const origin = section.originMs;
  const prefix = new IsoMinutePrefix();
  const widest = middles.reduce((most, middle) => Math.max(most, middle.length), 0);
  let out = Buffer.allocUnsafe(OUTPUT_BYTES + widest);
  let at = 0;
  /** Writes the decimal digits of a non-negative safe integer (from the last, into their places: no buffer view per row). */
  const writeDigits = (value: number) => {
    if (value < 10) {
      out[at++] = ZERO + value;
      return;
    }
    let digits = 2;
    for (let bound = 100; value >= bound; bound *= 10) digits += 1;
    at += digits;
    let place = at;
    while (value > 0) {
      const next = Math.floor(value / 10);
      out[--place] = ZERO + (value - next * 10);
      value = next;
    }
  };
  // Two texts in turn: one being written out, the next window's being read.
  const texts = [new WindowText(), new WindowText()];
  let next: WholeAnswer | null = queries.length ? readWhole(startQuery(clickhouse, queries[0]!), texts[0]!) : null;
  const rows = emptyWindow();
  try {
    for (let window = 0; window < queries.length; window += 1) {
      const current = await next!.text;
      next = window + 1 < queries.length ? readWhole(startQuery(clickhouse, queries[window + 1]!), texts[(window + 1) % 2]!) : null;
      parseWindow(current, rows);
      const text = current.bytes;
      const { ts, position, source, valueStart, valueEnd } = rows;
      const order = timeOrder(rows, rankOf);
      let written = 0;
      for (let step = 0; step < rows.count; step += 1) {
        const row = order === null ? step : order[step]!;
        if (out.length - at < ROW_ROOM + widest) {
          onRows(written);
          written = 0;
          yield out.subarray(0, at);
          out = Buffer.allocUnsafe(OUTPUT_BYTES + widest);
          at = 0;
        }
        const ms = ts[row]!;
        // timestamp: the minute's prefix, then the seconds and milliseconds.
        const minute = prefix.of(ms);
        for (let copied = 0; copied < minute.length; copied += 1) out[at++] = minute[copied]!;
        const inMinute = ms - Math.floor(ms / 60_000) * 60_000;
        const second = Math.floor(inMinute / 1000);
        out[at++] = ZERO + Math.floor(second / 10);
        out[at++] = ZERO + (second % 10);
        out[at++] = 46; // .
        const milli = inMinute - second * 1000;
        out[at++] = ZERO + Math.floor(milli / 100);
        out[at++] = ZERO + (Math.floor(milli / 10) % 10);
        out[at++] = ZERO + (milli % 10);
        const packed = source[row]!;
        const micro = packed === 0 ? 0 : packedMicros(packed);
        if (micro !== 0) {
          out[at++] = ZERO + Math.floor(micro / 100);
          out[at++] = ZERO + (Math.floor(micro / 10) % 10);
          out[at++] = ZERO + (micro % 10);
        }
        out[at++] = 90; // Z
        out[at++] = 44; // ,
        // elapsed_s: the whole seconds, then the microseconds without trailing zeros (integers below 2^53).
        let elapsed = (ms - origin) * 1000 + micro;
        if (elapsed < 0) {
          out[at++] = MINUS;
          elapsed = -elapsed;
        }
        const whole = Math.floor(elapsed / 1_000_000);
        writeDigits(whole);
        let fraction = elapsed - whole * 1_000_000;
        if (fraction !== 0) {
          out[at++] = 46; // .
          let scale = 100_000;
          while (fraction !== 0) {
            const digit = Math.floor(fraction / scale);
            out[at++] = ZERO + digit;
            fraction -= digit * scale;
            scale /= 10;
          }
        }
        out[at++] = 44;
        const middle = middles[position[row]! - 1]!;
        for (let copied = 0; copied < middle.length; copied += 1) out[at++] = middle[copied]!;
        // value: NULL (\N) is an empty cell, -0 is 0, a positive exponent gets its sign.
        const start = valueStart[row]!;
        const stop = valueEnd[row]!;
        const first = text[start]!;
        if (first === BACKSLASH) {
          // NULL: nothing.
        } else if (first === MINUS && stop - start === 2 && text[start + 1] === ZERO) {
          out[at++] = ZERO;
        } else {
          for (let cursor = start; cursor < stop; cursor += 1) {
            const byte = text[cursor]!;
            out[at++] = byte;
            if (byte === LOWER_E && text[cursor + 1] !== MINUS) out[at++] = 43; // +
          }
        }
        // quality (empty: none given), historical (`true`, else empty).
        out[at++] = 44;
        const code = packed === 0 ? 0 : packedQualityCode(packed);
        if (code !== 0) writeDigits(code - 1);
        out[at++] = 44;
        if (packed !== 0 && packedHistorical(packed)) for (let copied = 0; copied < TRUE_TEXT.length; copied += 1) out[at++] = TRUE_TEXT[copied]!;
        out[at++] = 13;
        out[at++] = NEWLINE;
        written += 1;
      }
      onRows(written);
    }
  } finally {
    // A client that went away: the window read ahead is not needed.
    next?.cancel();
  }
  if (at > 0) yield out.subarray(0, at);
}

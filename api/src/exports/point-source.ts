/**
 * Reads an export section's points from ClickHouse as the read endpoints mean them: per key
 * (instrument, time) the row of the highest version, tombstones dropped. The range is read in time
 * windows of about WINDOW_POINTS points (planned from the hourly rollups), one query each, ordered by
 * time, instrument and version, so the newest version of a key is the last of its adjacent rows and the
 * deduplication is a streaming pass here: ClickHouse only sorts (a GROUP BY with argMax over millions
 * of keys costs it several times more), and never holds the whole export. Rows arrive as RowBinary
 * (no float text to format in ClickHouse and parse again here). The consumer pulls, so a slow client
 * slows the ClickHouse read (backpressure) instead of filling memory. SQL holds validated integers only.
 */
import type { Readable } from 'node:stream';
import type { ClickHouseClient } from '@bioprocess/shared/server/clickhouse';
import { countReadings } from '../timeseries/read-series.ts';
import type { ExportSection } from './scope.ts';

const HOUR_MS = 3_600_000;
const WINDOW_POINTS = 1_000_000;
/** Rows per batch handed to a format. */
const BATCH_ROWS = 8_192;
const TWO_32 = 4_294_967_296;

/**
 * Rows in time order (then instrument). `ts` is the reading's time, or the bucket's start when
 * downsampled; `value` the reading or the bucket's average; `min`/`max` only when downsampled. NaN is
 * a missing value (stored values are always finite).
 */
export interface PointBatch {
  count: number;
  ts: Float64Array;
  instrument: Float64Array;
  value: Float64Array;
  min: Float64Array | null;
  max: Float64Array | null;
}

function int(value: number): string {
  if (!Number.isSafeInteger(value)) throw new Error(`not a safe integer: ${value}`);
  return String(value);
}

const floorTo = (value: number, width: number) => value - (((value % width) + width) % width);

function scopeFilter(organizationId: number, section: ExportSection): string {
  return `organization_id = ${int(organizationId)} AND instrument_id IN (${section.instruments.map((instrument) => int(instrument.id)).join(',')})`;
}

/** Stored points of the section (exact: rollups where whole, points at the edges). */
export async function countSectionPoints(clickhouse: ClickHouseClient, organizationId: number, section: ExportSection): Promise<number> {
  if (section.instruments.length === 0 || section.endMs < section.startMs) return 0;
  const counts = await countReadings(clickhouse, { organizationId, instrumentIds: section.instruments.map((instrument) => instrument.id) },
    [{ startMs: section.startMs, endMs: section.endMs }]);
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
  const result = await clickhouse.query({
    query: `SELECT hour, sum(p) FROM (
              SELECT instrument_id, hour, argMax(points, version) AS p FROM points_rollup_1h
               WHERE ${scopeFilter(organizationId, section)} AND hour >= ${int(floorTo(section.startMs, HOUR_MS))} AND hour <= ${int(section.endMs)}
               GROUP BY instrument_id, hour)
             GROUP BY hour ORDER BY hour`,
    format: 'JSONCompact',
  });
  const hours = (await result.json<[string | number, string | number]>()).data;
  const windows: Array<[number, number]> = [];
  let from = section.startMs;
  let held = 0;
  for (const [hourText, pointsText] of hours) {
    const cut = floorTo(Number(hourText), Math.max(alignMs, 1));
    if (held >= windowPoints && cut > from && cut <= section.endMs) {
      windows.push([from, cut - 1]);
      from = cut;
      held = 0;
    }
    held += Number(pointsText);
  }
  windows.push([from, section.endMs]);
  return { windows, firstHour: hours.length ? Number(hours[0]![0]) : null, lastHour: hours.length ? Number(hours.at(-1)![0]) : null };
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
 * Raw rows `ts Int64, instrument_id UInt64, value Nullable(Float64), is_deleted UInt8`, sorted by
 * time, instrument and version: keeps the last row of each key, drops it when it is a tombstone.
 */
async function* rawBatches(chunks: AsyncIterable<Buffer>): AsyncGenerator<PointBatch> {
  let batch = newBatch(false);
  let rest: Buffer | null = null;
  let haveKey = false;
  let keyTs = 0;
  let keyInstrument = 0;
  let keyValue = 0;
  let keyDeleted = false;
  const emit = () => {
    if (!haveKey || keyDeleted) return;
    const index = batch.count;
    batch.ts[index] = keyTs;
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
      if (valueLength < 0 || offset + 16 + valueLength + 1 > buffer.length) break;
      const ts = readInt64(buffer, offset);
      const instrument = readInt64(buffer, offset + 8);
      const value = readNullableFloat(buffer, offset + 16);
      const deleted = buffer[offset + 16 + valueLength] === 1;
      offset += 16 + valueLength + 1;
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
  const queryOf = ([from, to]: [number, number]) => {
    const range = `${scopeFilter(organizationId, section)} AND ts >= ${int(from)} AND ts <= ${int(to)}`;
    if (bucketMs === null) return `SELECT ts, instrument_id, value, is_deleted FROM points WHERE ${range} ORDER BY ts, instrument_id, version`;
    const width = `toInt64(${int(bucketMs)})`;
    return `SELECT toInt64(ts - modulo(modulo(ts, ${width}) + ${width}, ${width})) AS bucket, toUInt64(instrument_id),
                   CAST(avg(v) AS Nullable(Float64)), CAST(min(v) AS Nullable(Float64)), CAST(max(v) AS Nullable(Float64))
              FROM (SELECT instrument_id, ts, argMax(tuple(value), version).1 AS v, argMax(is_deleted, version) AS d
                      FROM points WHERE ${range} GROUP BY instrument_id, ts)
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

/** `2024-01-01T00:00:00.` as bytes, made once per second of the readings (ten instruments share it). */
class IsoSecondPrefix {
  private second = Number.NaN;
  bytes = Buffer.alloc(0);

  of(ms: number): Buffer {
    const second = Math.floor(ms / 1000);
    if (second !== this.second) {
      this.second = second;
      this.bytes = Buffer.from(`${new Date(second * 1000).toISOString().slice(0, 19)}.`, 'latin1');
    }
    return this.bytes;
  }
}

/**
 * The raw rows of CSV long as bytes. ClickHouse keeps each key's newest version (LIMIT 1 BY over the
 * sort the row path uses too), drops tombstones, and writes each reading as `ts<TAB>position<TAB>value`
 * with the value in its shortest round-trip text (ClickHouse's, the same digits as JavaScript's
 * String(number)); here the line is written as bytes: the ISO time (its second made once), elapsed
 * seconds from the integer milliseconds (exact: the shortest text of a whole number of milliseconds
 * over 1000 is that number with the point moved), the instrument's cells (formatted and neutralised once
 * per instrument) and the value, with JavaScript's spelling where ClickHouse's differs (`1e+21`, `0` for
 * -0, nothing for NULL). No string or number object per reading: the formatting is what bounded the
 * export's speed.
 */
export async function* csvLongText(
  clickhouse: ClickHouseClient, organizationId: number, section: ExportSection, plan: SectionPlan, middles: readonly Buffer[], onRows: (rows: number) => void,
): AsyncGenerator<Buffer> {
  if (section.instruments.length === 0 || section.endMs < section.startMs || plan.firstHour === null) return;
  const ids = section.instruments.map((instrument) => int(instrument.id)).join(',');
  const queries = plan.windows.map(([from, to]) => `SELECT ts, indexOf([${ids}], instrument_id), value
    FROM (SELECT ts, instrument_id, value, is_deleted FROM points
           WHERE ${scopeFilter(organizationId, section)} AND ts >= ${int(from)} AND ts <= ${int(to)}
           ORDER BY ts, instrument_id, version DESC LIMIT 1 BY ts, instrument_id)
   WHERE is_deleted = 0
   FORMAT TabSeparated`);
  const origin = section.originMs;
  const prefix = new IsoSecondPrefix();
  const widest = middles.reduce((most, middle) => Math.max(most, middle.length), 0);
  let out = Buffer.allocUnsafe(OUTPUT_BYTES + widest);
  let at = 0;
  /** Writes the decimal digits of a non-negative safe integer. */
  const writeDigits = (value: number) => {
    if (value < 10) {
      out[at++] = ZERO + value;
      return;
    }
    const start = at;
    while (value > 0) {
      const next = Math.floor(value / 10);
      out[at++] = ZERO + (value - next * 10);
      value = next;
    }
    out.subarray(start, at).reverse();
  };
  for await (const answer of windowAnswers(clickhouse, queries)) {
    let rest: Buffer | null = null;
    for await (const chunk of answer as AsyncIterable<Buffer>) {
      const buffer: Buffer = rest ? Buffer.concat([rest, chunk]) : chunk;
      const end = buffer.lastIndexOf(NEWLINE) + 1;
      let rows = 0;
      let position = 0;
      // Whole lines only.
      while (position < end) {
        if (out.length - at < ROW_ROOM + widest) {
          yield out.subarray(0, at);
          out = Buffer.allocUnsafe(OUTPUT_BYTES + widest);
          at = 0;
        }
        let byte = buffer[position]!;
        const negative = byte === MINUS;
        if (negative) byte = buffer[++position]!;
        let ms = 0;
        while (byte !== TAB) {
          ms = ms * 10 + byte - ZERO;
          byte = buffer[++position]!;
        }
        if (negative) ms = -ms;
        let index = 0;
        byte = buffer[++position]!;
        while (byte !== TAB) {
          index = index * 10 + byte - ZERO;
          byte = buffer[++position]!;
        }
        // timestamp: the second's prefix, then the milliseconds.
        const second = prefix.of(ms);
        for (let copied = 0; copied < second.length; copied += 1) out[at++] = second[copied]!;
        const milli = ms - Math.floor(ms / 1000) * 1000;
        out[at++] = ZERO + Math.floor(milli / 100);
        out[at++] = ZERO + (Math.floor(milli / 10) % 10);
        out[at++] = ZERO + (milli % 10);
        out[at++] = 90; // Z
        out[at++] = 44; // ,
        // elapsed_s: the whole seconds, then the milliseconds without trailing zeros.
        let elapsed = ms - origin;
        if (elapsed < 0) {
          out[at++] = MINUS;
          elapsed = -elapsed;
        }
        const whole = Math.floor(elapsed / 1000);
        writeDigits(whole);
        let fraction = elapsed - whole * 1000;
        if (fraction !== 0) {
          out[at++] = 46; // .
          let scale = 100;
          while (fraction !== 0) {
            const digit = Math.floor(fraction / scale);
            out[at++] = ZERO + digit;
            fraction -= digit * scale;
            scale /= 10;
          }
        }
        out[at++] = 44;
        const middle = middles[index - 1]!;
        for (let copied = 0; copied < middle.length; copied += 1) out[at++] = middle[copied]!;
        // value: NULL (\N) is an empty cell, -0 is 0, a positive exponent gets its sign.
        byte = buffer[++position]!;
        if (byte === BACKSLASH) {
          position += 2;
        } else if (byte === MINUS && buffer[position + 1] === ZERO && buffer[position + 2] === NEWLINE) {
          out[at++] = ZERO;
          position += 2;
        } else {
          while (byte !== NEWLINE) {
            out[at++] = byte;
            if (byte === LOWER_E && buffer[position + 1] !== MINUS) out[at++] = 43; // +
            byte = buffer[++position]!;
          }
        }
        out[at++] = 13;
        out[at++] = NEWLINE;
        position += 1;
        rows += 1;
      }
      onRows(rows);
      rest = end < buffer.length ? buffer.subarray(end) : null;
    }
    if (rest) throw new Error('ClickHouse ended a TabSeparated answer in the middle of a line');
  }
  if (at > 0) yield out.subarray(0, at);
}

/**
 * Store and forward: a connection's readings on disk between their arrival and their acceptance by the
 * api, so an api, Redis or ClickHouse away for a while (or a connector killed with -9) loses nothing.
 *
 * - Append-only segment files `seg-<seq>-<uuid>.log`, each record framed as length | crc32 | JSON; an
 *   append resolves only once its bytes are fdatasync'ed (appends arriving together share one sync), so
 *   a source acknowledges its server only for readings that survive a crash. A torn record at the end
 *   of the last segment (a crash mid-write) is cut off at open.
 * - A cursor file says how far the api has accepted, and which batch is on its way: a batch is fixed
 *   on disk (its first and last record) before it is sent, so a replay after a crash sends exactly the
 *   same readings under the same key (`<segment uuid>:<offset>`), which the api answers with the first
 *   job instead of recording them twice. Batches go out one at a time, in append order.
 * - Bounded: an append waits while the unsent bytes would pass the connection's limit, which holds the
 *   source (MQTT leaves the messages with the broker's persistent session; OPC UA queues in the
 *   subscription) instead of dropping anything.
 */
import { randomUUID } from 'node:crypto';
import { mkdir, open, readdir, readFile, rename, rm, stat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import { syncToDisk } from '@bioprocess/shared/server/sync-to-disk';

/**
 * A reading as stored: instrument, source time (ms), value (null: missing), quality code, historical,
 * and the microseconds within the source time's millisecond when it has them (absent from buffers
 * written before they were kept, and when 0). The code is text in buffers written before codes were
 * numbers (delivered through quality-codes.ts).
 */
export type StoredReading = [instrumentId: number, measuredAtMs: number, value: number | null, quality: number | string | null, historical: 0 | 1, micros?: number];

interface Position { segment: string; offset: number }
interface Cursor { position: Position | null; pending: { key: string; from: Position; to: Position } | null }

export interface Batch {
  /** Stable across replays of the same readings: the idempotency key's tail. */
  key: string;
  readings: StoredReading[];
  /** Bytes of the records, as counted against the limit. */
  bytes: number;
}

const SEGMENT_PATTERN = /^seg-(\d{10})-([0-9a-f-]{36})\.log$/;
const HEADER_BYTES = 8;
/** Small enough that a delivered segment is removed soon, large enough that rotation is rare. */
const SEGMENT_MAX_BYTES = 4 * 1024 * 1024;
const CURSOR_FILE = 'cursor.json';

function segmentName(seq: number): string {
  return `seg-${String(seq).padStart(10, '0')}-${randomUUID()}.log`;
}

function encodeRecord(readings: StoredReading[]): Buffer {
  const body = Buffer.from(JSON.stringify(readings));
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt32LE(body.length, 0);
  header.writeUInt32LE(crc32(body), 4);
  return Buffer.concat([header, body]);
}

/** The whole records in a buffer from `start`: their readings and where each ends. */
function decodeRecords(buffer: Buffer, start = 0): Array<{ readings: StoredReading[]; end: number }> {
  const records: Array<{ readings: StoredReading[]; end: number }> = [];
  let offset = start;
  while (offset + HEADER_BYTES <= buffer.length) {
    const length = buffer.readUInt32LE(offset);
    const end = offset + HEADER_BYTES + length;
    if (end > buffer.length) break;
    const body = buffer.subarray(offset + HEADER_BYTES, end);
    if (crc32(body) !== buffer.readUInt32LE(offset + 4)) break;
    records.push({ readings: JSON.parse(body.toString('utf8')) as StoredReading[], end });
    offset = end;
  }
  return records;
}

export class StoreForward {
  private segments: Array<{ name: string; size: number }> = [];
  private active!: FileHandle;
  private cursor: Cursor = { position: null, pending: null };
  private queued: Array<{ record: Buffer; resolve: () => void; reject: (error: unknown) => void }> = [];
  private flushing: Promise<void> | null = null;
  private waiters: Array<() => void> = [];
  private roomWaiters: Array<() => void> = [];
  private closed = false;

  private constructor(readonly dir: string, public limitBytes: number) {}

  static async open(dir: string, limitBytes: number): Promise<StoreForward> {
    const store = new StoreForward(dir, limitBytes);
    await store.load();
    return store;
  }

  private async load(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const names = (await readdir(this.dir)).filter((name) => SEGMENT_PATTERN.test(name)).sort();
    for (const name of names) this.segments.push({ name, size: (await stat(path.join(this.dir, name))).size });
    try {
      this.cursor = JSON.parse(await readFile(path.join(this.dir, CURSOR_FILE), 'utf8')) as Cursor;
    } catch {
      this.cursor = { position: null, pending: null };
    }
    const last = this.segments.at(-1);
    if (last) {
      // Cut a torn record left by a crash mid-append: it was never acknowledged to the source.
      const buffer = await readFile(path.join(this.dir, last.name));
      const records = decodeRecords(buffer);
      const validEnd = records.at(-1)?.end ?? 0;
      if (validEnd < buffer.length) {
        const handle = await open(path.join(this.dir, last.name), 'r+');
        await handle.truncate(validEnd);
        await handle.datasync();
        await handle.close();
        last.size = validEnd;
      }
    }
    await this.openActive(last && last.size < SEGMENT_MAX_BYTES ? last.name : null);
  }

  private async openActive(name: string | null): Promise<void> {
    if (name === null) {
      const seq = this.segments.length > 0 ? Number(SEGMENT_PATTERN.exec(this.segments.at(-1)!.name)![1]) + 1 : 1;
      name = segmentName(seq);
      this.segments.push({ name, size: 0 });
      this.active = await open(path.join(this.dir, name), 'a');
      await syncToDisk(this.dir);
    } else {
      this.active = await open(path.join(this.dir, name), 'a');
    }
  }

  private get activeSegment(): { name: string; size: number } {
    return this.segments.at(-1)!;
  }

  /** Bytes appended and not yet accepted by the api. */
  bufferedBytes(): number {
    const position = this.cursor.position;
    let total = 0;
    for (const segment of this.segments) total += segment.size;
    if (position) {
      for (const segment of this.segments) {
        if (segment.name === position.segment) { total -= position.offset; break; }
        total -= segment.size;
      }
    }
    return Math.max(0, total);
  }

  /** Whether an append of this many bytes would wait for room. */
  isFull(extraBytes = 0): boolean {
    return this.bufferedBytes() + extraBytes > this.limitBytes;
  }

  /** Stores the readings durably; resolves once they are on disk (waiting first while the buffer is full). */
  async append(readings: StoredReading[]): Promise<void> {
    if (readings.length === 0) return;
    const record = encodeRecord(readings);
    // A record larger than the whole limit is let through alone rather than held forever.
    while (!this.closed && this.bufferedBytes() > 0 && this.isFull(record.length)) {
      await new Promise<void>((resolve) => this.roomWaiters.push(resolve));
    }
    if (this.closed) throw new Error('store closed');
    await new Promise<void>((resolve, reject) => {
      this.queued.push({ record, resolve, reject });
      this.flushing ??= this.flush();
    });
  }

  private async flush(): Promise<void> {
    try {
      while (this.queued.length > 0) {
        const group = this.queued.splice(0);
        try {
          const bytes = Buffer.concat(group.map((item) => item.record));
          if (this.activeSegment.size > 0 && this.activeSegment.size + bytes.length > SEGMENT_MAX_BYTES) {
            await this.active.close();
            await this.openActive(null);
          }
          await this.active.write(bytes);
          await this.active.datasync();
          this.activeSegment.size += bytes.length;
          for (const item of group) item.resolve();
        } catch (error) {
          for (const item of group) item.reject(error);
        }
      }
    } finally {
      this.flushing = null;
    }
    for (const wake of this.waiters.splice(0)) wake();
  }

  /** Resolves when readings are appended (or after `ms`, whichever is first). */
  waitForData(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.waiters.push(() => { clearTimeout(timer); resolve(); });
    });
  }

  /**
   * The next batch to send: the one on its way when the process stopped, else up to `maxPoints`
   * readings from the cursor, fixed on disk before it is returned. Null when everything was accepted.
   */
  async nextBatch(maxPoints: number): Promise<Batch | null> {
    if (this.cursor.pending) {
      const { from, to, key } = this.cursor.pending;
      const read = await this.readRange(from, to, Number.MAX_SAFE_INTEGER);
      return { key, readings: read.readings, bytes: read.bytes };
    }
    const from = this.cursor.position ?? { segment: this.segments[0]!.name, offset: 0 };
    const read = await this.readRange(from, null, maxPoints);
    if (read.readings.length === 0) {
      // Past the end of a finished segment: move on so it can be removed.
      if (read.to.segment !== from.segment || read.to.offset !== from.offset) await this.writeCursor({ position: read.to, pending: null });
      return null;
    }
    const key = `${SEGMENT_PATTERN.exec(from.segment)![2]}:${from.offset}`;
    await this.writeCursor({ position: this.cursor.position, pending: { key, from, to: read.to } });
    return { key, readings: read.readings, bytes: read.bytes };
  }

  /** The batch was accepted: the cursor moves past it and wholly sent segments are removed. */
  async commit(): Promise<void> {
    const pending = this.cursor.pending;
    if (!pending) return;
    await this.writeCursor({ position: pending.to, pending: null });
    await this.removeSentSegments();
    for (const wake of this.roomWaiters.splice(0)) wake();
  }

  private async readRange(from: Position, to: Position | null, maxPoints: number): Promise<{ readings: StoredReading[]; bytes: number; to: Position }> {
    const readings: StoredReading[] = [];
    let bytes = 0;
    let index = this.segments.findIndex((segment) => segment.name === from.segment);
    // A segment already removed (everything in it was accepted): start at the oldest one left.
    if (index === -1) { index = 0; from = { segment: this.segments[0]!.name, offset: 0 }; }
    let position: Position = from;
    for (; index < this.segments.length; index += 1) {
      const segment = this.segments[index]!;
      const start = segment.name === from.segment ? from.offset : 0;
      const end = to && segment.name === to.segment ? to.offset : segment.size;
      if (end > start) {
        const handle = await open(path.join(this.dir, segment.name), 'r');
        const buffer = Buffer.alloc(end - start);
        try {
          await handle.read(buffer, 0, buffer.length, start);
        } finally {
          await handle.close();
        }
        let previousEnd = 0;
        for (const record of decodeRecords(buffer)) {
          if (readings.length > 0 && readings.length + record.readings.length > maxPoints) return { readings, bytes, to: position };
          readings.push(...record.readings);
          bytes += record.end - previousEnd;
          previousEnd = record.end;
          position = { segment: segment.name, offset: start + record.end };
        }
      }
      if (to && segment.name === to.segment) return { readings, bytes, to };
      // Only a finished segment is crossed; the active one may still grow.
      if (index === this.segments.length - 1) return { readings, bytes, to: position };
      position = { segment: this.segments[index + 1]!.name, offset: 0 };
    }
    return { readings, bytes, to: position };
  }

  private async writeCursor(cursor: Cursor): Promise<void> {
    const file = path.join(this.dir, CURSOR_FILE);
    const temporary = `${file}.tmp`;
    const handle = await open(temporary, 'w');
    try {
      await handle.writeFile(JSON.stringify(cursor));
      await handle.datasync();
    } finally {
      await handle.close();
    }
    await rename(temporary, file);
    await syncToDisk(this.dir);
    this.cursor = cursor;
  }

  private async removeSentSegments(): Promise<void> {
    const position = this.cursor.position;
    if (!position) return;
    while (this.segments.length > 1 && this.segments[0]!.name !== position.segment) {
      const [removed] = this.segments.splice(0, 1);
      await rm(path.join(this.dir, removed!.name), { force: true });
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const wake of this.roomWaiters.splice(0)) wake();
    await this.flushing;
    await this.active.close();
  }
}

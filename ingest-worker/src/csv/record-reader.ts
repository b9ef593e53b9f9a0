/**
 * Reads a spooled CSV file as a stream of parsed rows, in byte chunks cut at line feeds, and says
 * after each chunk whether its end is a record boundary (no quoted field open). Those boundaries are
 * the resume points of a CSV job: a restarted worker continues from the last committed one.
 *
 * Linear in the file: bytes after a chunk's last line feed are kept as a list of pieces and joined
 * once, when a line feed arrives, rather than copied and searched again for every read (a 96 MB line
 * without a line feed was quadratic). A line longer than the line limit, or a quoted field running
 * over lines past it, fails the read with CsvLimitError naming the line where it starts.
 */
import { open, type FileHandle } from 'node:fs/promises';
import {
  CSV_LIMITS, CsvLimitError, CsvRowParser, CsvTextDecoder, lineTooLongMessage, type CsvDelimiter, type CsvEncoding,
} from '@bioprocess/shared/csv/index';

/** Bytes read per step: large enough for fast parsing, small enough to keep memory flat. */
export const READ_CHUNK_BYTES = 1024 * 1024;
const LF = 0x0a;

export interface RecordBatch {
  /**
   * The chunk's rows, or null when the chunk is whole lines without quotes: the reader then cuts
   * `text` itself (forEachPlainLine, then at delimiters) and may read cells in place.
   */
  rows: string[][] | null;
  /** Decoded text of the chunk (for the malicious-content scan). */
  text: string;
  /** File offset just after the chunk. */
  byteEnd: number;
  /** True when byteEnd is a record boundary, so reading may resume there. */
  boundary: boolean;
}

/** Work done by a read, for tests: every figure stays a small multiple of the bytes read. */
export interface RecordReadStats {
  /** Bytes read from the file. */
  bytesRead: number;
  /** Bytes searched for line feeds. */
  bytesScanned: number;
  /** Bytes copied to join a line's pieces or take a read out of the reused buffer. */
  bytesCopied: number;
  /** Characters the row parser looked at. */
  charsParsed: number;
}

export interface ReadRecordsOptions {
  filePath: string;
  delimiter: CsvDelimiter;
  startByte?: number;
  /** Forces the decoding (a resumed read uses the encoding the first pass settled on). */
  encoding?: CsvEncoding;
  signal?: AbortSignal;
  /** Bytes one line or quoted record may have (default CSV_LIMITS.defaultMaxLineBytes). */
  maxLineBytes?: number;
  /** Bytes per read (tests use small ones to cross many chunk boundaries). */
  chunkBytes?: number;
  /** Filled in as the read goes. */
  stats?: RecordReadStats;
}

export function emptyReadStats(): RecordReadStats {
  return { bytesRead: 0, bytesScanned: 0, bytesCopied: 0, charsParsed: 0 };
}

/** The 1-based line of a file offset: one more than the line feeds before it (read again, on failure only). */
async function lineOfOffset(handle: FileHandle, offset: number): Promise<number> {
  const buffer = Buffer.allocUnsafe(READ_CHUNK_BYTES);
  let lineFeeds = 0;
  for (let position = 0; position < offset;) {
    const { bytesRead } = await handle.read(buffer, 0, Math.min(READ_CHUNK_BYTES, offset - position), position);
    if (bytesRead === 0) break;
    for (let index = buffer.indexOf(LF); index !== -1 && index < bytesRead; index = buffer.indexOf(LF, index + 1)) lineFeeds += 1;
    position += bytesRead;
  }
  return lineFeeds + 1;
}

export async function* readRecords(options: ReadRecordsOptions): AsyncGenerator<RecordBatch> {
  const handle = await open(options.filePath, 'r');
  const maxLineBytes = options.maxLineBytes ?? CSV_LIMITS.defaultMaxLineBytes;
  const chunkBytes = options.chunkBytes ?? READ_CHUNK_BYTES;
  const stats = options.stats ?? emptyReadStats();
  const tooLong = async (startByte: number) => new CsvLimitError(lineTooLongMessage(await lineOfOffset(handle, startByte), maxLineBytes));
  try {
    const decoder = new CsvTextDecoder();
    if (options.encoding === 'latin1') decoder.encoding = 'latin1';
    // The parser counts characters (at most the bytes): it catches a record that ends in the push
    // that made it too long; a record still open is measured here, in bytes.
    const parser = new CsvRowParser({ delimiter: options.delimiter, maxLineBytes });
    let position = options.startByte ?? 0;
    /** The bytes after the last line feed so far, as read (joined once a line feed comes). */
    let carry: Buffer[] = [];
    let carryBytes = 0;
    /** File offset where the quoted record still open in the parser begins, or -1. */
    let openRecordByte = -1;
    const buffer = Buffer.allocUnsafe(chunkBytes);
    const parse = async (text: string, textStartByte: number, final = false): Promise<string[][]> => {
      const before = parser.charsScanned;
      const byteOffsetIn = (index: number) => textStartByte + Buffer.byteLength(text.slice(0, index), decoder.encoding === 'latin1' ? 'latin1' : 'utf8');
      let rows: string[][];
      try {
        rows = text.length > 0 ? parser.push(text) : [];
        if (final) rows.push(...parser.end());
      } catch (error) {
        // The parser's line numbers miss the chunks read in place: name the line from the file itself.
        if (!(error instanceof CsvLimitError)) throw error;
        throw await tooLong(parser.limitOffset >= 0 ? byteOffsetIn(parser.limitOffset) : Math.max(openRecordByte, 0));
      }
      stats.charsParsed += parser.charsScanned - before;
      if (parser.pendingLength === 0) {
        openRecordByte = -1;
        return rows;
      }
      if (parser.openRecordOffset >= 0) {
        openRecordByte = byteOffsetIn(parser.openRecordOffset);
      }
      // The record's bytes so far: from where it began to the end of this text.
      if (openRecordByte >= 0 && position - carryBytes - openRecordByte > maxLineBytes) throw await tooLong(openRecordByte);
      return rows;
    };
    for (;;) {
      if (options.signal?.aborted) throw new Error('ingest-worker is shutting down');
      const { bytesRead } = await handle.read(buffer, 0, chunkBytes, position);
      if (bytesRead === 0) break;
      stats.bytesRead += bytesRead;
      const readStart = position;
      position += bytesRead;
      const read = buffer.subarray(0, bytesRead);
      const lastLf = read.lastIndexOf(LF);
      stats.bytesScanned += lastLf === -1 ? bytesRead : bytesRead - lastLf;
      const lineStart = readStart - carryBytes;
      if (lastLf === -1) {
        stats.bytesCopied += bytesRead;
        carry.push(Buffer.from(read));
        carryBytes += bytesRead;
        if (carryBytes > maxLineBytes) throw await tooLong(lineStart);
        continue;
      }
      if (carryBytes > 0) {
        // The line the carry began ends at this read's first line feed.
        const firstLf = read.indexOf(LF);
        stats.bytesScanned += firstLf + 1;
        if (carryBytes + firstLf > maxLineBytes) throw await tooLong(lineStart);
      }
      if (maxLineBytes < chunkBytes) {
        // Lines inside one read can exceed a limit smaller than a read.
        let start = 0;
        for (let end = read.indexOf(LF); end !== -1 && end <= lastLf; end = read.indexOf(LF, end + 1)) {
          if (start > 0 || carryBytes === 0) {
            if (end - start > maxLineBytes) throw await tooLong(readStart + start);
          }
          start = end + 1;
        }
        stats.bytesScanned += lastLf + 1;
      }
      carry.push(read.subarray(0, lastLf + 1));
      const bytes = carry.length === 1 ? carry[0]! : Buffer.concat(carry, carryBytes + lastLf + 1);
      if (carry.length > 1) stats.bytesCopied += bytes.length;
      stats.bytesCopied += bytesRead - lastLf - 1;
      carry = lastLf + 1 < bytesRead ? [Buffer.from(read.subarray(lastLf + 1))] : [];
      carryBytes = bytesRead - lastLf - 1;
      const text = decoder.decode(bytes);
      const rows = parser.isPlain(text) ? null : await parse(text, lineStart);
      yield { rows, text, byteEnd: position - carryBytes, boundary: parser.pendingLength === 0 };
    }
    if (carryBytes > maxLineBytes) throw await tooLong(position - carryBytes);
    const tail = carryBytes > 0 ? decoder.decode(Buffer.concat(carry, carryBytes)) : '';
    const text = tail + decoder.end();
    const rows = await parse(text, position - carryBytes, true);
    yield { rows, text, byteEnd: position, boundary: true };
  } finally {
    await handle.close();
  }
}

/** The first bytes of a file, decoded: for delimiter, section and time-zone detection. */
export async function readHead(filePath: string, bytes = 256 * 1024): Promise<{ text: string; encoding: CsvEncoding }> {
  const handle = await open(filePath, 'r');
  try {
    const buffer = Buffer.alloc(bytes);
    const { bytesRead } = await handle.read(buffer, 0, bytes, 0);
    const decoder = new CsvTextDecoder();
    const text = decoder.decode(buffer.subarray(0, bytesRead));
    return { text, encoding: decoder.encoding };
  } finally {
    await handle.close();
  }
}

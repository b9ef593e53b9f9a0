/**
 * Reads a spooled CSV file as a stream of parsed rows, in byte chunks cut at line feeds, and says
 * after each chunk whether its end is a record boundary (no quoted field open). Those boundaries are
 * the resume points of a CSV job: a restarted worker continues from the last committed one.
 */
import { open } from 'node:fs/promises';
import { CsvRowParser, CsvTextDecoder, type CsvDelimiter, type CsvEncoding } from '@bioprocess/shared/csv/index';

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

export interface ReadRecordsOptions {
  filePath: string;
  delimiter: CsvDelimiter;
  startByte?: number;
  /** Forces the decoding (a resumed read uses the encoding the first pass settled on). */
  encoding?: CsvEncoding;
  signal?: AbortSignal;
}

export async function* readRecords(options: ReadRecordsOptions): AsyncGenerator<RecordBatch> {
  const handle = await open(options.filePath, 'r');
  try {
    const decoder = new CsvTextDecoder();
    if (options.encoding === 'latin1') decoder.encoding = 'latin1';
    const parser = new CsvRowParser({ delimiter: options.delimiter });
    let position = options.startByte ?? 0;
    let carry: Buffer = Buffer.alloc(0);
    const buffer = Buffer.allocUnsafe(READ_CHUNK_BYTES);
    for (;;) {
      if (options.signal?.aborted) throw new Error('ingest-worker is shutting down');
      const { bytesRead } = await handle.read(buffer, 0, READ_CHUNK_BYTES, position);
      if (bytesRead === 0) break;
      position += bytesRead;
      const bytes = carry.length > 0 ? Buffer.concat([carry, buffer.subarray(0, bytesRead)]) : Buffer.from(buffer.subarray(0, bytesRead));
      const lastLf = bytes.lastIndexOf(LF);
      if (lastLf === -1) {
        carry = bytes;
        continue;
      }
      carry = Buffer.from(bytes.subarray(lastLf + 1));
      const text = decoder.decode(bytes.subarray(0, lastLf + 1));
      const rows = parser.isPlain(text) ? null : parser.push(text);
      yield { rows, text, byteEnd: position - carry.length, boundary: parser.pendingLength === 0 };
    }
    const tail = carry.length > 0 ? decoder.decode(carry) : '';
    const text = tail + decoder.end();
    const rows = text.length > 0 ? parser.push(text) : [];
    rows.push(...parser.end());
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

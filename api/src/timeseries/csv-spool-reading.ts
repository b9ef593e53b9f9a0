/**
 * The upload's reading choices applied to its spooled file before a job exists: a file that is not
 * text is refused with what it looks like, and a file read with a preamble, a table end or a UTF-16
 * encoding is rewritten once as its table in UTF-8 (TableCutter), so the worker reads exactly the
 * table the preview showed (a table without a header row gets the upload's column names as its
 * header), a plate grid named by `plate_grid` as its one row per read (PlateGridCutter), and a
 * multi-section file read at another data section than its first as that section (DataSectionCutter). Streaming,
 * one pass: memory stays flat whatever the file's size.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { Transform, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { byteOrderMark, CsvTextDecoder, DataSectionCutter, TableCutter, detectCsvLayout, headerLineOf, sniffBinary } from '@bioprocess/shared/csv/index';
import type { CsvReading } from '@bioprocess/shared/timeseries';
import path from 'node:path';
import { syncToDisk } from '@bioprocess/shared/server/sync-to-disk';
import { notAPlateGridMessage, PlateGridCutter } from '@bioprocess/shared/csv/plate-grid';
import type { LineCutter } from '@bioprocess/shared/csv/line-cutter';
import { badRequest } from '../platform/http-error.ts';

const HEAD_BYTES = 256 * 1024;

async function readHead(filePath: string): Promise<{ bytes: Buffer; partial: boolean }> {
  const handle = await open(filePath, 'r');
  try {
    const buffer = Buffer.alloc(HEAD_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, HEAD_BYTES, 0);
    return { bytes: buffer.subarray(0, bytesRead), partial: bytesRead === HEAD_BYTES };
  } finally {
    await handle.close();
  }
}

/**
 * Whether the spool must be rewritten: anything but a file read from its first line as UTF-8 or
 * Latin-1. A UTF-16 file always is, chosen or not: the worker resumes a job at byte offsets it counts
 * in UTF-8 or Latin-1.
 */
function needsCut(reading: CsvReading | undefined, head: Uint8Array): boolean {
  if (isUtf16(reading, head)) return true;
  if (reading?.plate_grid === true) return true;
  if (!reading) return false;
  return (reading.header_line ?? 1) > 1 || reading.table_end || reading.column_names !== undefined;
}

function isUtf16(reading: CsvReading | undefined, head: Uint8Array): boolean {
  const mark = byteOrderMark(head);
  if (mark && mark.encoding !== 'utf-8') return true;
  return reading?.encoding === 'utf-16le' || reading?.encoding === 'utf-16be';
}

/** Refuses a spooled file that is not text (400 with what it looks like). */
export async function refuseBinarySpool(filePath: string): Promise<void> {
  const { bytes } = await readHead(filePath);
  const problem = sniffBinary(bytes.subarray(0, 64 * 1024));
  if (problem) throw badRequest(problem);
}

/** Rewrites the spooled file as its table in UTF-8 when the reading calls for it; answers the new size. */
export async function cutSpoolToTable(filePath: string, reading: CsvReading | undefined, size: number): Promise<number> {
  const head = await readHead(filePath);
  if (!needsCut(reading, head.bytes)) return size;
  const detected = detectCsvLayout(head.bytes, { partial: head.partial, encoding: reading?.encoding, delimiter: reading?.delimiter, header_line: reading?.header_line ?? 1 });
  if (!detected.ok) throw badRequest(detected.message);
  // A multi-section file (DASware) is left whole when its first data section is read: the worker's
  // reader finds that section itself. Another one (DASGIP's unit 3, chosen under Block) is cut out with
  // the sections before the data, so the worker finds it first and reads nothing of the other units;
  // so is any section of a UTF-16 file, which is rewritten anyway. The header line the reading names
  // may lie past the head read here: the cutter checks it.
  if (detected.layout.section !== null) {
    const firstHeaderLine = detected.layout.blocks[0]?.header_line ?? detected.layout.header_line;
    const headerLine = reading?.header_line ?? firstHeaderLine;
    if (headerLine === firstHeaderLine && !isUtf16(reading, head.bytes)) return size;
    return rewriteSpool(filePath, new CsvTextDecoder({ encoding: reading?.encoding ?? detected.layout.encoding }), new DataSectionCutter(headerLine));
  }
  if (reading?.plate_grid === true) {
    // The grid's wells become one row (plate-grid.ts); the preview showed the same table.
    if (!detected.layout.grid) throw badRequest(notAPlateGridMessage(reading.header_line ?? 1));
    const grid = new PlateGridCutter({ headerLine: reading.header_line ?? 1, delimiter: reading.delimiter ?? detected.layout.delimiter });
    return rewriteSpool(filePath, new CsvTextDecoder({ encoding: reading.encoding ?? detected.layout.encoding }), grid);
  }
  const decoder = new CsvTextDecoder({ encoding: reading?.encoding ?? detected.layout.encoding });
  const delimiter = reading?.delimiter ?? detected.layout.delimiter;
  // A table without a header row gets the names the upload gives as its header line.
  const headerText = reading?.column_names ? headerLineOf(reading.column_names, delimiter) : undefined;
  const cutter = new TableCutter({
    headerLine: reading?.header_line ?? 1, tableEnd: reading?.table_end ?? false, delimiter, headerText,
  });
  return rewriteSpool(filePath, decoder, cutter);
}

/**
 * Writes the spooled file again as what `cutter` makes of its decoded text, in UTF-8, streaming;
 * answers the new size. Once the cutter is finished the rest of the file is not decoded. A cutter's
 * error (lines that are not the plate grid the upload names) is the client's: a 400.
 */
async function rewriteSpool(filePath: string, decoder: CsvTextDecoder, cutter: LineCutter): Promise<number> {
  let written = 0;
  const toTable = new Transform({
    transform(chunk: Buffer, _encoding, callback: TransformCallback) {
      try {
        const bytes = cutter.finished ? Buffer.alloc(0) : Buffer.from(cutter.push(decoder.decode(chunk)), 'utf8');
        written += bytes.length;
        callback(null, bytes);
      } catch (error) {
        callback(badRequest((error as Error).message));
      }
    },
    flush(callback: TransformCallback) {
      try {
        const bytes = Buffer.from(cutter.finished ? '' : cutter.push(decoder.end()) + cutter.end(), 'utf8');
        written += bytes.length;
        callback(null, bytes);
      } catch (error) {
        callback(badRequest((error as Error).message));
      }
    },
  });
  const target = `${filePath}.table`;
  try {
    await pipeline(createReadStream(filePath), toTable, createWriteStream(target, { flags: 'wx' }));
    await rename(target, filePath);
    await syncToDisk(filePath, path.dirname(filePath));
  } catch (error) {
    await rm(target, { force: true });
    throw error;
  }
  return written;
}

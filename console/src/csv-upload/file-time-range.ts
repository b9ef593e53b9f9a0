/**
 * The first and last reading of a chosen file, found in the browser before anything is mapped, so the
 * wizard can ask the api whether the upload fits on the equipment (window-check). The first reading
 * comes from the rows the preview already parsed; the last from the file's final bytes (File.slice),
 * cut at a line break and parsed with the shared row parser, the preview's delimiter and column, and
 * the same timestamp reading as the preview's (format, zone, or elapsed time from the start). Only
 * readings that parse count; when the end cannot be read the range is unknown, and the upload decides.
 */
import {
  createTimestampParser, decimalCommaAllowed, elapsedCellToEpochMs, parseCsvRows, parseTimeZone, type CsvDelimiter, type TimestampDetection,
} from '@bioprocess/shared/csv/index';
import type { ElapsedUnit } from '@bioprocess/shared/timeseries';
import type { PreviewSource } from './read-preview.ts';

/** Bytes read from the end of the file for its last reading. */
export const TAIL_BYTES = 256 * 1024;

export const FILE_RANGE_MESSAGES = {
  noTimestampColumn: 'No timestamp column is chosen yet.',
  elapsedNeedsStart: "Elapsed time needs the unit operation's start.",
  firstUnreadable: "The file's first timestamps do not read.",
  lastUnreadable: "The file's last lines do not hold a timestamp that reads here.",
  encodingUnsupported: "The file's end cannot be read here in its encoding (UTF-16).",
  readFailed: "The file's end could not be read.",
} as const;

export type FileTimeRange = { known: true; firstMs: number; lastMs: number } | { known: false; reason: string };

/** How the timestamp column reads: the preview's choices, as the mapping will send them. */
export interface TimestampReading {
  /** The column's position in a row (the preview's header index). */
  columnIndex: number;
  delimiter: CsvDelimiter;
  mode: 'absolute' | 'elapsed';
  detection: Pick<TimestampDetection, 'format' | 'order' | 'dayFirst'> | null;
  zone: string;
  elapsedUnit: ElapsedUnit;
  /** The unit operation's start, epoch ms: elapsed time counts from it. */
  startMs: number | null;
}

type CellReader = (raw: string, previous?: number) => number | null;

function cellReader(reading: TimestampReading): CellReader | string {
  const decimalComma = decimalCommaAllowed(reading.delimiter);
  if (reading.mode === 'elapsed') {
    const startMs = reading.startMs;
    if (startMs === null) return FILE_RANGE_MESSAGES.elapsedNeedsStart;
    return (raw) => elapsedCellToEpochMs(raw, reading.elapsedUnit, startMs, { decimalComma });
  }
  const timeZone = parseTimeZone(reading.zone);
  if (!reading.detection || !timeZone) return FILE_RANGE_MESSAGES.firstUnreadable;
  return createTimestampParser(reading.detection, { timeZone, decimalComma });
}

/** The earliest and latest instant among the rows' timestamp cells (rows in file order), or null when none reads. */
export function readingSpan(rows: readonly (readonly string[])[], columnIndex: number, read: CellReader): { firstMs: number; lastMs: number } | null {
  let firstMs = Number.POSITIVE_INFINITY;
  let lastMs = Number.NEGATIVE_INFINITY;
  let previous: number | undefined;
  for (const row of rows) {
    const raw = row[columnIndex]?.trim() ?? '';
    if (raw === '') continue;
    const instant = read(raw, previous);
    if (instant === null || Number.isNaN(instant)) continue;
    previous = instant;
    if (instant < firstMs) firstMs = instant;
    if (instant > lastMs) lastMs = instant;
  }
  return Number.isFinite(firstMs) ? { firstMs, lastMs } : null;
}

const LF = 10;

/** The complete lines of the file's last bytes: from the first line break on (the line it cuts is dropped). */
async function tailText(file: PreviewSource, encoding: string): Promise<string | null> {
  const start = Math.max(0, file.size - TAIL_BYTES);
  const bytes = new Uint8Array(await file.slice(start, file.size).arrayBuffer());
  const cut = bytes.indexOf(LF);
  if (cut === -1) return null;
  // A line feed byte never occurs inside a UTF-8 sequence, so the bytes after it decode cleanly.
  const lines = bytes.subarray(cut + 1);
  return encoding === 'latin1' ? new TextDecoder('latin1').decode(lines) : new TextDecoder('utf-8').decode(lines);
}

/**
 * The file's first and last reading. `headRows` are the rows the preview parsed from the start of the
 * file (every row of a file read whole, `partial` false); a partial preview reads the end as well.
 */
export async function readFileTimeRange(
  file: PreviewSource,
  preview: { headRows: readonly (readonly string[])[]; partial: boolean; encoding: string },
  reading: TimestampReading,
): Promise<FileTimeRange> {
  if (reading.columnIndex < 0) return { known: false, reason: FILE_RANGE_MESSAGES.noTimestampColumn };
  const read = cellReader(reading);
  if (typeof read === 'string') return { known: false, reason: read };
  const head = readingSpan(preview.headRows, reading.columnIndex, read);
  if (!head) return { known: false, reason: FILE_RANGE_MESSAGES.firstUnreadable };
  if (!preview.partial) return { known: true, ...head };
  if (preview.encoding.startsWith('utf-16')) return { known: false, reason: FILE_RANGE_MESSAGES.encodingUnsupported };
  let text: string | null;
  try {
    text = await tailText(file, preview.encoding);
  } catch (error) {
    console.error("Failed to read the CSV file's end", error);
    return { known: false, reason: FILE_RANGE_MESSAGES.readFailed };
  }
  let tail: { firstMs: number; lastMs: number } | null;
  try {
    tail = text === null ? null : readingSpan(parseCsvRows(text, reading.delimiter), reading.columnIndex, read);
  } catch {
    // A line past the line limit: the upload refuses it with its own message.
    tail = null;
  }
  if (!tail) return { known: false, reason: FILE_RANGE_MESSAGES.lastUnreadable };
  return { known: true, firstMs: Math.min(head.firstMs, tail.firstMs), lastMs: Math.max(head.lastMs, tail.lastMs) };
}

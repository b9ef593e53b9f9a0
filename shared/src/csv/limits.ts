/**
 * The bounds that keep reading a CSV linear in its size: the widest header, the longest line (or quoted
 * field running over lines). A hostile file hits one of them with a message naming it instead of
 * making the reader's work grow with the square of its size.
 */
import { CSV_LIMITS, formatByteSize } from './messages.ts';

export interface CsvReadLimits {
  /** Columns a header may have (CSV_LIMITS.defaultMaxColumns). */
  maxColumns?: number;
  /** Characters (bytes, where the reader sees bytes) one line or record may have (CSV_LIMITS.defaultMaxLineBytes). */
  maxLineBytes?: number;
}

/** A read limit was exceeded; `message` is the user-facing text. */
export class CsvLimitError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CsvLimitError';
  }
}

/** 1048576 -> '1 MiB', 65536 -> '64 KiB'. */
function binarySize(bytes: number): string {
  return formatByteSize(bytes).replace(/^([\d.]+)([KMGT])B$/, '$1 $2iB').replace(/^(\d+)B$/, '$1 bytes');
}

/** 'Line 3 is longer than 1 MiB; ...': `line` is 1-based, counted in the file. */
export function lineTooLongMessage(line: number, maxBytes: number = CSV_LIMITS.defaultMaxLineBytes): string {
  return `Line ${line.toLocaleString('en-US')} is longer than ${binarySize(maxBytes)}; a line, or a quoted field running over several lines, may have at most ${maxBytes.toLocaleString('en-US')} bytes`;
}

/** 'The header has 50,000 columns; at most 10,000 columns are allowed'. */
export function tooManyColumnsMessage(columns: number, maxColumns: number = CSV_LIMITS.defaultMaxColumns): string {
  return `The header has ${columns.toLocaleString('en-US')} columns; at most ${maxColumns.toLocaleString('en-US')} columns are allowed`;
}

/** Throws CsvLimitError when a header row is wider than allowed. */
export function checkColumnCount(columns: number, maxColumns: number = CSV_LIMITS.defaultMaxColumns): void {
  if (columns > maxColumns) throw new CsvLimitError(tooManyColumnsMessage(columns, maxColumns));
}

/** Line feeds in text[from, to). */
export function countLineFeeds(text: string, from = 0, to = text.length): number {
  let count = 0;
  for (let index = text.indexOf('\n', from); index !== -1 && index < to; index = text.indexOf('\n', index + 1)) count += 1;
  return count;
}

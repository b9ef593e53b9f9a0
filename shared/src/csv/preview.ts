/**
 * The console's preview: the first rows of a file's first part (a 1 GiB file previews from its first
 * bytes), with the delimiter detected, a multi-section file reduced to its data table, sanitised
 * unique headers and rows fitted to the header width. A header wider than the column limit, or a
 * line longer than the line limit, throws CsvLimitError with the message the upload would fail with.
 */
import { CSV_LIMITS } from './messages.ts';
import { detectDelimiter } from './delimiter.ts';
import { parseCsvRows, type CsvDelimiter } from './row-parser.ts';
import { fitRowToWidth, truncateRowToWidth } from './row-shape.ts';
import { sanitizeHeaders } from './headers.ts';
import { findDataSection } from './sections.ts';
import { checkColumnCount } from './limits.ts';

export interface CsvPreviewOptions {
  /** Data rows to return (default 10, the dialog's preview size). */
  maxRows?: number;
  /** The text is a cut prefix of a larger file: its last, possibly cut, record is ignored. */
  partial?: boolean;
  /**
   * Pad short rows to the header's width (default true). A caller asking for every row of the text
   * turns it off: padding many short rows to a wide header costs rows x width, not the text's size.
   */
  padRows?: boolean;
  /** Columns the header may have (default CSV_LIMITS.defaultMaxColumns). */
  maxColumns?: number;
}

export interface CsvPreview {
  delimiter: CsvDelimiter;
  /** The data section's name for a multi-section file (e.g. 'TrackData1'), else null. */
  section: string | null;
  /** The header cells as written (quotes removed by the parser). */
  rawHeaders: string[];
  /** Sanitised, unique column names: the names the mapping uses. */
  headers: string[];
  /** Up to maxRows data rows, each exactly as wide as the header (at most as wide without padRows). */
  rows: string[][];
  /** Data rows found in the text (all of them, not just those returned). */
  rowsParsed: number;
}

/** Parses the preview; returns null when the text has no header row. */
export function parseCsvPreview(text: string, options: CsvPreviewOptions = {}): CsvPreview | null {
  const maxRows = options.maxRows ?? CSV_LIMITS.previewRows;
  const partial = options.partial ?? false;
  const content = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const section = findDataSection(content);
  const table = section ? section.text : content;
  // A section that ended before the text's end is complete even when the text is a cut prefix.
  const tablePartial = partial && (!section || section.endOffset === content.length);
  const delimiter = detectDelimiter(table, { partial: tablePartial });
  let rows = parseCsvRows(table, delimiter, { partial: tablePartial });
  if (rows.length === 0 && tablePartial) rows = parseCsvRows(table, delimiter);
  const header = rows[0];
  if (!header || header.every((cell) => cell.trim() === '')) return null;
  checkColumnCount(header.length, options.maxColumns);
  const width = header.length;
  const fit = options.padRows === false ? truncateRowToWidth : fitRowToWidth;
  return {
    delimiter,
    section: section ? section.name : null,
    rawHeaders: header,
    headers: sanitizeHeaders(header),
    rows: rows.slice(1, 1 + maxRows).map((row) => fit(row, width)),
    rowsParsed: rows.length - 1,
  };
}

/** A preview cell as the dialog shows it: cut at 10 characters plus an ellipsis. */
export function truncatePreviewCell(value: string, maxChars: number = CSV_LIMITS.previewCellChars): string {
  return value.length > maxChars ? `${value.slice(0, maxChars)}...` : value;
}

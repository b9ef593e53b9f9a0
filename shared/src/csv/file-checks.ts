/** The file and content checks of an upload, with the byte and row limits as settings. */
import { CSV_LIMITS, CSV_MESSAGES, fileTooLargeMessage, tooManyRowsMessage } from './messages.ts';
import { containsMaliciousContent } from './malicious-content.ts';
import { CsvLimitError } from './limits.ts';
import { parseCsvPreview } from './preview.ts';

export interface CsvFileInfo {
  name: string;
  size: number;
  /** The MIME type the browser or the multipart part reports; empty or absent when unknown. */
  type?: string | null;
}

export interface CsvFileLimits {
  maxBytes?: number;
}

/**
 * Types accepted as "a csv or text type". application/vnd.ms-excel is what Windows browsers report
 * for a .csv file when Excel is installed, so it counts as CSV too; octet-stream is what curl and
 * some browsers send when they do not know, which is the same as absent.
 */
function isAcceptedType(type: string): boolean {
  const normalised = type.toLowerCase().split(';')[0]!.trim();
  return (
    normalised === '' ||
    normalised.includes('csv') ||
    normalised.startsWith('text/') ||
    normalised === 'application/vnd.ms-excel' ||
    normalised === SPREADSHEET_MIME_TYPE ||
    normalised === 'application/octet-stream'
  );
}

/**
 * Names instruments give their text exports; the content decides how it is read (sniffBinary, then
 * the layout detection), never the name.
 */
export const ACCEPTED_EXTENSIONS = ['.csv', '.txt', '.tsv', '.asc'] as const;
/** Excel workbooks, read one sheet at a time as CSV text (the api converts them). */
export const SPREADSHEET_EXTENSIONS = ['.xlsx'] as const;
export const SPREADSHEET_MIME_TYPE = 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet';

export function isSpreadsheetName(name: string): boolean {
  const lower = name.toLowerCase();
  return SPREADSHEET_EXTENSIONS.some((extension) => lower.endsWith(extension));
}

export function hasAcceptedExtension(name: string): boolean {
  const lower = name.toLowerCase();
  return ACCEPTED_EXTENSIONS.some((extension) => lower.endsWith(extension)) || isSpreadsheetName(name);
}

/** The first failing check's message (extension, size, type, emptiness), or null when the file may be read. */
export function checkCsvFile(file: CsvFileInfo, limits: CsvFileLimits = {}): string | null {
  const maxBytes = limits.maxBytes ?? CSV_LIMITS.defaultMaxBytes;
  if (!hasAcceptedExtension(file.name)) return CSV_MESSAGES.invalidExtension;
  if (file.size > maxBytes) return fileTooLargeMessage(maxBytes);
  if (file.type && !isAcceptedType(file.type)) return CSV_MESSAGES.invalidType;
  if (file.size === 0) return CSV_MESSAGES.fileEmpty;
  return null;
}

export interface CsvContentLimits {
  /** Data rows allowed (header excluded). */
  maxRows?: number;
}

/**
 * Content checks on decoded text: empty, malicious content, header row, and (when the text is the
 * whole file) the row limit. `dataRowCount` lets a caller that already parsed pass the count.
 */
export function checkCsvContent(
  text: string,
  options: CsvContentLimits & { dataRowCount?: number } = {},
): string | null {
  const content = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (content.trim() === '') return CSV_MESSAGES.contentEmpty;
  if (containsMaliciousContent(content)) return CSV_MESSAGES.maliciousContent;
  const firstLine = content.replace(/^[\r\n]+/, '').split(/\r?\n/, 1)[0] ?? '';
  if (firstLine.replace(/[,;\t|"\s]/g, '') === '') return CSV_MESSAGES.headerRequired;
  const maxRows = options.maxRows ?? CSV_LIMITS.defaultMaxRows;
  if (options.dataRowCount !== undefined && options.dataRowCount > maxRows) return tooManyRowsMessage(maxRows);
  return null;
}

/** For streaming readers: the row-limit message once `dataRowCount` exceeds the limit, else null. */
export function checkRowLimit(dataRowCount: number, maxRows: number = CSV_LIMITS.defaultMaxRows): string | null {
  return dataRowCount > maxRows ? tooManyRowsMessage(maxRows) : null;
}

/**
 * The read limits a file's first part shows (its header wider than `maxColumns`, a line in it longer
 * than the line limit): the limit's message, or null. `partial`: the text is a cut prefix of the file.
 */
export function checkCsvHeader(text: string, options: { partial: boolean; maxColumns?: number }): string | null {
  try {
    parseCsvPreview(text, { partial: options.partial, maxRows: 0, maxColumns: options.maxColumns });
    return null;
  } catch (error) {
    if (error instanceof CsvLimitError) return error.message;
    throw error;
  }
}

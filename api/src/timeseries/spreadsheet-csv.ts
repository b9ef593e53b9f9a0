/**
 * One sheet of an Excel workbook (.xlsx) as CSV text, so a spreadsheet export (bioreactor software
 * such as MFCS writes them) goes through the same detection, mapping and ingest as a text export.
 * The workbook is read as a stream (ExcelJS' WorkbookReader): memory holds the shared strings and
 * one row, not the sheet, whatever its length.
 *
 * Cells are written as a person reads them in Excel: numbers in full precision, dates and times as
 * 'yyyy-MM-dd HH:mm:ss[.SSS]' (Excel stores wall-clock times without a zone, so they are read in the
 * zone the upload chooses, like a text export's), formulas as their cached result, rich text as its
 * text, errors ('#DIV/0!') as written, so the row is flagged, not silently emptied.
 */
import type { Readable } from 'node:stream';
import ExcelJS from 'exceljs';
import { z } from 'zod';
import { badRequest } from '../platform/http-error.ts';

export const SPREADSHEET_MESSAGES = {
  notAWorkbook: 'The file is not an Excel workbook (.xlsx): it could not be read as one. Save it as .xlsx or export it as CSV.',
  noSheets: 'The workbook has no sheets.',
  sheetNotFound: (sheet: string, sheets: readonly string[]) => `The workbook has no sheet named '${sheet}'. Its sheets: ${sheets.map((name) => `'${name}'`).join(', ')}.`,
} as const;

/** The multipart field naming the sheet to read; it must come before the file. */
export const SPREADSHEET_SHEET_FIELD = 'sheet';
export const spreadsheetSheetSchema = z.string().min(1).max(200);

export interface SpreadsheetSheets {
  /** Every sheet of the workbook, in its order. */
  names: string[];
  /** The sheet being read. */
  chosen: string;
}

const pad = (value: number, width = 2) => String(value).padStart(width, '0');

function formatExcelDate(date: Date): string {
  // Excel's serial dates carry no zone: ExcelJS gives them as UTC, which is the wall clock written.
  const text = `${date.getUTCFullYear()}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())} ${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}`;
  const ms = date.getUTCMilliseconds();
  return ms === 0 ? text : `${text}.${pad(ms, 3)}`;
}

/** A cell's value as text. */
export function cellText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return Number.isFinite(value) ? String(value) : '';
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? '' : formatExcelDate(value);
  if (typeof value === 'object') {
    const cell = value as { richText?: Array<{ text: string }>; result?: unknown; text?: unknown; error?: string; formula?: string; sharedFormula?: string };
    if (Array.isArray(cell.richText)) return cell.richText.map((run) => run.text).join('');
    if ('formula' in cell || 'sharedFormula' in cell) return cellText(cell.result);
    if (typeof cell.error === 'string') return cell.error;
    if ('text' in cell) return cellText(cell.text);
  }
  return '';
}

function csvField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/** One CSV line (with its line feed) of a row's cells, 1-based as ExcelJS gives them. */
export function csvLineOfCells(values: readonly unknown[]): string {
  const cells: string[] = [];
  for (let column = 1; column < values.length; column += 1) cells.push(csvField(cellText(values[column])));
  return `${cells.join(',')}\n`;
}

/**
 * The CSV lines of one sheet (the first when `sheet` is null), in order; `onSheets` hears the
 * workbook's sheet names before the first line. Blank rows in the middle of the sheet are kept as
 * empty lines (a preamble's gap stays a gap); the trailing ones Excel never wrote are not invented.
 * Throws a 400 for a file that is not a workbook and for a sheet that is not in it.
 */
export async function* spreadsheetCsvLines(input: Readable, sheet: string | null, onSheets: (sheets: SpreadsheetSheets) => void = () => {}): AsyncGenerator<string> {
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(input, { worksheets: 'emit', sharedStrings: 'cache', styles: 'cache', hyperlinks: 'ignore', entries: 'ignore' });
  let announced = false;
  let found = false;
  let names: string[] = [];
  try {
    for await (const worksheet of reader) {
      const model = (reader as unknown as { model?: { sheets?: Array<{ name: string }> } }).model;
      names = (model?.sheets ?? []).map((entry) => entry.name);
      const name = (worksheet as unknown as { name?: string }).name ?? '';
      const wanted = sheet ?? names[0] ?? name;
      if (found || name !== wanted) {
        // Every worksheet entry must be read through for the zip stream to move on.
        for await (const row of worksheet) void row;
        continue;
      }
      found = true;
      if (!announced) {
        onSheets({ names: names.length > 0 ? names : [name], chosen: name });
        announced = true;
      }
      let nextRow = 1;
      for await (const row of worksheet) {
        const { number, values } = row as unknown as { number: number; values: unknown[] };
        for (; nextRow < number; nextRow += 1) yield '\n';
        nextRow = number + 1;
        yield csvLineOfCells(values);
      }
    }
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode) throw error;
    throw badRequest(SPREADSHEET_MESSAGES.notAWorkbook);
  }
  if (!found) {
    if (names.length === 0) throw badRequest(sheet === null ? SPREADSHEET_MESSAGES.noSheets : SPREADSHEET_MESSAGES.notAWorkbook);
    throw badRequest(SPREADSHEET_MESSAGES.sheetNotFound(sheet ?? '', names));
  }
}

/**
 * The first `limit` bytes of a sheet as CSV (whole lines, at least one), for a preview; the rest of
 * the workbook is drained unread. `complete` says whether the sheet ended within them.
 */
export async function spreadsheetHead(input: Readable, sheet: string | null, limit: number): Promise<{ bytes: Buffer; complete: boolean; sheets: SpreadsheetSheets | null }> {
  let sheets: SpreadsheetSheets | null = null;
  const lines: Buffer[] = [];
  let size = 0;
  let complete = true;
  for await (const line of spreadsheetCsvLines(input, sheet, (found) => { sheets = found; })) {
    const bytes = Buffer.from(line, 'utf8');
    if (size + bytes.length > limit && lines.length > 0) {
      complete = false;
      break;
    }
    lines.push(bytes);
    size += bytes.length;
  }
  input.resume();
  return { bytes: Buffer.concat(lines, size), complete, sheets };
}

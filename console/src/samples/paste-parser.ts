/**
 * A paste from a spreadsheet into the samples grid. Spreadsheets copy a block as tab-separated text
 * (quoted where a cell holds a tab, a newline or a quote), read here with papaparse. A first row that
 * names columns (`Sample ID`, `Drawn`, `Notes`, `Glucose [g/L]`, optionally `Glucose [g/L] (Cedex Bio)`
 * for the method) is a header: its block is placed by column name, else the block fills the grid from
 * the active cell.
 */
import Papa from 'papaparse';

export type ColumnSpec =
  | { kind: 'sampleId' }
  | { kind: 'drawnAt' }
  | { kind: 'notes' }
  | { kind: 'result'; analyte: string; unit: string; method: string | null };

export interface ParsedPaste {
  /** The columns named by a header row, in the order pasted (null where a header cell names nothing known). */
  header: Array<ColumnSpec | null> | null;
  rows: string[][];
}

const SAMPLE_ID_HEADERS = /^(sample(\s*(id|name|no\.?|number|#))?|id|tube)$/i;
const DRAWN_HEADERS = /^(drawn(\s*(at|time|on))?|sampl(ed|ing)(\s*(at|time))?|time|date(\s*(and|&)?\s*time)?|timestamp)$/i;
const NOTES_HEADERS = /^(notes?|comments?|remarks?)$/i;
/** `Analyte [unit]`, optionally followed by `(method)`. */
const RESULT_HEADER = /^(.+?)\s*\[([^\]]+)\]\s*(?:\((.+)\))?$/;

/** The column a header cell names, or null when it names none. */
export function parseHeaderCell(text: string): ColumnSpec | null {
  const trimmed = text.trim().replace(/\s+/g, ' ');
  if (SAMPLE_ID_HEADERS.test(trimmed)) return { kind: 'sampleId' };
  if (DRAWN_HEADERS.test(trimmed)) return { kind: 'drawnAt' };
  if (NOTES_HEADERS.test(trimmed)) return { kind: 'notes' };
  const result = RESULT_HEADER.exec(trimmed);
  if (result) return { kind: 'result', analyte: result[1]!.trim(), unit: result[2]!.trim(), method: result[3]?.trim() || null };
  return null;
}

/** The clipboard's text as rows of cells, without the trailing empty line spreadsheets add. */
export function parseClipboardTable(text: string): string[][] {
  const normalized = text.replace(/\r\n?/g, '\n').replace(/\n+$/, '');
  if (normalized === '') return [];
  const parsed = Papa.parse<string[]>(normalized, { delimiter: '\t', skipEmptyLines: false });
  return parsed.data.filter((row) => row.some((cell) => cell.trim() !== ''));
}

/** A first row is a header when it names the sample id or drawn column, or an analyte with its unit. */
export function parsePaste(text: string): ParsedPaste {
  const rows = parseClipboardTable(text);
  const first = rows[0];
  if (!first) return { header: null, rows: [] };
  const header = first.map(parseHeaderCell);
  const isHeader = header.some((spec) => spec !== null && (spec.kind !== 'notes'));
  return isHeader ? { header, rows: rows.slice(1) } : { header: null, rows };
}

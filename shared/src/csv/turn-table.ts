/**
 * Turns a transposed table (time across the columns, one row per well or parameter: plate readers
 * write kinetic reads this way) so that time runs down the rows, as every other step reads a table.
 * The preamble stays as it is, above the turned table (its start time and notes are still found
 * there); the table's rows become columns; whatever follows the table's end or its first blank line
 * (other read blocks, notes) goes: a row is a parameter, so a gap between rows is the block's end.
 * The whole table is held to turn it, so callers bound the text (TURN_TABLE_MAX_BYTES).
 */
import { CsvRowParser, type CsvDelimiter } from './row-parser.ts';
import { TableCutter } from './table-cutter.ts';

/** The largest text turned: plate reads are a few MB; a table turned in memory must stay small. */
export const TURN_TABLE_MAX_BYTES = 32 * 1024 * 1024;

export interface TurnTableLayout {
  header_line: number;
  table_end: { line: number } | null;
  delimiter: CsvDelimiter;
}

function field(cell: string, delimiter: string): string {
  return cell.includes(delimiter) || /["\r\n]/.test(cell) ? `"${cell.replace(/"/g, '""')}"` : cell;
}

/** Where the first line holding nothing but blanks and delimiters starts (the text's length when none does). */
function firstGap(table: string, delimiter: string): number {
  for (let start = 0; start < table.length;) {
    const end = table.indexOf('\n', start);
    const stop = end === -1 ? table.length : end;
    let blank = true;
    for (let index = start; index < stop && blank; index += 1) {
      const character = table[index]!;
      blank = character === delimiter || character === ' ' || character === '\t' || character === '\r';
    }
    if (blank && start > 0) return start;
    if (end === -1) break;
    start = end + 1;
  }
  return table.length;
}

/** The text with its table turned (see above); lines end in '\n'. */
export function turnTable(text: string, layout: TurnTableLayout): string {
  const lines = text.split(/\r?\n/);
  const preamble = lines.slice(0, Math.max(0, layout.header_line - 1));
  const cutter = new TableCutter({ headerLine: layout.header_line, tableEnd: layout.table_end !== null, delimiter: layout.delimiter });
  const parser = new CsvRowParser({ delimiter: layout.delimiter });
  const table = cutter.push(text) + cutter.end();
  const rows = [...parser.push(table.slice(0, firstGap(table, layout.delimiter))), ...parser.end()]
    .filter((row) => row.some((cell) => cell.trim() !== ''));
  let width = 0;
  for (const row of rows) width = Math.max(width, row.length);
  // Trailing delimiters write empty columns after the last read: they would become empty rows.
  while (width > 0 && rows.every((row) => (row[width - 1] ?? '').trim() === '')) width -= 1;
  const turned: string[] = [];
  for (let column = 0; column < width; column += 1) {
    turned.push(rows.map((row) => field(row[column] ?? '', layout.delimiter)).join(layout.delimiter));
  }
  return [...preamble, ...turned].map((line) => `${line}\n`).join('');
}

/**
 * Where a file's table lies among its lines: the header line after a preamble of metadata, and the
 * line that ends the table (a vendor's section marker, Gen5's padding rows). The preview finds them
 * and the api's spooling cuts the file to them with the same rules (TableCutter), so the worker reads
 * exactly the table the preview showed.
 */
import { parseCsvRows, type CsvDelimiter } from './row-parser.ts';

/** Section markers that end a table: `=====process=====` (BioLector Pro), `~End` (SoftMax Pro), `[Events]`. */
const MARKER_LINE = /^\s*(?:=====[^=]{1,80}=====|~End|"?\[[^\]"]{1,80}\]"?)\s*$/;

export function isMarkerLine(line: string): boolean {
  return line.length <= 200 && MARKER_LINE.test(line);
}

/** Excel's hint line `sep=;`: the delimiter for the rest of the file. */
export function excelSeparatorHint(line: string): CsvDelimiter | null {
  const match = /^\s*"?sep=(.)"?\s*$/i.exec(line);
  if (!match) return null;
  const candidate = match[1]!;
  return candidate === ',' || candidate === ';' || candidate === '\t' || candidate === '|' ? candidate : null;
}

/** The cells of one line (quotes understood within it). */
export function lineCells(line: string, delimiter: CsvDelimiter): string[] {
  if (!line.includes(delimiter) && !line.includes('"')) return [line];
  return parseCsvRows(line, delimiter)[0] ?? [''];
}

function nonEmptyCells(cells: readonly string[]): number {
  let count = 0;
  for (const cell of cells) if (cell.trim() !== '') count += 1;
  return count;
}

/**
 * A line after the header that ends the table: a section marker, or a line of one non-empty cell and
 * no delimiter (Gen5 pads its kinetic table with `0:00:00` lines; a block title such as `Results`).
 * Blank lines do not end a table.
 */
export function endsTable(line: string, delimiter: CsvDelimiter): boolean {
  if (line.trim() === '') return false;
  if (isMarkerLine(line)) return true;
  return !line.includes(delimiter);
}

/** Lines after a header candidate that are looked at to score it: enough to tell a table from a preamble. */
const RUN_LOOKAHEAD = 100;

export interface HeaderChoice {
  /** 0-based index of the header among the lines. */
  index: number;
  /** Data lines that follow it before the table ends (at most RUN_LOOKAHEAD). */
  run: number;
  width: number;
}

/**
 * The header among `lines` (each already split into cells with one delimiter): the line of two or
 * more non-empty cells that starts the longest run of table lines (non-blank lines of two or more
 * cells, at most one cell wider than it), the earliest on a tie. Preamble lines are short runs: key
 * and value pairs of varying widths broken by blank lines and markers.
 */
export function chooseHeaderLine(rows: readonly (readonly string[])[], lines: readonly string[]): HeaderChoice | null {
  let best: HeaderChoice | null = null;
  for (let index = 0; index < rows.length; index += 1) {
    const cells = rows[index]!;
    // A header names most of its columns: `;;;;;;SET O2 [%];20.95` is a preamble line padded to the table's width.
    const named = nonEmptyCells(cells);
    if (cells.length < 2 || named < 2 || named * 2 < cells.length - 1 || isMarkerLine(lines[index]!)) continue;
    const width = cells.length;
    let run = 0;
    for (let next = index + 1; next < rows.length && run < RUN_LOOKAHEAD; next += 1) {
      const line = lines[next]!;
      if (line.trim() === '') break;
      const row = rows[next]!;
      if (row.length < 2 || row.length > width + 1 || isMarkerLine(line)) break;
      run += 1;
    }
    if (!best || run > best.run) best = { index, run, width };
    if (best.run >= RUN_LOOKAHEAD) break;
  }
  return best;
}

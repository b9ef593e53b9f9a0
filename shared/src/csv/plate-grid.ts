/**
 * Endpoint plate grids: one read of a plate written as the plate looks, row letters down and column
 * numbers across (BMG MARS `,1,2,...,12` over rows `A`..`H`; Tecan i-control's `<>` corner; SoftMax
 * Pro's plates, whose rows carry no letter and sit in plate order). A grid is read as one reading per
 * well: a one-row table `Read time, A1, A2, ..., H12` whose time is the elapsed clock `0:00:00` after the
 * read time the file states (or the user gives), so everything after it (mapping, the `wells` rule, the worker's
 * pass, flags) is the same as for a wide table. Empty wells are left out; any other cell is copied as
 * written, so a flag such as `OVRFLW` is counted by the worker like any flagged cell.
 *
 * A grid is at most 32 rows of 48 wells (1536-well plates), so reading one holds at most a few dozen
 * lines; the api's spool cut (PlateGridCutter) streams the rest of the file past unread.
 */
import { isMarkerLine, lineCells } from './layout-lines.ts';
import { LineCutter } from './line-cutter.ts';
import type { CsvDelimiter } from './row-parser.ts';
import { wallClockOf, type PreambleStart } from './preamble.ts';

/** The column of the table a grid becomes that holds its one read time (`0:00:00` after the stated time). */
export const PLATE_GRID_TIME_COLUMN = 'Read time';

/** The read time's cell: an elapsed clock, which the time detection reads as elapsed time whatever its unit. */
const PLATE_GRID_ELAPSED = '0:00:00';

/** Plate rows of the standard formats, by their number of columns (6, 12, 24, 48, 96, 384, 1536 wells). */
const STANDARD_ROWS: Readonly<Record<number, number>> = { 3: 2, 4: 3, 6: 4, 8: 6, 12: 8, 24: 16, 48: 32 };

/** The most rows a grid has (a 1536-well plate: A-Z, AA-AF). */
export const PLATE_GRID_MAX_ROWS = 32;

export interface PlateGrid {
  /** Plate rows read and their number of columns. */
  rows: number;
  columns: number;
  /** `letters`: each row starts with its letter; `positions`: rows carry no letter and are in plate order (SoftMax Pro). */
  row_labels: 'letters' | 'positions';
  /** Wells with a value, in file order (A1, A2, ..., H12), and their cells as written. */
  wells: string[];
  values: string[];
  /** Wells whose cell is empty: left out. */
  empty_wells: number;
  /** 1-based lines of the grid's header and of its last row. */
  header_line: number;
  last_line: number;
}

/** The letters of plate row `index` (0: A, 25: Z, 26: AA). */
export function plateRowLabel(index: number): string {
  return index < 26 ? String.fromCharCode(65 + index) : `${String.fromCharCode(64 + Math.floor(index / 26))}${String.fromCharCode(65 + (index % 26))}`;
}

/** Where the column numbers 1..N start in a header row, and N; null when the row is not a grid's header. */
export function plateColumnsOf(header: readonly string[]): { first: number; count: number } | null {
  const first = header.findIndex((cell) => cell.trim() === '1');
  if (first < 1) return null;
  let count = 0;
  while (first + count < header.length && header[first + count]!.trim() === String(count + 1)) count += 1;
  // After the numbers only empty cells (SoftMax Pro and MARS end their lines with a delimiter).
  for (let index = first + count; index < header.length; index += 1) if (header[index]!.trim() !== '') return null;
  return STANDARD_ROWS[count] !== undefined ? { first, count } : null;
}

/**
 * The grid whose header is `lines[0]` (1-based line `headerLine` of the file), or null when the lines
 * are not a grid. The grid ends at its first blank line, marker or one-cell line, or at a row whose
 * letter is not the next one; lines after that are not looked at.
 */
export function readPlateGrid(lines: readonly string[], delimiter: CsvDelimiter, headerLine: number): PlateGrid | null {
  if (lines.length < 3) return null;
  const plate = plateColumnsOf(lineCells(lines[0]!, delimiter));
  if (!plate) return null;
  const rows: string[][] = [];
  let labels: PlateGrid['row_labels'] | null = null;
  for (let index = 1; index < lines.length && rows.length < PLATE_GRID_MAX_ROWS; index += 1) {
    const line = lines[index]!;
    if (line.trim() === '' || isMarkerLine(line) || !line.includes(delimiter)) break;
    const cells = lineCells(line, delimiter);
    const label = cells[0]!.trim();
    if (labels === null) {
      if (label === 'A') labels = 'letters';
      else if (label === '') labels = 'positions';
      else return null;
    }
    if (labels === 'letters' ? label !== plateRowLabel(rows.length) : label !== '') break;
    rows.push(cells);
  }
  if (labels === null || rows.length < 2) return null;
  // Rows without letters are a plate only when there are as many as the plate format has.
  if (labels === 'positions' && rows.length !== STANDARD_ROWS[plate.count]) return null;
  const wells: string[] = [];
  const values: string[] = [];
  let empty = 0;
  rows.forEach((cells, rowIndex) => {
    for (let column = 0; column < plate.count; column += 1) {
      const cell = (cells[plate.first + column] ?? '').trim();
      if (cell === '') {
        empty += 1;
        continue;
      }
      wells.push(`${plateRowLabel(rowIndex)}${column + 1}`);
      values.push(cell);
    }
  });
  return {
    rows: rows.length, columns: plate.count, row_labels: labels, wells, values, empty_wells: empty,
    header_line: headerLine, last_line: headerLine + rows.length,
  };
}

function quoted(cell: string, delimiter: CsvDelimiter): string {
  return cell.includes(delimiter) || cell.includes('"') || cell.includes('\n') || cell.includes('\r') ? `"${cell.replace(/"/g, '""')}"` : cell;
}

/**
 * The grid as the table the upload reads: a header `Read time, <wells>` and one row `0:00:00, <values>`,
 * in the file's delimiter (so a decimal comma stays one).
 */
export function plateGridTable(grid: PlateGrid, delimiter: CsvDelimiter): string {
  const header = [PLATE_GRID_TIME_COLUMN, ...grid.wells].join(delimiter);
  const row = [PLATE_GRID_ELAPSED, ...grid.values.map((value) => quoted(value, delimiter))].join(delimiter);
  return `${header}\n${row}\n`;
}

/** The message when an upload names a plate grid where the file has none. */
export function notAPlateGridMessage(headerLine: number): string {
  return `Line ${headerLine} does not start a plate grid (a row of column numbers 1, 2, 3... over rows A, B, C...): read it as a table instead.`;
}

const SAVED_AT = /Date Last Saved:\s*([^;\t]{6,40})/;

/**
 * The time a file states after its blocks when it states none above them: SoftMax Pro's footer
 * `Date Last Saved: 11/27/2023 10:43:25 AM`. `firstLine` is the 1-based number of lines[0].
 */
export function findFooterTime(lines: readonly string[], firstLine: number, preferDayFirst = false): PreambleStart | null {
  for (let index = lines.length - 1; index >= 0; index -= 1) {
    const line = lines[index]!;
    if (line.length > 600) continue;
    const match = SAVED_AT.exec(line);
    if (!match) continue;
    const wallClock = wallClockOf(match[1]!.trim(), preferDayFirst);
    if (wallClock) return { wallClock, line: firstLine + index, text: `Date Last Saved: ${match[1]!.trim()}` };
  }
  return null;
}

/**
 * Streaming cut for the api's spool: drops the lines before the grid's header, keeps the grid's lines
 * (at most PLATE_GRID_MAX_ROWS + 1, each bounded by the upload's line limit) and, once the grid has
 * ended, answers it as the table plateGridTable writes. Everything after the grid is skipped.
 */
export class PlateGridCutter extends LineCutter {
  private line = 1;
  private readonly kept: string[] = [];
  private done = false;
  private output: string | null = null;

  constructor(private readonly options: { headerLine: number; delimiter: CsvDelimiter }) {
    super();
  }

  get finished(): boolean {
    return this.done;
  }

  /** Nothing until the grid has ended, then the whole table. Throws when the lines are not a grid. */
  protected acceptLine(line: string): string {
    return this.accept(line.replace(/\r?\n$/, '')) ? this.finish() : '';
  }

  /** The table, when the input ended inside the grid. */
  override end(): string {
    const last = super.end();
    return this.done ? last : this.finish();
  }

  /** True once the grid has ended. */
  private accept(line: string): boolean {
    const number = this.line;
    this.line += 1;
    if (number < this.options.headerLine) return false;
    const isHeader = number === this.options.headerLine;
    if (!isHeader && (line.trim() === '' || isMarkerLine(line) || !line.includes(this.options.delimiter))) return true;
    this.kept.push(line);
    return this.kept.length > PLATE_GRID_MAX_ROWS;
  }

  private finish(): string {
    if (this.output !== null) return '';
    this.done = true;
    const grid = readPlateGrid(this.kept, this.options.delimiter, this.options.headerLine);
    if (!grid) throw new Error(notAPlateGridMessage(this.options.headerLine));
    this.output = plateGridTable(grid, this.options.delimiter);
    return this.output;
  }
}

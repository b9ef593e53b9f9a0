/**
 * Cuts a file's text to its table as the layout detection found it (or the user chose): lines before
 * the header line are the preamble and go, and with `tableEnd` the first line that ends the table
 * (a section marker, a one-cell line: endsTable) and everything after it go too. Text in, text out,
 * line by line as it streams (LineCutter): the api writes the upload's spool through it, so the worker reads the
 * table the preview showed.
 */
import { endsTable } from './layout-lines.ts';
import { LineCutter } from './line-cutter.ts';
import type { CsvDelimiter } from './row-parser.ts';

export interface TableCutOptions {
  /** 1-based line of the header; lines before it are dropped. */
  headerLine: number;
  /** Stop at the first line after the header that ends the table. */
  tableEnd: boolean;
  delimiter: CsvDelimiter;
  /**
   * A table without a header row: this header line (ending in a line feed) is written before the
   * line at `headerLine`, which is then the first data row.
   */
  headerText?: string;
}

export class TableCutter extends LineCutter {
  private line = 1;
  private done = false;

  constructor(private readonly options: TableCutOptions) {
    super();
  }

  get finished(): boolean {
    return this.done;
  }

  protected acceptLine(line: string): string {
    const number = this.line;
    this.line += 1;
    if (number < this.options.headerLine) return '';
    if (number > this.options.headerLine && this.options.tableEnd && endsTable(line.replace(/\r?\n$/, ''), this.options.delimiter)) {
      this.done = true;
      return '';
    }
    if (number === this.options.headerLine && this.options.headerText !== undefined) return this.options.headerText + line;
    return line;
  }
}

/**
 * Cuts a file's text to its table as the layout detection found it (or the user chose): lines before
 * the header line are the preamble and go, and with `tableEnd` the first line that ends the table
 * (a section marker, a one-cell line: endsTable) and everything after it go too. Text in, text out,
 * line by line as it streams: the api writes the upload's spool through it, so the worker reads the
 * table the preview showed. Linear: each character is looked at once, a cut line is kept as pieces.
 */
import { endsTable } from './layout-lines.ts';
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

export class TableCutter {
  private line = 1;
  private pending: string[] = [];
  private done = false;

  constructor(private readonly options: TableCutOptions) {}

  /** True once the table has ended: the rest of the input can be skipped. */
  get finished(): boolean {
    return this.done;
  }

  push(text: string): string {
    if (this.done) return '';
    let output = '';
    let start = 0;
    for (let end = text.indexOf('\n', start); end !== -1; end = text.indexOf('\n', start)) {
      const piece = text.slice(start, end + 1);
      start = end + 1;
      const whole = this.pending.length > 0 ? this.pending.join('') + piece : piece;
      this.pending = [];
      const kept = this.acceptLine(whole);
      if (kept === null) return output;
      output += kept;
    }
    if (start < text.length) this.pending.push(text.slice(start));
    return output;
  }

  end(): string {
    if (this.done || this.pending.length === 0) return '';
    const last = this.pending.join('');
    this.pending = [];
    return this.acceptLine(last) ?? '';
  }

  /** The line as kept ('' when dropped), or null when it ends the table. */
  private acceptLine(line: string): string | null {
    const number = this.line;
    this.line += 1;
    if (number < this.options.headerLine) return '';
    if (number > this.options.headerLine && this.options.tableEnd && endsTable(line.replace(/\r?\n$/, ''), this.options.delimiter)) {
      this.done = true;
      return null;
    }
    if (number === this.options.headerLine && this.options.headerText !== undefined) return this.options.headerText + line;
    return line;
  }
}

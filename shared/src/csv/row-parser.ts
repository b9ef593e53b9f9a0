/**
 * The CSV row parser: an incremental class for the ingest-worker (feed decoded chunks, get complete
 * rows; quoted fields may span chunks and lines) and a one-shot helper for previews and detection.
 *
 * Speed matters (files of tens of millions of rows), so a line without any quote character is cut
 * with indexOf and String#split; only lines with quotes go through the character-level state machine.
 * Empty lines are skipped. A quote opens a quoted field only at the start of a field; anywhere else it
 * is kept as a literal character, as instrument exports write them (5" tubing).
 */
export const CSV_DELIMITERS = [',', ';', '\t', '|'] as const;
export type CsvDelimiter = (typeof CSV_DELIMITERS)[number];

const QUOTE = 34;
const LF = 10;
const CR = 13;

export interface CsvRowParserOptions {
  delimiter: CsvDelimiter;
}

/**
 * Calls `visit` with the bounds of each line of quote-free text, without its line break (LF or CRLF);
 * empty lines are skipped.
 */
export function forEachPlainLine(text: string, visit: (start: number, end: number) => void): void {
  const length = text.length;
  let start = 0;
  while (start < length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = length;
    const next = end + 1;
    if (end > start && text.charCodeAt(end - 1) === CR) end -= 1;
    if (end > start) visit(start, end);
    start = next;
  }
}

export class CsvRowParser {
  readonly delimiter: CsvDelimiter;
  private readonly delimiterCode: number;
  /** Text received but not yet turned into rows: the start of an incomplete record. */
  private pending = '';
  private ended = false;

  constructor(options: CsvRowParserOptions) {
    this.delimiter = options.delimiter;
    this.delimiterCode = options.delimiter.charCodeAt(0);
  }

  /** Characters held back waiting for the rest of their record (useful for progress accounting). */
  get pendingLength(): number {
    return this.pending.length;
  }

  /** Feeds the next decoded chunk and returns the rows it completed (possibly none). */
  push(chunk: string): string[][] {
    if (this.ended) throw new Error('CsvRowParser.push called after end()');
    const text = this.pending.length === 0 ? chunk : this.pending + chunk;
    const rows: string[][] = [];
    const consumed = this.parse(text, false, rows);
    this.pending = consumed === text.length ? '' : text.slice(consumed);
    return rows;
  }

  /** Flushes the last record (a file's last line need not end with a newline). */
  end(): string[][] {
    if (this.ended) return [];
    this.ended = true;
    const rows: string[][] = [];
    if (this.pending.length > 0) this.parse(this.pending, true, rows);
    this.pending = '';
    return rows;
  }

  /** Parses complete records of `text` into `rows`; returns how many characters were consumed. */
  private parse(text: string, final: boolean, rows: string[][]): number {
    const length = text.length;
    const delimiter = this.delimiter;
    let position = 0;
    // Index of the next quote at or after `position`; Infinity when the text has no more quotes.
    let nextQuote = text.indexOf('"');
    if (nextQuote === -1) {
      // The common case, a chunk without any quote: split the chunk into lines in one go.
      const lastLineEnd = final ? length : text.lastIndexOf('\n');
      if (lastLineEnd <= 0) return final ? this.splitLines(text, rows) : 0;
      this.splitLines(lastLineEnd === length ? text : text.slice(0, lastLineEnd), rows);
      return Math.min(lastLineEnd + 1, length);
    }
    while (position < length) {
      let lineEnd = text.indexOf('\n', position);
      if (lineEnd === -1) {
        if (!final) break;
        lineEnd = length;
      }
      if (nextQuote < position) {
        nextQuote = text.indexOf('"', position);
        if (nextQuote === -1) nextQuote = Infinity;
      }
      if (nextQuote >= lineEnd) {
        const contentEnd = lineEnd > position && text.charCodeAt(lineEnd - 1) === CR ? lineEnd - 1 : lineEnd;
        if (contentEnd > position) rows.push(text.slice(position, contentEnd).split(delimiter));
        position = lineEnd + 1;
        continue;
      }
      const next = this.parseQuotedRecord(text, position, final, rows);
      if (next === -1) break;
      position = next;
    }
    return Math.min(position, length);
  }

  /**
   * True when `chunk` is whole lines without a quote and nothing is pending: cutting it with
   * forEachPlainLine and at delimiters then gives exactly the rows push() would, so a caller may read
   * the cells in place instead of as arrays of strings. The parser's state is the same either way.
   */
  isPlain(chunk: string): boolean {
    return this.pending.length === 0 && !this.ended && chunk.indexOf('"') === -1 && chunk.charCodeAt(chunk.length - 1) === LF;
  }

  /** Splits quote-free text into rows, line by line; returns the text's length. */
  private splitLines(text: string, rows: string[][]): number {
    const delimiter = this.delimiter;
    forEachPlainLine(text, (start, end) => rows.push(text.slice(start, end).split(delimiter)));
    return text.length;
  }

  /**
   * Character-level parse of one record that contains a quote. Returns the index after the record's
   * line break, or -1 when the record is incomplete and more input is needed.
   */
  private parseQuotedRecord(text: string, start: number, final: boolean, rows: string[][]): number {
    const length = text.length;
    const delimiterCode = this.delimiterCode;
    const fields: string[] = [];
    let index = start;
    for (;;) {
      let field: string;
      if (index < length && text.charCodeAt(index) === QUOTE) {
        // Quoted field: runs to the next quote not followed by another quote ("" is an escaped quote).
        let segmentStart = index + 1;
        field = '';
        for (;;) {
          const closing = text.indexOf('"', segmentStart);
          if (closing === -1 || (closing + 1 === length && !final)) {
            // The closing quote (or the character deciding whether it is an escape) has not arrived yet.
            if (!final) return -1;
            field += text.slice(segmentStart);
            index = length;
            break;
          }
          if (text.charCodeAt(closing + 1) === QUOTE) {
            field += text.slice(segmentStart, closing + 1);
            segmentStart = closing + 2;
            continue;
          }
          field += text.slice(segmentStart, closing);
          index = closing + 1;
          break;
        }
        // Lenient: characters between the closing quote and the delimiter are kept (`"a"b` -> `ab`).
        const tailStart = index;
        while (index < length) {
          const code = text.charCodeAt(index);
          if (code === delimiterCode || code === LF || code === CR) break;
          index += 1;
        }
        if (index > tailStart) field += text.slice(tailStart, index);
      } else {
        const fieldStart = index;
        while (index < length) {
          const code = text.charCodeAt(index);
          if (code === delimiterCode || code === LF || code === CR) break;
          index += 1;
        }
        field = text.slice(fieldStart, index);
      }
      fields.push(field);
      if (index >= length) {
        if (!final) return -1;
        rows.push(fields);
        return length;
      }
      const code = text.charCodeAt(index);
      if (code === delimiterCode) {
        index += 1;
        continue;
      }
      if (code === CR) {
        if (index + 1 >= length) {
          if (!final) return -1;
          rows.push(fields);
          return length;
        }
        if (text.charCodeAt(index + 1) === LF) index += 1;
      }
      rows.push(fields);
      return index + 1;
    }
  }
}

/**
 * Parses a whole text (or the first part of a file) into rows. With `partial`, the text is a cut
 * prefix of a larger file, so the last, possibly cut, record is dropped.
 */
export function parseCsvRows(
  text: string,
  delimiter: CsvDelimiter,
  options: { partial?: boolean; maxRows?: number } = {},
): string[][] {
  const parser = new CsvRowParser({ delimiter });
  const rows = parser.push(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  if (!options.partial) rows.push(...parser.end());
  return options.maxRows !== undefined && rows.length > options.maxRows ? rows.slice(0, options.maxRows) : rows;
}

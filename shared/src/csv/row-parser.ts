/**
 * The CSV row parser: an incremental class for the ingest-worker (feed decoded chunks, get complete
 * rows; quoted fields may span chunks and lines) and a one-shot helper for previews and detection.
 *
 * Speed matters (files of tens of millions of rows), so a line without any quote character is cut
 * with indexOf and String#split; only lines with quotes go through the character-level state machine.
 * Empty lines are skipped. A quote opens a quoted field only at the start of a field; anywhere else it
 * is kept as a literal character, as instrument exports write them (5" tubing).
 *
 * Linear in its input however it is chunked: a record left open at a chunk's end keeps only its
 * parsed fields and where the state machine stands, never its raw text to be scanned again, and a
 * line still waiting for its line feed is only appended to (not searched) until a chunk brings one.
 * One record (a line, or a quoted field running over lines) may have at most `maxLineBytes`
 * characters; a longer one throws CsvLimitError naming its line. `charsScanned` counts the
 * characters every pass over the text looked at, so tests can hold the work to the input's size.
 */
import { CSV_LIMITS } from './messages.ts';
import { CsvLimitError, countLineFeeds, lineTooLongMessage } from './limits.ts';

export const CSV_DELIMITERS = [',', ';', '\t', '|'] as const;
export type CsvDelimiter = (typeof CSV_DELIMITERS)[number];

const QUOTE = 34;
const LF = 10;
const CR = 13;

export interface CsvRowParserOptions {
  delimiter: CsvDelimiter;
  /** Characters one record may have (default CSV_LIMITS.defaultMaxLineBytes). */
  maxLineBytes?: number;
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

/** Where the state machine stands in a record that contains a quote. */
const enum Phase {
  /** At the start of a field. */
  FieldStart,
  /** Inside a quoted field. */
  Quoted,
  /** Just after a quote inside a quoted field: a second quote is an escaped quote, anything else closes the field. */
  QuoteSeen,
  /** In an unquoted field, or after a closing quote (lenient: `"a"b` -> `ab`), up to the delimiter or line end. */
  Tail,
}

/** A record the state machine has begun: its finished fields and the current field's text so far. */
interface OpenRecord {
  fields: string[];
  field: string;
  phase: Phase;
  /** Characters of the record read so far (its line limit). */
  chars: number;
  /** 1-based line the record starts on. */
  line: number;
}

export class CsvRowParser {
  readonly delimiter: CsvDelimiter;
  readonly maxLineBytes: number;
  private readonly delimiterCode: number;
  /** The start of a line that has no quote-driven state yet and waits for its line feed. */
  private pending = '';
  /** Line the pending text starts on. */
  private pendingLine = 1;
  /** A record cut by a chunk's end inside the state machine. */
  private open: OpenRecord | null = null;
  /** Line feeds in all text taken before the chunk being parsed. */
  private lineFeeds = 0;
  private ended = false;
  /** Characters looked at by all passes over the text so far (a measure of work, for tests and limits). */
  charsScanned = 0;
  /** Characters pushed so far. */
  charsPushed = 0;
  /**
   * Where the record left open by the last push began in that push's text, or -1 when none is open
   * or it began in an earlier push: lets a caller that knows the text's file offset name its line.
   */
  openRecordOffset = -1;
  /**
   * After a CsvLimitError: where the record over the limit began in the text being parsed, or -1 when
   * it began in an earlier push (then it is the record openRecordOffset pointed at).
   */
  limitOffset = -1;

  constructor(options: CsvRowParserOptions) {
    this.delimiter = options.delimiter;
    this.delimiterCode = options.delimiter.charCodeAt(0);
    this.maxLineBytes = options.maxLineBytes ?? CSV_LIMITS.defaultMaxLineBytes;
  }

  /** Characters held back waiting for the rest of their record (useful for progress accounting); 0 at a record boundary. */
  get pendingLength(): number {
    return this.pending.length + (this.open ? Math.max(1, this.open.chars) : 0);
  }

  /** Feeds the next decoded chunk and returns the rows it completed (possibly none). */
  push(chunk: string): string[][] {
    if (this.ended) throw new Error('CsvRowParser.push called after end()');
    this.charsPushed += chunk.length;
    if (this.pending.length > 0 && this.open === null) {
      // A line completes only with a line break: until one comes, append without scanning the line again.
      this.charsScanned += chunk.length;
      if (chunk.indexOf('\n') === -1 && chunk.indexOf('\r') === -1) {
        this.charsScanned += chunk.length;
        this.pending += chunk;
        this.limitOffset = -1;
        if (this.pending.length > this.maxLineBytes) throw new CsvLimitError(lineTooLongMessage(this.pendingLine, this.maxLineBytes));
        return [];
      }
    }
    return this.take(this.pending.length === 0 ? chunk : this.pending + chunk, false);
  }

  /** Flushes the last record (a file's last line need not end with a newline). */
  end(): string[][] {
    if (this.ended) return [];
    const rows = this.take(this.pending, true);
    this.ended = true;
    return rows;
  }

  private take(text: string, final: boolean): string[][] {
    const lineFeedsBefore = this.lineFeeds;
    const textLine = this.pending.length > 0 ? this.pendingLine : lineFeedsBefore + 1;
    this.pending = '';
    const rows: string[][] = [];
    let position = 0;
    this.openRecordOffset = -1;
    if (this.open) {
      position = this.continueRecord(text, 0, this.open, final, rows, 0, textLine);
      if (position === -1) {
        this.countLineFeeds(text);
        return rows;
      }
      this.open = null;
    }
    const consumed = this.parse(text, position, final, rows, textLine);
    if (consumed < text.length) {
      this.pending = text.slice(consumed);
      this.pendingLine = textLine + countLineFeeds(text, 0, consumed);
      this.charsScanned += consumed;
      this.limitOffset = consumed;
      if (this.pending.length > this.maxLineBytes) throw new CsvLimitError(lineTooLongMessage(this.pendingLine, this.maxLineBytes));
    }
    this.countLineFeeds(text);
    return rows;
  }

  private countLineFeeds(text: string): void {
    this.charsScanned += text.length;
    this.lineFeeds += countLineFeeds(text);
  }

  /** The 1-based line of `index` in `text`, whose first character is on `textLine` (only for messages). */
  private lineAt(text: string, index: number, textLine: number): number {
    this.limitOffset = index;
    return textLine + countLineFeeds(text, 0, index);
  }

  /**
   * Parses complete records of `text` from `from` into `rows`; returns how many characters were
   * consumed (a record the state machine left open counts as consumed: it is held in `open`).
   */
  private parse(text: string, from: number, final: boolean, rows: string[][], textLine: number): number {
    const length = text.length;
    const delimiter = this.delimiter;
    const maxLine = this.maxLineBytes;
    let position = from;
    // Index of the next quote at or after `position`; Infinity when the text has no more quotes.
    let nextQuote = text.indexOf('"', position);
    this.charsScanned += (nextQuote === -1 ? length : nextQuote) - position;
    if (nextQuote === -1) {
      // The common case, a chunk without any quote: split the chunk into lines in one go.
      const lastLineEnd = final ? length : text.lastIndexOf('\n');
      this.charsScanned += length - Math.max(lastLineEnd, position);
      if (lastLineEnd < position) return final ? length : position;
      this.charsScanned += lastLineEnd - position;
      const end = Math.min(lastLineEnd + 1, length);
      const plain = position === 0 && lastLineEnd === length ? text : text.slice(position, lastLineEnd);
      forEachPlainLine(plain, (start, stop) => {
        if (stop - start > maxLine) throw new CsvLimitError(lineTooLongMessage(this.lineAt(text, position + start, textLine), maxLine));
        rows.push(plain.slice(start, stop).split(delimiter));
      });
      return end;
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
        this.charsScanned += lineEnd - position;
        const contentEnd = lineEnd > position && text.charCodeAt(lineEnd - 1) === CR ? lineEnd - 1 : lineEnd;
        if (contentEnd - position > maxLine) throw new CsvLimitError(lineTooLongMessage(this.lineAt(text, position, textLine), maxLine));
        if (contentEnd > position) rows.push(text.slice(position, contentEnd).split(delimiter));
        position = lineEnd + 1;
        continue;
      }
      const complete = this.parseCompleteRecord(text, position, final, rows);
      if (complete !== -1) {
        this.charsScanned += complete - position;
        if (complete - position > maxLine + 2) throw new CsvLimitError(lineTooLongMessage(this.lineAt(text, position, textLine), maxLine));
        position = complete;
        continue;
      }
      // The text ends inside the record: read it again with the state machine, which keeps what it read.
      const record: OpenRecord = { fields: [], field: '', phase: Phase.FieldStart, chars: 0, line: 0 };
      const next = this.continueRecord(text, position, record, final, rows, position, textLine);
      if (next === -1) {
        record.line = this.lineAt(text, position, textLine);
        this.charsScanned += position;
        this.open = record;
        this.openRecordOffset = position;
        return length;
      }
      position = next;
    }
    return Math.min(position, length);
  }

  /**
   * True when `chunk` is whole lines without a quote and nothing is pending: cutting it with
   * forEachPlainLine and at delimiters then gives exactly the rows push() would, so a caller may read
   * the cells in place instead of as arrays of strings. The parser's state is the same either way
   * (apart from the line count of its messages, which a caller reading in place keeps itself).
   */
  isPlain(chunk: string): boolean {
    return this.pending.length === 0 && this.open === null && !this.ended && chunk.indexOf('"') === -1 && chunk.charCodeAt(chunk.length - 1) === LF;
  }

  /**
   * Runs the state machine over one record from `index` (the record's state in `record`). Returns the
   * index after the record's line break, or -1 when the text ended inside the record (then more input
   * is needed, and `record` holds everything read of it). `recordStart` is where the record began in
   * this text, for its line in a message.
   */
  private continueRecord(text: string, start: number, record: OpenRecord, final: boolean, rows: string[][], recordStart: number, textLine: number): number {
    const length = text.length;
    const delimiterCode = this.delimiterCode;
    // The hot loop of quoted files: the record's state in locals, written back only when the text ends inside it.
    const fields = record.fields;
    let field = record.field;
    let phase = record.phase;
    let index = start;
    while (index < length) {
      if (phase === Phase.FieldStart) {
        if (text.charCodeAt(index) === QUOTE) {
          phase = Phase.Quoted;
          index += 1;
        } else {
          phase = Phase.Tail;
        }
      } else if (phase === Phase.Quoted) {
        const closing = text.indexOf('"', index);
        if (closing === -1) {
          field += text.slice(index);
          index = length;
        } else {
          field += text.slice(index, closing);
          phase = Phase.QuoteSeen;
          index = closing + 1;
        }
      } else if (phase === Phase.QuoteSeen) {
        if (text.charCodeAt(index) === QUOTE) {
          field += '"';
          phase = Phase.Quoted;
          index += 1;
        } else {
          phase = Phase.Tail;
        }
      } else {
        const tailStart = index;
        let code = 0;
        while (index < length) {
          code = text.charCodeAt(index);
          if (code === delimiterCode || code === LF || code === CR) break;
          index += 1;
        }
        if (index > tailStart) field += text.slice(tailStart, index);
        if (index >= length) break;
        fields.push(field);
        field = '';
        phase = Phase.FieldStart;
        index += 1;
        if (code === delimiterCode) continue;
        // A CR ends the record; an LF right after it is then an empty line, which is skipped.
        this.countRecord(record, index - start, text, recordStart, textLine);
        rows.push(fields);
        return index;
      }
    }
    this.countRecord(record, length - start, text, recordStart, textLine);
    if (!final) {
      record.field = field;
      record.phase = phase;
      return -1;
    }
    fields.push(field);
    rows.push(fields);
    return length;
  }

  /**
   * The fast path for a record with a quote that ends within `text` (the usual case): returns the
   * index after its line break, or -1 when the text ends inside it (the caller then runs the state
   * machine, which can stop and resume at any character).
   */
  private parseCompleteRecord(text: string, start: number, final: boolean, rows: string[][]): number {
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

  /** Adds characters read of a record to its length; throws CsvLimitError once it is over the limit. */
  private countRecord(record: OpenRecord, chars: number, text: string, recordStart: number, textLine: number): void {
    record.chars += chars;
    this.charsScanned += chars;
    if (record.chars <= this.maxLineBytes) return;
    this.limitOffset = -1;
    const line = record.line > 0 ? record.line : this.lineAt(text, recordStart, textLine);
    throw new CsvLimitError(lineTooLongMessage(line, this.maxLineBytes));
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

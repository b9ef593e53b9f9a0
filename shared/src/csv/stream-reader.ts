/**
 * The whole streaming read of an uploaded file for the ingest-worker, built from the single-job
 * modules: bytes -> text (UTF-8/Latin-1), malicious-content scan, delimiter detection on the first
 * part, rows, the data table of a multi-section file, the header (sanitised, unique), rows cut to
 * the header width, and the row, column and line limits. Content rule failures throw CsvContentError
 * with the fixed message, so the job can fail with it as it is.
 *
 * Linear in its input: a row shorter than the header is not padded (a cell past its end reads as
 * undefined, a missing value), so a wide header over many short rows costs the rows' cells, not
 * rows x width; `cellsReturned` and `charsScanned` count the work for tests.
 */
import { CSV_LIMITS, CSV_MESSAGES, tooManyRowsMessage } from './messages.ts';
import { CsvTextDecoder, type CsvEncoding } from './encoding.ts';
import { MaliciousContentScanner } from './malicious-content.ts';
import { CsvRowParser, type CsvDelimiter } from './row-parser.ts';
import { detectDelimiter } from './delimiter.ts';
import { DataSectionFilter, DEFAULT_DATA_SECTION_PATTERN, isMultiSectionCsv } from './sections.ts';
import { sanitizeHeaders } from './headers.ts';
import { truncateRowToWidth } from './row-shape.ts';
import { CsvLimitError, checkColumnCount } from './limits.ts';

/** A CSV content rule failed; `message` is the user-facing text for it. */
export class CsvContentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CsvContentError';
  }
}

export interface CsvStreamReaderOptions {
  /** Skip detection and use this delimiter. */
  delimiter?: CsvDelimiter;
  /** Data rows allowed (CSV_MAX_ROWS). */
  maxRows?: number;
  /** Which section of a multi-section file holds the data (default: DASware's TrackData sections). */
  dataSectionPattern?: RegExp;
  /** Columns the header may have (default CSV_LIMITS.defaultMaxColumns). */
  maxColumns?: number;
  /** Characters a line or quoted record may have (default CSV_LIMITS.defaultMaxLineBytes). */
  maxLineBytes?: number;
}

/** Characters of text gathered before the delimiter and the file layout are decided. */
const DETECTION_SAMPLE_CHARS = 64 * 1024;

export class CsvStreamReader {
  private readonly decoder = new CsvTextDecoder();
  private readonly scanner = new MaliciousContentScanner();
  private readonly maxRows: number;
  private readonly sectionPattern: RegExp;
  private readonly maxColumns: number;
  private readonly maxLineBytes: number;
  private parser: CsvRowParser | null = null;
  private sectionFilter: DataSectionFilter | null = null;
  private sampleParts: string[] = [];
  private sampleLength = 0;
  private sawContent = false;
  private width = 0;

  delimiter: CsvDelimiter | null;
  /** Sanitised unique column names, once the header row has been read. */
  headers: string[] | null = null;
  /** The header cells as written. */
  rawHeaders: string[] | null = null;
  /** For a multi-section file, the data section's name (e.g. 'TrackData1'). */
  sectionName: string | null = null;
  /** Data rows returned so far. */
  rowCount = 0;
  /** Bytes pushed so far (for progress). */
  bytesRead = 0;
  /** Cells of the data rows returned so far (work done: never more than the input's delimiters and lines). */
  cellsReturned = 0;
  /** True once the data table has ended (a multi-section file's next section): the rest can be skipped. */
  finished = false;

  constructor(options: CsvStreamReaderOptions = {}) {
    this.delimiter = options.delimiter ?? null;
    this.maxRows = options.maxRows ?? CSV_LIMITS.defaultMaxRows;
    this.sectionPattern = options.dataSectionPattern ?? DEFAULT_DATA_SECTION_PATTERN;
    this.maxColumns = options.maxColumns ?? CSV_LIMITS.defaultMaxColumns;
    this.maxLineBytes = options.maxLineBytes ?? CSV_LIMITS.defaultMaxLineBytes;
  }

  /** Characters the row parser looked at so far (work done, for tests). */
  get charsScanned(): number {
    return this.parser?.charsScanned ?? 0;
  }

  get encoding(): CsvEncoding {
    return this.decoder.encoding;
  }

  /** Feeds the next bytes; returns the data rows they completed, each at most as wide as the header. */
  push(bytes: Uint8Array): string[][] {
    this.bytesRead += bytes.length;
    if (this.finished) return [];
    return asContentError(() => this.acceptText(this.decoder.decode(bytes), false));
  }

  /** Ends the input; returns the last rows and checks that the file had content and a header. */
  end(): string[][] {
    if (this.finished) return [];
    return asContentError(() => {
      const rows = this.acceptText(this.decoder.end(), true);
      if (!this.finished && this.parser) rows.push(...this.takeRows(this.parser.end()));
      if (!this.sawContent) throw new CsvContentError(CSV_MESSAGES.contentEmpty);
      if (this.headers === null) throw new CsvContentError(CSV_MESSAGES.headerRequired);
      return rows;
    });
  }

  private acceptText(text: string, final: boolean): string[][] {
    if (text.length > 0) {
      if (!this.sawContent && text.trim().length > 0) this.sawContent = true;
      if (this.scanner.push(text)) throw new CsvContentError(CSV_MESSAGES.maliciousContent);
    }
    if (this.parser) return this.takeRows(this.parser.push(text));
    // Gather the first part of the file to decide the delimiter and layout (appended as pieces: one
    // joined string per push would copy the sample again for every small push).
    this.sampleParts.push(text);
    this.sampleLength += text.length;
    if (this.sampleLength < DETECTION_SAMPLE_CHARS && !final) return [];
    const sample = this.sampleParts.join('');
    this.sampleParts = [];
    const delimiter = this.delimiter ?? detectDelimiter(sample, { partial: !final });
    this.delimiter = delimiter;
    this.parser = new CsvRowParser({ delimiter, maxLineBytes: this.maxLineBytes });
    if (isMultiSectionCsv(sample)) this.sectionFilter = new DataSectionFilter(this.sectionPattern);
    return this.takeRows(this.parser.push(sample));
  }

  private takeRows(parsed: string[][]): string[][] {
    const rows: string[][] = [];
    for (const row of parsed) {
      // A line of only spaces is a blank line, not a one-column row.
      if (row.length === 1 && row[0]!.trim() === '') continue;
      if (this.sectionFilter) {
        const verdict = this.sectionFilter.accept(row);
        if (verdict === 'skip') continue;
        if (verdict === 'end') {
          this.finished = true;
          break;
        }
        if (verdict === 'header') {
          this.setHeader(row);
          this.sectionName = this.sectionFilter.sectionName;
          continue;
        }
      } else if (this.headers === null) {
        this.setHeader(row);
        continue;
      }
      this.rowCount += 1;
      if (this.rowCount > this.maxRows) throw new CsvContentError(tooManyRowsMessage(this.maxRows));
      truncateRowToWidth(row, this.width);
      this.cellsReturned += row.length;
      rows.push(row);
    }
    return rows;
  }

  private setHeader(row: string[]): void {
    if (row.every((cell) => cell.trim() === '')) throw new CsvContentError(CSV_MESSAGES.headerRequired);
    checkColumnCount(row.length, this.maxColumns);
    this.rawHeaders = row;
    this.headers = sanitizeHeaders(row);
    this.width = row.length;
  }
}

/** A read limit's failure as the content error the job fails with. */
function asContentError<T>(read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof CsvLimitError) throw new CsvContentError(error.message);
    throw error;
  }
}

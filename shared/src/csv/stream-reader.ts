/**
 * The whole streaming read of an uploaded file for the ingest-worker, built from the single-job
 * modules: bytes -> text (UTF-8/Latin-1), malicious-content scan, delimiter detection on the first
 * part, rows, the data table of a multi-section file, the header (sanitised, unique), rows fitted to
 * the header width, and the row limit. Content rule failures throw CsvContentError with the fixed
 * message, so the job can fail with it as it is.
 */
import { CSV_LIMITS, CSV_MESSAGES, tooManyRowsMessage } from './messages.ts';
import { CsvTextDecoder, type CsvEncoding } from './encoding.ts';
import { MaliciousContentScanner } from './malicious-content.ts';
import { CsvRowParser, type CsvDelimiter } from './row-parser.ts';
import { detectDelimiter } from './delimiter.ts';
import { DataSectionFilter, DEFAULT_DATA_SECTION_PATTERN, isMultiSectionCsv } from './sections.ts';
import { sanitizeHeaders } from './headers.ts';
import { fitRowToWidth } from './row-shape.ts';

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
}

/** Characters of text gathered before the delimiter and the file layout are decided. */
const DETECTION_SAMPLE_CHARS = 64 * 1024;

export class CsvStreamReader {
  private readonly decoder = new CsvTextDecoder();
  private readonly scanner = new MaliciousContentScanner();
  private readonly maxRows: number;
  private readonly sectionPattern: RegExp;
  private parser: CsvRowParser | null = null;
  private sectionFilter: DataSectionFilter | null = null;
  private sample = '';
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
  /** True once the data table has ended (a multi-section file's next section): the rest can be skipped. */
  finished = false;

  constructor(options: CsvStreamReaderOptions = {}) {
    this.delimiter = options.delimiter ?? null;
    this.maxRows = options.maxRows ?? CSV_LIMITS.defaultMaxRows;
    this.sectionPattern = options.dataSectionPattern ?? DEFAULT_DATA_SECTION_PATTERN;
  }

  get encoding(): CsvEncoding {
    return this.decoder.encoding;
  }

  /** Feeds the next bytes; returns the data rows they completed, each as wide as the header. */
  push(bytes: Uint8Array): string[][] {
    this.bytesRead += bytes.length;
    if (this.finished) return [];
    return this.acceptText(this.decoder.decode(bytes), false);
  }

  /** Ends the input; returns the last rows and checks that the file had content and a header. */
  end(): string[][] {
    if (this.finished) return [];
    const rows = this.acceptText(this.decoder.end(), true);
    if (!this.finished && this.parser) rows.push(...this.takeRows(this.parser.end()));
    if (!this.sawContent) throw new CsvContentError(CSV_MESSAGES.contentEmpty);
    if (this.headers === null) throw new CsvContentError(CSV_MESSAGES.headerRequired);
    return rows;
  }

  private acceptText(text: string, final: boolean): string[][] {
    if (text.length > 0) {
      if (!this.sawContent && text.trim().length > 0) this.sawContent = true;
      if (this.scanner.push(text)) throw new CsvContentError(CSV_MESSAGES.maliciousContent);
    }
    if (this.parser) return this.takeRows(this.parser.push(text));
    // Gather the first part of the file to decide the delimiter and layout.
    this.sample += text;
    if (this.sample.length < DETECTION_SAMPLE_CHARS && !final) return [];
    const sample = this.sample;
    this.sample = '';
    const delimiter = this.delimiter ?? detectDelimiter(sample, { partial: !final });
    this.delimiter = delimiter;
    this.parser = new CsvRowParser({ delimiter });
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
      rows.push(fitRowToWidth(row, this.width));
    }
    return rows;
  }

  private setHeader(row: string[]): void {
    if (row.every((cell) => cell.trim() === '')) throw new CsvContentError(CSV_MESSAGES.headerRequired);
    this.rawHeaders = row;
    this.headers = sanitizeHeaders(row);
    this.width = row.length;
  }
}

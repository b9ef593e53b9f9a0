/**
 * Reads an uploaded CSV file once, as a stream: checks every spec/02 §5 rule (malicious content,
 * header, timestamp format, non-numeric columns, row limit) and turns the points into TSV batches for
 * the job's staging table (`instrument\tts\tvalue[\tversion]`), each with the resume point after it.
 *
 * Runs on a worker thread (staging-thread.ts), so it imports nothing that talks to a service: the
 * job's thread inserts the batches and commits the resume points.
 */
import {
  CSV_LIMITS,
  CSV_MESSAGES,
  DataSectionFilter,
  MaliciousContentScanner,
  NonNumericCollector,
  checkRowLimit,
  createTimestampParser,
  decimalCommaAllowed,
  detectDelimiter,
  detectTimestampFormat,
  elapsedToEpochMs,
  fitRowToWidth,
  isMultiSectionCsv,
  parseNumericCell,
  readTimezoneBiasMinutes,
  sanitizeHeaders,
  sectionNameOfRow,
  type CsvDelimiter,
  type CsvEncoding,
  type NumericCellOptions,
  type TimestampDetection,
} from '@bioprocess/shared/csv/index';
import { AsciiBuffer } from '@bioprocess/shared/ascii-buffer';
import { MAX_TIMESTAMP_MS, MIN_TIMESTAMP_MS, type CsvMapping } from '@bioprocess/shared/timeseries';
import { readHead, readRecords } from './record-reader.ts';
import { MAX_ROWS_PER_VERSION, pointVersion } from '../versions.ts';

/**
 * Bytes reserved per staged point: a line is about 30 (`instrument\tts\tvalue\n`), and a batch runs
 * past its size by up to one read chunk, so the buffers are sized once and never grow (a doubled
 * buffer would hold twice the memory until the end of the upload).
 */
const BYTES_PER_STAGED_POINT = 48;

/** How the file is read (settled from its head and header) and what reading it found so far. */
export interface CsvPlan {
  delimiter: CsvDelimiter;
  encoding: CsvEncoding;
  multiSection: boolean;
  width: number;
  timestampIndex: number;
  columns: Array<{ index: number; column: string; instrumentId: number }>;
  detection: Pick<TimestampDetection, 'format' | 'order' | 'dayFirst' | 'confidence'> | null;
  timezoneOffsetMinutes: number;
  decimalComma: boolean;
  dataRows: number;
  validRows: number;
  skippedBadTimestamp: number;
  skippedOutOfRange: number;
  points: number;
  minTs: number;
  maxTs: number;
  /** Timestamps of valid rows strictly increase: no key appears twice within the file. */
  increasing: boolean;
  lastTs: number;
}

/** Where an interrupted pass resumes: a record boundary and everything read before it. */
export interface StagingCheckpoint {
  phase: 'staging';
  /** Rows carry their own versions (the file's timestamps do not strictly increase). */
  versioned: boolean;
  byteOffset: number;
  plan: CsvPlan;
  scannerTail: string;
  resumed: boolean;
}

export interface StagingOptions {
  filePath: string;
  mapping: CsvMapping;
  /** The unit operation's window at upload time (rows outside are skipped). */
  startMs: number | null;
  endMs: number | null;
  versionSeq: number;
  maxRows: number;
  /** Points per batch: bounded memory, large enough for full insert speed. */
  batchPoints: number;
  /** Where to resume, or null to read the file from its start. */
  from: StagingCheckpoint | null;
  versioned: boolean;
}

export interface StagingSink {
  /** Takes a batch (one chunk per column); resolves when the next one may be sent. */
  batch(chunks: Uint8Array[], points: number, checkpoint: StagingCheckpoint | null): Promise<void>;
  /** Bytes and rows read so far (called often: throttle on the receiving side if needed). */
  progress(bytesRead: number, rowsRead: number): void;
}

/** The file breaks a rule: the upload fails with this message (the spec's where it gives one). */
export class CsvRejected extends Error {}

/** The file repeats or reorders timestamps and the pass ran without row versions: run it again with them. */
export class NeedsRowVersions extends Error {}

type TimestampReader = (raw: string) => number | null;
type PlanColumns = CsvPlan['columns'];

function timestampReader(plan: Pick<CsvPlan, 'detection' | 'timezoneOffsetMinutes'>, mapping: CsvMapping, startMs: number | null): TimestampReader {
  if (mapping.timestamp_mode === 'elapsed') {
    const unit = mapping.elapsed_unit!;
    return (raw) => {
      const value = parseNumericCell(raw);
      return value === null || Number.isNaN(value) ? null : elapsedToEpochMs(value, unit, startMs!);
    };
  }
  if (!plan.detection) return () => null;
  return createTimestampParser(plan.detection, { timezoneOffsetMinutes: plan.timezoneOffsetMinutes });
}

function inWindow(ts: number, options: StagingOptions): boolean {
  if (ts < MIN_TIMESTAMP_MS || ts > MAX_TIMESTAMP_MS) return false;
  if (options.startMs !== null && ts < options.startMs) return false;
  if (options.endMs !== null && ts > options.endMs) return false;
  return true;
}

/**
 * The points of one batch, one TSV buffer per mapped column: the insert then arrives grouped by
 * instrument and, when timestamps increase, already in the table's order, which ClickHouse takes
 * without sorting (much faster than interleaved rows).
 */
class ColumnBatch {
  readonly columns: AsciiBuffer[];
  points = 0;

  constructor(columnCount: number, batchPoints: number) {
    const bytes = Math.max(256 * 1024, Math.ceil(batchPoints / columnCount) * BYTES_PER_STAGED_POINT);
    this.columns = Array.from({ length: columnCount }, () => new AsciiBuffer(bytes));
  }

  /** Copies of the written bytes (own memory, so they can be transferred to another thread). */
  takeChunks(): Uint8Array[] {
    const chunks = this.columns.filter((column) => column.length > 0).map((column) => column.take());
    for (const column of this.columns) column.reset();
    this.points = 0;
    return chunks;
  }
}

/**
 * Checks the cells of a valid row and writes its points to the batch, unless `batch` is null (the
 * upload already failed); answers the row's point count. The hot loop of an upload, kept apart from
 * the closure state so V8 optimises it on its own.
 */
function stageCells(
  row: string[], columns: PlanColumns, collector: NonNumericCollector, options: NumericCellOptions,
  batch: ColumnBatch | null, instrumentTexts: string[], tsText: string, lineEnd: string,
): number {
  let points = 0;
  for (let c = 0; c < columns.length; c += 1) {
    const column = columns[c]!;
    const raw = row[column.index]!;
    const out = batch?.columns[c];
    const mark = out?.length ?? 0;
    if (out) {
      out.text(instrumentTexts[c]!);
      out.text(tsText);
      // Most cells are plain decimals, valid as they are: their text is written with no parsing.
      if (appendPlainDecimal(out, raw)) {
        out.text(lineEnd);
        points += 1;
        continue;
      }
    }
    const value = collector.check(column.column, raw, options);
    if (value === null || value !== value /* NaN */) {
      if (out) out.length = mark;
      continue;
    }
    points += 1;
    if (out) {
      out.text(String(value));
      out.text(lineEnd);
    }
  }
  if (batch) batch.points += points;
  return points;
}

/**
 * Appends `raw` when it is a plain decimal (an optional minus, digits and at most one decimal point),
 * which is a valid cell that ClickHouse reads as the same number; else appends nothing and answers false.
 */
function appendPlainDecimal(out: AsciiBuffer, raw: string): boolean {
  const length = raw.length;
  out.reserve(length);
  const bytes = out.bytes;
  let position = out.length;
  let index = 0;
  if (raw.charCodeAt(0) === 45 /* - */) {
    bytes[position++] = 45;
    index = 1;
  }
  let digits = 0;
  let point = false;
  for (; index < length; index += 1) {
    const code = raw.charCodeAt(index);
    if (code >= 48 && code <= 57) digits += 1;
    else if (code !== 46 /* . */ || point) return false;
    else point = true;
    bytes[position++] = code;
  }
  if (digits === 0) return false;
  out.length = position;
  return true;
}

/** Checks the cells of a skipped row: a non-numeric column fails the upload wherever it is. */
function checkCells(row: string[], columns: PlanColumns, collector: NonNumericCollector, options: NumericCellOptions): void {
  for (const column of columns) collector.check(column.column, row[column.index]!, options);
}

/**
 * Reads the whole file (from the checkpoint on, when given), hands the points to the sink in batches
 * and answers the plan. Throws CsvRejected when the file breaks a rule (nothing is handed over after
 * the first bad value), NeedsRowVersions when timestamps repeat and the pass runs without row versions.
 */
export async function readAndStageCsv(options: StagingOptions, sink: StagingSink): Promise<CsvPlan> {
  const { mapping, from, versioned } = options;
  const head = await readHead(options.filePath);
  if (head.text.replace(/^\uFEFF/, '').trim() === '') throw new CsvRejected(CSV_MESSAGES.contentEmpty);
  const delimiter = from?.plan.delimiter ?? detectDelimiter(head.text);
  const multiSection = from?.plan.multiSection ?? isMultiSectionCsv(head.text);
  const timezoneOffsetMinutes = (multiSection ? readTimezoneBiasMinutes(head.text) : null) ?? 0;
  const decimalComma = decimalCommaAllowed(delimiter);
  if (mapping.timestamp_mode === 'elapsed' && options.startMs === null) {
    throw new CsvRejected('Elapsed timestamps need the unit operation to have a start time.');
  }

  const scanner = new MaliciousContentScanner(from?.scannerTail ?? '');
  const collector = new NonNumericCollector();
  const numericOptions: NumericCellOptions = { decimalComma };
  const sections = !from && multiSection ? new DataSectionFilter() : null;
  const instrumentTexts = mapping.columns.map((column) => String(column.instrument_id));
  const batch = new ColumnBatch(mapping.columns.length, options.batchPoints);
  let plan: CsvPlan | null = from ? { ...from.plan } : null;
  let readTimestamp: TimestampReader = plan ? timestampReader(plan, mapping, options.startMs) : () => null;
  /** Rows are held back until 20 timestamp samples (spec/02 §9) decided the format. */
  let detected = from !== null;
  const pending: string[][] = [];
  let samples = 0;

  const settleHeader = (row: string[]) => {
    const names = sanitizeHeaders(row);
    const find = (column: string) => {
      const wanted = column.trim().toLowerCase();
      return names.findIndex((name) => name.toLowerCase() === wanted);
    };
    const timestampIndex = find(mapping.timestamp_column);
    if (timestampIndex === -1) throw new CsvRejected(`Timestamp column '${mapping.timestamp_column}' is not in the CSV header.`);
    const missing = mapping.columns.filter((entry) => find(entry.column) === -1).map((entry) => entry.column);
    if (missing.length > 0) throw new CsvRejected(`Columns not found in the CSV header: ${missing.join(', ')}`);
    plan = {
      delimiter, encoding: head.encoding, multiSection, width: names.length, timestampIndex,
      columns: mapping.columns.map((entry) => ({ index: find(entry.column), column: names[find(entry.column)]!, instrumentId: entry.instrument_id })),
      detection: null, timezoneOffsetMinutes, decimalComma, dataRows: 0, validRows: 0, skippedBadTimestamp: 0,
      skippedOutOfRange: 0, points: 0, minTs: Number.POSITIVE_INFINITY, maxTs: Number.NEGATIVE_INFINITY, increasing: true,
      lastTs: Number.NEGATIVE_INFINITY,
    };
  };

  const consider = (row: string[], index: number) => {
    const current = plan!;
    fitRowToWidth(row, current.width);
    const ts = readTimestamp(row[current.timestampIndex]!);
    if (ts === null || !inWindow(ts, options)) {
      // Every cell is checked, also on skipped rows: a non-numeric column fails the upload either way.
      checkCells(row, current.columns, collector, numericOptions);
      if (ts === null) current.skippedBadTimestamp += 1;
      else current.skippedOutOfRange += 1;
      return;
    }
    // Once the upload fails, nothing more is staged.
    const rowPoints = stageCells(row, current.columns, collector, numericOptions, collector.hasErrors ? null : batch, instrumentTexts,
      `\t${ts}\t`, versioned ? `\t${pointVersion(options.versionSeq, index)}\n` : '\n');
    current.validRows += 1;
    current.points += rowPoints;
    if (ts <= current.lastTs) {
      current.increasing = false;
      if (!versioned && !collector.hasErrors) throw new NeedsRowVersions();
    }
    current.lastTs = ts;
    if (ts < current.minTs) current.minTs = ts;
    if (ts > current.maxTs) current.maxTs = ts;
  };

  const detect = () => {
    const current = plan!;
    if (mapping.timestamp_mode === 'absolute') {
      const detection = detectTimestampFormat(pending.map((row) => row[current.timestampIndex] ?? ''), { columnName: mapping.timestamp_column });
      current.detection = { format: detection.format, order: detection.order, dayFirst: detection.dayFirst, confidence: detection.confidence };
    }
    readTimestamp = timestampReader(current, mapping, options.startMs);
    detected = true;
    const firstIndex = current.dataRows - pending.length;
    pending.splice(0).forEach((row, offset) => consider(row, firstIndex + offset));
  };

  let headerSeen = from !== null;
  reading: for await (const records of readRecords({
    filePath: options.filePath, delimiter, encoding: from?.plan.encoding, startByte: from?.byteOffset ?? 0,
  })) {
    if (scanner.push(records.text)) throw new CsvRejected(CSV_MESSAGES.maliciousContent);
    for (const row of records.rows) {
      if (sections) {
        const verdict = sections.accept(row);
        if (verdict === 'skip') continue;
        if (verdict === 'end') break reading;
        if (verdict === 'header') {
          settleHeader(row);
          headerSeen = true;
          continue;
        }
      } else if (!headerSeen) {
        settleHeader(row);
        headerSeen = true;
        continue;
      } else if (from && multiSection && sectionNameOfRow(row) !== null) {
        break reading; // resumed inside the data table: the next section ends it
      }
      const current = plan!;
      const index = current.dataRows;
      current.dataRows += 1;
      const tooMany = checkRowLimit(current.dataRows, options.maxRows);
      if (tooMany) throw new CsvRejected(tooMany);
      if (current.dataRows > MAX_ROWS_PER_VERSION) throw new CsvRejected(`The file has more than ${MAX_ROWS_PER_VERSION} rows`);
      if (!detected) {
        pending.push(row);
        if ((row[current.timestampIndex] ?? '').trim() !== '') samples += 1;
        if (samples >= CSV_LIMITS.dateDetectionSampleSize || mapping.timestamp_mode === 'elapsed') detect();
      } else {
        consider(row, index);
      }
    }
    const current = plan as CsvPlan | null;
    if (!current) continue;
    if (records.boundary && detected && !collector.hasErrors && batch.points >= options.batchPoints) {
      const checkpoint: StagingCheckpoint = {
        phase: 'staging', versioned, byteOffset: records.byteEnd, plan: { ...current }, scannerTail: scanner.tail, resumed: from !== null,
      };
      const points = batch.points;
      await sink.batch(batch.takeChunks(), points, checkpoint);
    }
    sink.progress(records.byteEnd, current.dataRows);
  }
  if (plan === null) throw new CsvRejected(CSV_MESSAGES.headerRequired);
  const current: CsvPlan = plan;
  if (!detected) detect();
  const badValues = collector.message();
  if (badValues) throw new CsvRejected(badValues);
  if (current.validRows === 0 || current.points === 0) throw new CsvRejected(CSV_MESSAGES.noValidData);
  const points = batch.points;
  if (points > 0) await sink.batch(batch.takeChunks(), points, null);
  return current;
}

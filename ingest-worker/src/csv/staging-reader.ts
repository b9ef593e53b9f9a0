/**
 * Reads an uploaded CSV file once, as a stream: checks every CSV rule (malicious content,
 * header, timestamp format, non-numeric columns, row limit) and turns the points into RowBinary batches
 * for the job's staging table (instrument, ts, value[, version]), each with the resume point after it.
 * Binary, not text: ClickHouse 18.16 reads some decimals to a neighbouring double, and a point must be
 * stored as the double the cell's text denotes, bit for bit as the bulk path stores it (an exported
 * file uploaded again gives the same points).
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
  dasWareTimeBase,
  decimalCommaAllowed,
  detectDelimiter,
  detectTimestampFormat,
  elapsedCellToEpochMs,
  CsvLimitError,
  checkColumnCount,
  truncateRowToWidth,
  hasOwnUtcOffset,
  isMultiSectionCsv,
  parseNumericCell,
  parsePlainDecimal,
  parseTimeZone,
  readTimezoneBiasMinutes,
  sanitizeHeaders,
  sectionNameOfRow,
  MissingValues,
  countFlaggedCell,
  isPercentColumn,
  readFlaggedCell,
  rowKey,
  keyColumnsOf,
  leavesOut,
  emptyRowFilterCounts,
  countLeftOutRow,
  type RowFilterCount,
  type CsvDelimiter,
  type CsvEncoding,
  type NumericCellOptions,
  type TimestampDetection,
} from '@bioprocess/shared/csv/index';
import { AsciiBuffer } from '@bioprocess/shared/ascii-buffer';
import { createUnitConverter } from '@bioprocess/shared/csv/unit-conversion';
import { MAX_TIMESTAMP_MS, MIN_TIMESTAMP_MS, type CsvMapping } from '@bioprocess/shared/timeseries';
import { readHead, readRecords, type RecordReadStats } from './record-reader.ts';
import { firstWinsPointVersion, MAX_ROWS_PER_VERSION, pointVersion } from '@bioprocess/shared/ingest/versions';
import type { DuplicatePolicy } from '@bioprocess/shared/ingest/requests';
import { fractionMicros } from '@bioprocess/shared/sub-millisecond-time';

/**
 * Bytes reserved per staged point: a row is 27 (35 with its own version), and a batch runs past its
 * size by up to one read chunk, so the buffers are sized once and never grow (a doubled buffer would
 * hold twice the memory until the end of the upload).
 */
const BYTES_PER_STAGED_POINT = 48;
/** The largest staged row: instrument UInt64, ts Int64, a non-null Nullable(Float64), ts_micros UInt16, version UInt64. */
const MAX_STAGED_ROW_BYTES = 35;
const TWO_32 = 4_294_967_296;

/** Appends one staged row in RowBinary (STAGED_COLUMNS): little-endian, a null flag byte before the double. */
function writeStagedPoint(out: AsciiBuffer, instrumentId: number, ts: number, micros: number, value: number, version: bigint | null): void {
  out.reserve(MAX_STAGED_ROW_BYTES);
  const view = out.dataView();
  const offset = out.length;
  view.setUint32(offset, instrumentId % TWO_32, true);
  view.setUint32(offset + 4, Math.floor(instrumentId / TWO_32), true);
  // Int64 in two's complement: a ts before 1970 has a negative high half.
  const tsHigh = Math.floor(ts / TWO_32);
  view.setUint32(offset + 8, ts - tsHigh * TWO_32, true);
  view.setInt32(offset + 12, tsHigh, true);
  view.setUint8(offset + 16, 0);
  view.setFloat64(offset + 17, value, true);
  view.setUint16(offset + 25, micros, true);
  if (version === null) {
    out.length = offset + 27;
    return;
  }
  view.setBigUint64(offset + 27, version, true);
  out.length = offset + 35;
}

/** How the file is read (settled from its head and header) and what reading it found so far. */
export interface CsvPlan {
  delimiter: CsvDelimiter;
  encoding: CsvEncoding;
  multiSection: boolean;
  width: number;
  timestampIndex: number;
  /** Long format: the key column's index, else -1. */
  keyIndex: number;
  /** Long format: every key column's index (several for a composite key); absent in plans saved before composite keys. */
  keyIndexes?: number[];
  /** The columns of the upload's row filters, by filter. */
  filterIndexes?: number[];
  /** Rows a row filter left out, and per filter what it left out by value. */
  skippedFiltered?: number;
  filtered?: RowFilterCount[];
  columns: Array<{ index: number; column: string; instrumentId: number; key: string | null; fillForward: boolean }>;
  detection: Pick<TimestampDetection, 'format' | 'order' | 'dayFirst' | 'confidence'> | null;
  /** The zone applied to timestamps without their own offset (an IANA name or an offset such as +02:00). */
  timeZone: string;
  /** Who chose it: the file (DASware, or every sampled value has its own offset), the upload's mapping, or the organisation's default. */
  timeZoneSource: 'file' | 'mapping' | 'organization';
  /** DASware's TimezoneBias: the station's clock offset, minutes ahead of UTC. */
  stationOffsetMinutes: number | null;
  decimalComma: boolean;
  dataRows: number;
  /** Rows that gave at least one point. */
  validRows: number;
  skippedBadTimestamp: number;
  skippedOutOfRange: number;
  /** Rows with a usable timestamp but no value in any mapped column. */
  skippedEmpty: number;
  /** Long format: rows whose key no column entry names. */
  skippedUnselectedKey: number;
  points: number;
  /** Points that repeat a column's last value over an empty cell (fill forward). */
  filledPoints: number;
  minTs: number;
  maxTs: number;
  /** Each instrument's timestamps strictly increase: no key appears twice within the file. */
  increasing: boolean;
  /** The instant of the last row whose timestamp read (settles wall-clock times that happen twice). */
  lastTs: number;
  /**
   * The last point's timestamp per instrument (the increasing check), at the index of the instrument's
   * first column entry: two entries of one instrument share a key space, so they share the check.
   */
  entryLastTs: number[];
  /** Per column entry: cells stored as missing because they were flags (or the user's missing values). */
  flagged: Array<{ count: number; examples: string[] }>;
  /** Lines of the file read before the resume point (rows are versioned by their line: a duplicate names its lines). */
  linesRead?: number;
  /** Per column entry: the last non-empty cell, carried over empty cells when the entry fills forward. */
  carried: Array<string | null>;
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
  /** The zone for timestamps without their own offset: the mapping's, else the organisation's. */
  timeZone: string;
  timeZoneSource: 'mapping' | 'organization';
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
  /** keep-first: a key's first row gets the highest version (else its last row, as for every other policy). */
  duplicates?: DuplicatePolicy;
  /** Cell texts or numbers that mean "no value" (the user's `missing_values`). */
  missingValues?: string[];
  /** Columns the header may have (CSV_MAX_COLUMNS; default CSV_LIMITS.defaultMaxColumns). */
  maxColumns?: number;
  /** Bytes a line or quoted record may have (CSV_MAX_LINE_BYTES; default CSV_LIMITS.defaultMaxLineBytes). */
  maxLineBytes?: number;
  /** Bytes per read of the file (tests use small ones). */
  readChunkBytes?: number;
  /** Filled in with the work the pass did (tests hold it to the file's size). */
  work?: StagingWork;
}

/** Work done by a pass: the file's reading, and the cells of data rows the pass looked at. */
export interface StagingWork extends RecordReadStats {
  /** Data-row cells looked at: the mapped cells of each row that has them, never the header's width per row. */
  cellsVisited: number;
}

export function emptyStagingWork(): StagingWork {
  return { bytesRead: 0, bytesScanned: 0, bytesCopied: 0, charsParsed: 0, cellsVisited: 0 };
}

export interface StagingSink {
  /** Takes a batch (one chunk per column); resolves when the next one may be sent. */
  batch(chunks: Uint8Array[], points: number, checkpoint: StagingCheckpoint | null): Promise<void>;
  /** Bytes and rows read so far (called often: throttle on the receiving side if needed). */
  progress(bytesRead: number, rowsRead: number): void;
}

/** The file breaks a rule: the upload fails with this message (the fixed CSV message where one exists). */
export class CsvRejected extends Error {}

/** The file repeats or reorders timestamps and the pass ran without row versions: run it again with them. */
export class NeedsRowVersions extends Error {}

type TimestampReader = (raw: string, previous: number) => number | null;
type PlanColumns = CsvPlan['columns'];

function timestampReader(plan: Pick<CsvPlan, 'detection' | 'timeZone'>, mapping: CsvMapping, startMs: number | null): TimestampReader {
  if (mapping.timestamp_mode === 'elapsed') {
    const unit = mapping.elapsed_unit!;
    // A start the file states (its preamble) wins over the unit operation's; clock values (`0:04:22`) read as durations.
    const start = mapping.elapsed_start !== undefined ? Date.parse(mapping.elapsed_start) : startMs!;
    return (raw) => elapsedCellToEpochMs(raw, unit, start);
  }
  if (!plan.detection) return () => null;
  const timeZone = parseTimeZone(plan.timeZone);
  if (!timeZone) throw new CsvRejected(`Unknown time zone '${plan.timeZone}'`);
  return createTimestampParser(plan.detection, { timeZone });
}

function isBlank(raw: string | undefined): boolean {
  if (raw === undefined) return true;
  for (let index = 0; index < raw.length; index += 1) {
    const code = raw.charCodeAt(index);
    if (code !== 32 && code !== 9) return false;
  }
  return true;
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
 * Reads cells to values: a number, null (missing: empty, a flag, or one of the user's missing
 * values) or NaN (text that is no flag: the upload fails with the non-numeric listing). A column
 * converted to another unit gives the converted number. Flags are
 * counted only for cells of staged rows (`count`), never for skipped rows or cells filled forward.
 */
class CellReader {
  private readonly missing: MissingValues;
  /** Plain decimals may skip this reader unless the user named numbers as missing or a column converts its unit. */
  readonly plainDecimalsStored: boolean;
  private readonly noMissingNumbers: boolean;
  private readonly percentUnit: boolean[];

  constructor(
    readonly collector: NonNumericCollector, private readonly options: NumericCellOptions, columns: PlanColumns, missingValues: readonly string[],
    /** Per column entry: the unit conversion of its values, or null to store them as written. */
    private readonly converters: ReadonlyArray<((value: number) => number) | null> = [],
  ) {
    this.missing = new MissingValues(missingValues);
    this.noMissingNumbers = this.missing.numbers.length === 0;
    this.plainDecimalsStored = this.noMissingNumbers && converters.every((converter) => converter === null);
    this.percentUnit = columns.map((column) => isPercentColumn(column.column));
  }

  read(raw: string, c: number, plan: CsvPlan, count: boolean): number | null {
    const value = this.readAsWritten(raw, c, plan, count);
    const convert = this.converters[c];
    return convert && value !== null && value === value /* not NaN */ ? convert(value) : value;
  }

  private readAsWritten(raw: string, c: number, plan: CsvPlan, count: boolean): number | null {
    const value = parseNumericCell(raw, this.options);
    if (value === null) return null;
    if (value === value /* not NaN */) {
      if (this.noMissingNumbers || !this.missing.isMissingNumber(value)) return value;
      if (count) countFlaggedCell(plan.flagged[c]!, raw);
      return null;
    }
    if (this.missing.isMissingText(raw)) {
      if (count) countFlaggedCell(plan.flagged[c]!, raw);
      return null;
    }
    const flagged = readFlaggedCell(raw, { ...this.options, percentUnit: this.percentUnit[c] });
    if (flagged) {
      if (flagged.flag !== null && count) countFlaggedCell(plan.flagged[c]!, raw);
      return flagged.value;
    }
    this.collector.record(plan.columns[c]!.column, raw);
    return Number.NaN;
  }
}

/**
 * The value of one cell of column entry `c` (null or NaN when it gives no point): an empty cell of an
 * entry that fills forward takes the entry's last value; a non-numeric value is recorded.
 */
function resolveCell(raw: string, c: number, plan: CsvPlan, cells: CellReader): number | null {
  const column = plan.columns[c]!;
  if (!column.fillForward) return cells.read(raw, c, plan, true);
  if (!isBlank(raw)) {
    plan.carried[c] = raw;
    return cells.read(raw, c, plan, true);
  }
  const last = plan.carried[c];
  if (last === null || last === undefined) return null;
  const value = cells.read(last, c, plan, false);
  if (value !== null && value === value /* not NaN */) plan.filledPoints += 1;
  return value;
}

/** Writes the point of column entry `c` unless the batch is null (the upload already failed); answers 1, or 0 without a value. */
function stagePoint(c: number, value: number | null, plan: CsvPlan, batch: ColumnBatch | null, instrumentIds: number[], slots: Int32Array, ts: number, micros: number, version: bigint | null): number {
  if (value === null || value !== value /* NaN */) return 0;
  const out = batch?.columns[c];
  if (out) writeStagedPoint(out, instrumentIds[c]!, ts, micros, value, version);
  const slot = slots[c]!;
  if (ts <= plan.entryLastTs[slot]!) plan.increasing = false;
  plan.entryLastTs[slot] = ts;
  return 1;
}

/**
 * Checks the cells of a row inside the window and writes its points to the batch; answers the row's
 * point count. `entries` are the indexes of the column entries the row feeds (all of them, or those
 * of its key in long format).
 */
function stageCells(
  row: string[], entries: readonly number[], plan: CsvPlan, cells: CellReader,
  batch: ColumnBatch | null, instrumentIds: number[], slots: Int32Array, ts: number, micros: number, version: bigint | null,
): number {
  let points = 0;
  for (let e = 0; e < entries.length; e += 1) {
    const c = entries[e]!;
    const value = resolveCell(row[plan.columns[c]!.index] ?? '', c, plan, cells);
    points += stagePoint(c, value, plan, batch, instrumentIds, slots, ts, micros, version);
  }
  if (batch) batch.points += points;
  return points;
}

/**
 * stageCells for a row read in place: its cells are text[starts[i], ends[i]). A plain decimal is read
 * without making a string; any other cell goes the string way. The hot loop of an upload, kept apart
 * from the closure state so V8 optimises it on its own.
 */
function stageCellsInPlace(
  text: string, starts: Int32Array, ends: Int32Array, plan: CsvPlan, cells: CellReader,
  batch: ColumnBatch | null, instrumentIds: number[], slots: Int32Array, ts: number, micros: number, version: bigint | null,
): number {
  const columns = plan.columns;
  const plainStored = cells.plainDecimalsStored;
  let points = 0;
  for (let c = 0; c < columns.length; c += 1) {
    const column = columns[c]!;
    const start = starts[column.index]!;
    const end = ends[column.index]!;
    const plain = column.fillForward || !plainStored ? undefined : parsePlainDecimal(text, start, end);
    const value = plain !== undefined ? plain : resolveCell(text.slice(start, end), c, plan, cells);
    points += stagePoint(c, value, plan, batch, instrumentIds, slots, ts, micros, version);
  }
  if (batch) batch.points += points;
  return points;
}

/** Remembers the non-empty cells of a row outside the window: a deadband value still holds after it. */
function carryCells(row: string[], entries: readonly number[], plan: CsvPlan): void {
  for (let e = 0; e < entries.length; e += 1) {
    const c = entries[e]!;
    const column = plan.columns[c]!;
    if (column.fillForward && !isBlank(row[column.index])) plan.carried[c] = row[column.index]!;
  }
}

/** Checks the cells of a skipped row: a non-numeric column fails the upload wherever it is (flags there are not counted: nothing is stored). */
function checkCells(row: string[], entries: readonly number[], plan: CsvPlan, cells: CellReader): void {
  for (const c of entries) cells.read(row[plan.columns[c]!.index] ?? '', c, plan, false);
}

/** Calls `visit` with each non-empty line and its number (lines before the text: `linesBefore`); answers the line feeds seen. */
function forEachNumberedLine(text: string, linesBefore: number, visit: (start: number, end: number, line: number) => void): number {
  const length = text.length;
  let start = 0;
  let line = linesBefore;
  let feeds = 0;
  while (start < length) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = length;
    else feeds += 1;
    line += 1;
    const next = end + 1;
    if (end > start && text.charCodeAt(end - 1) === 13 /* CR */) end -= 1;
    if (end > start) visit(start, end, line);
    start = next;
  }
  return feeds;
}

function countLineFeeds(text: string): number {
  let feeds = 0;
  for (let at = text.indexOf('\n'); at !== -1; at = text.indexOf('\n', at + 1)) feeds += 1;
  return feeds;
}

/** Per column entry, the entry whose timestamps it shares (the first entry of the same instrument). */
function instrumentSlots(instrumentIds: readonly number[]): Int32Array {
  const first = new Map<number, number>();
  return Int32Array.from(instrumentIds, (id, index) => {
    const slot = first.get(id);
    if (slot !== undefined) return slot;
    first.set(id, index);
    return index;
  });
}

/** A plan to keep or resume from: its arrays are copied, the pass goes on changing its own. */
function copyPlan(plan: CsvPlan): CsvPlan {
  return {
    ...plan, entryLastTs: [...plan.entryLastTs], carried: [...plan.carried],
    filtered: plan.filtered?.map((count) => ({ ...count, values: [...count.values], by_value: count.by_value.map((entry) => ({ ...entry })) })),
    flagged: (plan.flagged ?? plan.columns.map(() => ({ count: 0, examples: [] }))).map((entry) => ({ count: entry.count, examples: [...entry.examples] })),
  };
}

/**
 * Reads the whole file (from the checkpoint on, when given), hands the points to the sink in batches
 * and answers the plan. Throws CsvRejected when the file breaks a rule (nothing is handed over after
 * the first bad value), NeedsRowVersions when timestamps repeat and the pass runs without row versions.
 */
export async function readAndStageCsv(options: StagingOptions, sink: StagingSink): Promise<CsvPlan> {
  try {
    return await stageCsv(options, sink);
  } catch (error) {
    // A read limit (columns, line length) fails the upload with its message, like any other rule.
    if (error instanceof CsvLimitError) throw new CsvRejected(error.message);
    throw error;
  }
}

async function stageCsv(options: StagingOptions, sink: StagingSink): Promise<CsvPlan> {
  const work = options.work ?? emptyStagingWork();
  const { mapping, from, versioned } = options;
  const head = await readHead(options.filePath);
  if (head.text.replace(/^\uFEFF/, '').trim() === '') throw new CsvRejected(CSV_MESSAGES.contentEmpty);
  const delimiter = from?.plan.delimiter ?? options.mapping.reading?.delimiter ?? detectDelimiter(head.text);
  const multiSection = from?.plan.multiSection ?? isMultiSectionCsv(head.text);
  const fileTimeBase = multiSection ? dasWareTimeBase(readTimezoneBiasMinutes(head.text)) : null;
  const decimalComma = decimalCommaAllowed(delimiter);
  if (mapping.timestamp_mode === 'elapsed' && options.startMs === null && mapping.elapsed_start === undefined) {
    throw new CsvRejected('Elapsed timestamps need the unit operation to have a start time.');
  }

  const scanner = new MaliciousContentScanner(from?.scannerTail ?? '');
  const collector = new NonNumericCollector();
  const numericOptions: NumericCellOptions = { decimalComma };
  let cells: CellReader | null = null;
  const converters = mapping.columns.map((entry) => {
    if (!entry.convert_unit) return null;
    const converter = createUnitConverter(entry.convert_unit.from, entry.convert_unit.to);
    if (typeof converter !== 'function') throw new CsvRejected(`Column '${entry.column}': ${converter.problem}`);
    return converter;
  });
  const readerOf = (current: CsvPlan) => new CellReader(collector, numericOptions, current.columns, options.missingValues ?? [], converters);
  const rowFilters = mapping.row_filters ?? [];
  const sections = !from && multiSection ? new DataSectionFilter() : null;
  const instrumentIds = mapping.columns.map((column) => column.instrument_id);
  const slots = instrumentSlots(instrumentIds);
  const firstWins = options.duplicates === 'keep-first';
  let linesRead = from?.plan.linesRead ?? 0;
  const batch = new ColumnBatch(mapping.columns.length, options.batchPoints);
  let plan: CsvPlan | null = from ? copyPlan(from.plan) : null;
  let readTimestamp: TimestampReader = plan ? timestampReader(plan, mapping, options.startMs) : () => null;
  /** Which column entries a row feeds: all of them, or in long format those of the row's key. */
  let allEntries: number[] = [];
  let entriesByKey: Map<string, number[]> | null = null;
  /**
   * For rows shorter than the header (wide format): the entries that do not fill forward, by column,
   * and how many of them lie before each column count, so a short row looks only at the columns it
   * reaches (and at those that fill forward) instead of at every mapped column.
   */
  let plainEntriesByColumn: number[] = [];
  let plainEntriesBefore = new Int32Array(0);
  let fillForwardEntries: number[] = [];
  const indexEntries = (current: CsvPlan) => {
    allEntries = current.columns.map((_, index) => index);
    plainEntriesByColumn = allEntries.filter((c) => !current.columns[c]!.fillForward).sort((a, b) => current.columns[a]!.index - current.columns[b]!.index);
    fillForwardEntries = allEntries.filter((c) => current.columns[c]!.fillForward);
    plainEntriesBefore = new Int32Array(current.width + 1);
    for (const c of plainEntriesByColumn) plainEntriesBefore[current.columns[c]!.index + 1]! += 1;
    for (let cells = 1; cells <= current.width; cells += 1) plainEntriesBefore[cells]! += plainEntriesBefore[cells - 1]!;
    if (current.keyIndex === -1) return;
    current.keyIndexes ??= [current.keyIndex];
    entriesByKey = new Map();
    current.columns.forEach((column, index) => {
      const list = entriesByKey!.get(column.key!) ?? [];
      list.push(index);
      entriesByKey!.set(column.key!, list);
    });
  };
  if (plan) {
    indexEntries(plan);
    cells = readerOf(plan);
  }
  /** Rows are held back until 20 timestamp samples decided the format. */
  let detected = from !== null;
  const pending: string[][] = [];
  const pendingLines: number[] = [];
  let samples = 0;

  const settleHeader = (row: string[]) => {
    checkColumnCount(row.length, options.maxColumns);
    const names = sanitizeHeaders(row);
    // Names are unique ignoring case, so one lookup per mapped column instead of a search of the header.
    const indexByName = new Map(names.map((name, index) => [name.toLowerCase(), index]));
    const find = (column: string) => indexByName.get(column.trim().toLowerCase()) ?? -1;
    const timestampIndex = find(mapping.timestamp_column);
    if (timestampIndex === -1) throw new CsvRejected(`Timestamp column '${mapping.timestamp_column}' is not in the CSV header.`);
    const keyIndexes = keyColumnsOf(mapping).map((column) => {
      const index = find(column);
      if (index === -1) throw new CsvRejected(`Key column '${column}' is not in the CSV header.`);
      return index;
    });
    const keyIndex = keyIndexes[0] ?? -1;
    const filterIndexes = rowFilters.map((filter) => {
      const index = find(filter.column);
      if (index === -1) throw new CsvRejected(`Row filter column '${filter.column}' is not in the CSV header.`);
      return index;
    });
    const missing = [...new Set(mapping.columns.filter((entry) => find(entry.column) === -1).map((entry) => entry.column))];
    if (missing.length > 0) throw new CsvRejected(`Columns not found in the CSV header: ${missing.join(', ')}`);
    plan = {
      delimiter, encoding: head.encoding, multiSection, width: names.length, timestampIndex, keyIndex, keyIndexes, filterIndexes,
      skippedFiltered: 0, filtered: emptyRowFilterCounts(rowFilters),
      columns: mapping.columns.map((entry) => ({
        index: find(entry.column), column: names[find(entry.column)]!, instrumentId: entry.instrument_id, key: entry.key ?? null, fillForward: entry.fill_forward,
      })),
      detection: null,
      timeZone: fileTimeBase?.zone ?? options.timeZone,
      timeZoneSource: fileTimeBase ? 'file' : options.timeZoneSource,
      stationOffsetMinutes: fileTimeBase?.stationOffsetMinutes ?? null,
      decimalComma, dataRows: 0, validRows: 0, skippedBadTimestamp: 0, skippedOutOfRange: 0, skippedEmpty: 0, skippedUnselectedKey: 0,
      points: 0, filledPoints: 0, minTs: Number.POSITIVE_INFINITY, maxTs: Number.NEGATIVE_INFINITY, increasing: true,
      lastTs: Number.NEGATIVE_INFINITY, entryLastTs: mapping.columns.map(() => Number.NEGATIVE_INFINITY), carried: mapping.columns.map(() => null),
      flagged: mapping.columns.map(() => ({ count: 0, examples: [] })), linesRead: 0,
    };
    indexEntries(plan);
    cells = readerOf(plan);
  };

  /** The entries a row of `cells` cells (fewer than the header's) feeds, in the mapping's order (that of the error listing). */
  const entriesOfShortRow = (cells: number): readonly number[] => {
    const reached = plainEntriesByColumn.slice(0, plainEntriesBefore[cells]!);
    if (fillForwardEntries.length === 0) return reached.length < 2 ? reached : reached.sort((a, b) => a - b);
    return reached.concat(fillForwardEntries).sort((a, b) => a - b);
  };

  const consider = (row: string[], line: number) => {
    const current = plan!;
    // A short row stays short (a cell past its end is a missing value): padding it to a wide header
    // would cost the header's width for every row, however little the row holds.
    truncateRowToWidth(row, current.width);
    if (leftOutByFilter(row, current)) return;
    let entries: readonly number[] = row.length < current.width && entriesByKey === null ? entriesOfShortRow(row.length) : allEntries;
    if (entriesByKey !== null) {
      const keyed = (entriesByKey as Map<string, number[]>).get(rowKey(row, current.keyIndexes ?? [current.keyIndex]));
      if (keyed === undefined) {
        current.skippedUnselectedKey += 1;
        return;
      }
      entries = keyed;
    }
    work.cellsVisited += 1 + entries.length;
    const rawTs = row[current.timestampIndex] ?? '';
    const ts = readTimestamp(rawTs, current.lastTs);
    if (ts === null || !inWindow(ts, options)) {
      skipRow(row, entries, rawTs, ts);
      return;
    }
    current.lastTs = ts;
    // Once the upload fails, nothing more is staged.
    const rowPoints = stageCells(row, entries, current, cells!, collector.hasErrors ? null : batch, instrumentIds, slots,
      ts, fractionMicros(rawTs), rowVersion(line));
    countStagedRow(ts, rowPoints);
  };

  /** Whether a row filter leaves the row out (counted under the first filter that does, with the row's value). */
  const leftOutByFilter = (row: string[], current: CsvPlan): boolean => {
    const indexes = current.filterIndexes;
    if (!indexes || indexes.length === 0) return false;
    for (let f = 0; f < indexes.length; f += 1) {
      const cell = row[indexes[f]!] ?? '';
      if (!leavesOut(rowFilters[f]!, cell)) continue;
      current.skippedFiltered = (current.skippedFiltered ?? 0) + 1;
      countLeftOutRow(current.filtered![f]!, cell);
      return true;
    }
    return false;
  };

  /** A row's version comes from its line, so a duplicate found in the staging table names the lines of its rows. */
  const rowVersion = (line: number) => {
    if (!versioned) return null;
    if (line > MAX_ROWS_PER_VERSION) throw new CsvRejected(`The file has more than ${MAX_ROWS_PER_VERSION} lines`);
    return BigInt(firstWins ? firstWinsPointVersion(options.versionSeq, line - 1) : pointVersion(options.versionSeq, line - 1));
  };

  /** A row whose timestamp did not read (ts null) or lies outside the window. */
  const skipRow = (row: string[], entries: readonly number[], rawTs: string, ts: number | null) => {
    const current = plan!;
    // Every cell is checked, also on skipped rows: a non-numeric column fails the upload either way.
    checkCells(row, entries, current, cells!);
    if (ts === null) {
      if (isBlank(rawTs) && entries.every((c) => isBlank(row[current.columns[c]!.index]))) current.skippedEmpty += 1;
      else current.skippedBadTimestamp += 1;
      return;
    }
    current.lastTs = ts;
    carryCells(row, entries, current);
    current.skippedOutOfRange += 1;
  };

  const countStagedRow = (ts: number, rowPoints: number) => {
    const current = plan!;
    if (!current.increasing && !versioned && !collector.hasErrors) throw new NeedsRowVersions();
    if (rowPoints === 0) {
      current.skippedEmpty += 1;
      return;
    }
    current.validRows += 1;
    current.points += rowPoints;
    if (ts < current.minTs) current.minTs = ts;
    if (ts > current.maxTs) current.maxTs = ts;
  };

  /** Counts a data row against the row limits. */
  const countDataRow = () => {
    const current = plan!;
    current.dataRows += 1;
    const tooMany = checkRowLimit(current.dataRows, options.maxRows);
    if (tooMany) throw new CsvRejected(tooMany);
  };

  /**
   * A data line of a quote-free chunk once the header and the timestamp format are settled, in a wide
   * file: its cells are read in place (no array of strings per row, which made garbage collection a
   * third of the read). A line that is not as wide as the header, or whose timestamp does not read or
   * lies outside the window, goes the way of any other row.
   */
  const splitLine = (text: string, lineStart: number, lineEnd: number) => truncateRowToWidth(text.slice(lineStart, lineEnd).split(delimiter), plan!.width);
  let starts = new Int32Array(0);
  let ends = new Int32Array(0);
  const delimiterCode = delimiter.charCodeAt(0);
  const considerInPlace = (text: string, lineStart: number, lineEnd: number, line: number) => {
    const current = plan!;
    countDataRow();
    const width = current.width;
    if (starts.length < width) {
      starts = new Int32Array(width);
      ends = new Int32Array(width);
    }
    let fields = 0;
    let fieldStart = lineStart;
    for (let position = lineStart; position < lineEnd; position += 1) {
      if (text.charCodeAt(position) !== delimiterCode) continue;
      if (fields === width - 1) {
        fields = width + 1; // wider than the header
        break;
      }
      starts[fields] = fieldStart;
      ends[fields] = position;
      fields += 1;
      fieldStart = position + 1;
    }
    if (fields < width) {
      starts[fields] = fieldStart;
      ends[fields] = lineEnd;
      fields += 1;
    }
    if (fields !== width) {
      consider(splitLine(text, lineStart, lineEnd), line);
      return;
    }
    work.cellsVisited += 1 + allEntries.length;
    const rawTs = text.slice(starts[current.timestampIndex]!, ends[current.timestampIndex]!);
    const ts = readTimestamp(rawTs, current.lastTs);
    if (ts === null || !inWindow(ts, options)) {
      skipRow(splitLine(text, lineStart, lineEnd), allEntries, rawTs, ts);
      return;
    }
    current.lastTs = ts;
    const rowPoints = stageCellsInPlace(text, starts, ends, current, cells!, collector.hasErrors ? null : batch,
      instrumentIds, slots, ts, fractionMicros(rawTs), rowVersion(line));
    countStagedRow(ts, rowPoints);
  };

  const detect = () => {
    const current = plan!;
    if (mapping.timestamp_mode === 'absolute') {
      const values = pending.map((row) => row[current.timestampIndex] ?? '');
      const detection = detectTimestampFormat(values, { columnName: mapping.timestamp_column });
      current.detection = { format: detection.format, order: detection.order, dayFirst: detection.dayFirst, confidence: detection.confidence };
      const written = values.filter((value) => !isBlank(value));
      if (current.timeZoneSource !== 'file' && written.length > 0 && written.every(hasOwnUtcOffset)) current.timeZoneSource = 'file';
    }
    readTimestamp = timestampReader(current, mapping, options.startMs);
    detected = true;
    const lines = pendingLines.splice(0);
    pending.splice(0).forEach((row, offset) => consider(row, lines[offset]!));
  };

  let headerSeen = from !== null;
  /** Takes one parsed row; answers false when the data table ended (read no further). */
  const acceptRow = (row: string[], line: number): boolean => {
    if (sections) {
      const verdict = sections.accept(row);
      if (verdict === 'skip') return true;
      if (verdict === 'end') return false;
      if (verdict === 'header') {
        settleHeader(row);
        headerSeen = true;
        return true;
      }
    } else if (!headerSeen) {
      settleHeader(row);
      headerSeen = true;
      return true;
    } else if (from && multiSection && sectionNameOfRow(row) !== null) {
      return false; // resumed inside the data table: the next section ends it
    }
    const current = plan!;
    countDataRow();
    if (!detected) {
      pending.push(row);
      pendingLines.push(line);
      if ((row[current.timestampIndex] ?? '').trim() !== '') samples += 1;
      if (samples >= CSV_LIMITS.dateDetectionSampleSize || mapping.timestamp_mode === 'elapsed') detect();
    } else {
      consider(row, line);
    }
    return true;
  };

  reading: for await (const records of readRecords({
    filePath: options.filePath, delimiter, encoding: from?.plan.encoding, startByte: from?.byteOffset ?? 0,
    maxLineBytes: options.maxLineBytes, chunkBytes: options.readChunkBytes, stats: work,
  })) {
    if (scanner.push(records.text)) throw new CsvRejected(CSV_MESSAGES.maliciousContent);
    if (records.rows !== null) {
      // A parsed chunk's rows get the lines they would have without quoted line breaks: exact for the
      // common file, and still increasing and unique when a quoted value spans lines.
      const linesBefore = linesRead;
      linesRead += countLineFeeds(records.text);
      for (let offset = 0; offset < records.rows.length; offset += 1) if (!acceptRow(records.rows[offset]!, linesBefore + offset + 1)) break reading;
    } else if (!multiSection && headerSeen && detected && entriesByKey === null && rowFilters.length === 0) {
      const text = records.text;
      linesRead += forEachNumberedLine(text, linesRead, (start, end, line) => considerInPlace(text, start, end, line));
    } else {
      const text = records.text;
      let ended = false;
      linesRead += forEachNumberedLine(text, linesRead, (start, end, line) => {
        if (!ended && !acceptRow(text.slice(start, end).split(delimiter), line)) ended = true;
      });
      if (ended) break reading;
    }
    const current = plan as CsvPlan | null;
    if (!current) continue;
    if (records.boundary && detected && !collector.hasErrors && batch.points >= options.batchPoints) {
      const checkpoint: StagingCheckpoint = {
        phase: 'staging', versioned, byteOffset: records.byteEnd, scannerTail: scanner.tail, resumed: from !== null,
        plan: copyPlan({ ...current, linesRead }),
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

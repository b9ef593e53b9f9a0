/**
 * One detection of a file's layout from its first bytes, used by the api's preview endpoint and by the
 * console's wizard: encoding, delimiter, the header line after a preamble, where the table ends, the
 * time column and how to read it, the start the preamble states, units in the headers, a suggested
 * mapping, and the shapes the reader does not take yet (said, never imported wrongly). Every choice can
 * be given instead of detected (the user's change in the wizard); the upload carries the same choices
 * and the api cuts the file with them (TableCutter), so the worker reads the table the preview shows.
 */
import { CSV_LIMITS, CSV_MESSAGES } from './messages.ts';
import { decodeCsvBytes, type CsvEncoding } from './encoding.ts';
import { sniffBinary } from './binary-sniff.ts';
import { containsMaliciousContent } from './malicious-content.ts';
import { CSV_DELIMITERS, parseCsvRows, type CsvDelimiter } from './row-parser.ts';
import { sanitizeHeaders } from './headers.ts';
import { checkColumnCount, CsvLimitError } from './limits.ts';
import { dataSectionTitle, declaresBlocks, findDataSections, findReadBlocks, isMultiSectionCsv, type CsvDataSection, type CsvReadBlock } from './sections.ts';
import { findFooterTime, PLATE_GRID_MAX_ROWS, plateGridTable, plateRowLabel, readPlateGrid, type PlateGrid } from './plate-grid.ts';
import { chooseHeaderLine, endsTable, excelSeparatorHint, isMarkerLine, lineCells, type HeaderChoice } from './layout-lines.ts';
import { findPreambleStart, type PreambleStart } from './preamble.ts';
import { detectTimestampFormat, isLowConfidence, type TimestampDetection } from './timestamps.ts';
import { parseNumericCell } from './numeric.ts';
import { suggestInstrument } from '../instruments/suggestion.ts';
import { suggestLongFormat, type LongFormatSuggestion } from './long-format.ts';
import { suggestRowFilters, type RowFilter } from './row-filters.ts';
import { headerlessColumnNames } from './headerless.ts';

/** Bytes of a file the api's preview reads: a preamble of thousands of lines fits, a 1 GiB file is not read. */
export const LAYOUT_PREVIEW_BYTES = 1024 * 1024;

/** Lines searched for the header: BioLector Pro writes 2,101 lines of preamble. */
export const LAYOUT_MAX_HEADER_LINE = 5000;

/** What the user (or the upload) chose instead of detecting. */
export interface CsvReadingChoices {
  encoding?: CsvEncoding;
  delimiter?: CsvDelimiter;
  /** 1-based line of the header row in the decoded file. */
  header_line?: number;
  time_column?: string;
  preferDayFirst?: boolean;
  /** The table has no header row: its first row is data and its columns are named Column 1, Column 2, ... (or `column_names`). */
  no_header?: boolean;
  /** Names of a header-less table's columns, in order (the user's renames); columns past them keep Column N. */
  column_names?: string[];
  /** The read block to read (1-based, among `blocks`); else the first with a time axis, else the first. */
  block?: number;
}

export type LayoutOrientation = 'rows' | 'columns';

export interface ColumnSuggestion {
  column: string;
  /** The unit as the header writes it (`°C` from `Temp [°C]`, `mL/h` from `Flow (mL/h)`), else null. */
  unit_text: string | null;
  /** Share of the sample's non-empty cells that are numbers. */
  numeric_share: number;
  suggestion: { type: string; unit: string } | null;
}

export interface CsvLayout {
  encoding: CsvEncoding;
  delimiter: CsvDelimiter;
  /** Excel's `sep=` line was the first line. */
  separator_hint: boolean;
  /** 1-based line of the header in the decoded file; lines before it are the preamble. */
  header_line: number;
  preamble_lines: number;
  /** The table ends before the file does (a marker, padding lines): the reader stops there. */
  table_end: { line: number; text: string } | null;
  /** Multi-section file's data section (DASware's TrackData1), else null. */
  section: string | null;
  /** False when the table is read without a header row (`no_header`): `headers` are Column 1, Column 2, ... or the names given. */
  header_row?: boolean;
  /** The first row reads as data (numbers, times): the file likely has no header row. */
  looks_headerless?: boolean;
  /** Long format suggested: the time repeats, and with these key columns no time repeats within a series; else null. */
  long_format?: LongFormatSuggestion | null;
  /** Row filters suggested: calibrators, controls or blanks in a column such as `Sample Type`. */
  row_filters?: RowFilter[];
  /** The read blocks of the part read (one per wavelength, channel or plate), and the one read (its index), else null. */
  blocks: CsvReadBlock[];
  block: number | null;
  /** The table is an endpoint plate grid, read as one reading per well (headers `Read time`, A1..H12), else null. */
  grid: Omit<PlateGrid, 'wells' | 'values'> | null;
  vendor: string | null;
  orientation: LayoutOrientation;
  raw_headers: string[];
  headers: string[];
  rows: string[][];
  /** Data rows within the bytes read. */
  rows_parsed: number;
  time_column: string | null;
  time: {
    mode: 'absolute' | 'elapsed';
    format: TimestampDetection['format'];
    order: TimestampDetection['order'];
    confidence: number;
    elapsed_unit: 'seconds' | 'minutes' | 'hours' | 'days' | null;
    /** Elapsed values are clock durations (`H:MM:SS`, `D.HH:MM:SS`). */
    clock: boolean;
  } | null;
  start: PreambleStart | null;
  columns: ColumnSuggestion[];
  /** Sentences for the user: layouts read only in part, guesses to check. */
  notices: string[];
  /** The bytes read were a prefix of the file. */
  partial: boolean;
}

export type LayoutOutcome = { ok: true; layout: CsvLayout } | { ok: false; message: string };

const UNIT_IN_HEADER = /[[(]([^[\]()]{1,24})[\])]\s*$/;

/** The unit a header writes at its end in brackets or parentheses, as written; null when none. */
export function unitFromHeader(header: string): string | null {
  const match = UNIT_IN_HEADER.exec(header.trim());
  if (!match) return null;
  const unit = match[1]!.trim();
  // `(2)` is a repeated name's suffix and `[]` says arbitrary units: neither names a unit.
  // A longer plain word (`(processed)`) is a remark, not a unit.
  if (unit === '' || /^\d+$/.test(unit) || /^[a-z]{5,}$/i.test(unit)) return null;
  return unit;
}

/** Splits the text into lines (LF or CRLF); the last element is a cut line when the text is partial. */
function splitLines(text: string, limit: number): string[] {
  const lines: string[] = [];
  let start = 0;
  while (start <= text.length && lines.length < limit) {
    let end = text.indexOf('\n', start);
    if (end === -1) end = text.length;
    lines.push(text.charCodeAt(end - 1) === 13 ? text.slice(start, end - 1) : text.slice(start, end));
    start = end + 1;
  }
  return lines;
}

function chooseDelimiterAndHeader(lines: readonly string[], given?: CsvDelimiter): { delimiter: CsvDelimiter; header: HeaderChoice | null } {
  let best: { delimiter: CsvDelimiter; header: HeaderChoice | null } = { delimiter: given ?? ',', header: null };
  for (const delimiter of given ? [given] : CSV_DELIMITERS) {
    const rows = lines.map((line) => lineCells(line, delimiter));
    const header = chooseHeaderLine(rows, lines);
    if (!header) continue;
    const current = best.header;
    if (!current || header.run > current.run || (header.run === current.run && header.width > current.width)) best = { delimiter, header };
  }
  return best;
}

const VENDOR_SIGNATURES: [string, (text: string, headers: readonly string[]) => boolean][] = [
  ['Eppendorf DASware', (text) => isMultiSectionCsv(text)],
  ['m2p-labs BioLector Pro', (text) => text.includes('=====data=====')],
  ['m2p-labs BioLector I', (text, headers) => text.startsWith('FILENAME;') && headers.includes('WELLNUM')],
  ['BioTek Gen5', (text) => /^Software Version\t/m.test(text) && /^Reader (Type|Serial Number):/m.test(text)],
  ['BMG LABTECH MARS', (text) => /Test run no\.:/.test(text)],
  ['Molecular Devices SoftMax Pro', (text) => text.startsWith('##BLOCKS=')],
  ['Beckman Coulter Vi-CELL BLU', (_text, headers) => headers.includes('Viable (x10^6) cells/mL') && headers.includes('Analysis date/time')],
  ['Nova Biomedical BioProfile FLEX2', (_text, headers) => headers[0] === 'Date & Time' && headers.includes('Gluc')],
  ['Roche Cedex Bio HT', (text) => text.includes('#ARC-FILE#')],
  ['InfluxDB/Chronograf', (_text, headers) => headers[0] === 'time' && headers.length === 3 && /^position$/i.test(headers[2] ?? '')],
];

const TIME_NAME = /time|date|zeit|datum|stamp|elapsed|duration|^t$/i;

interface TimeChoice {
  column: string;
  detection: TimestampDetection;
}

/** The time column: a date column (named like one first), else an elapsed clock, else a numeric column named like time. */
function chooseTimeColumn(headers: readonly string[], rows: readonly string[][], decimalComma: boolean, preferDayFirst: boolean): TimeChoice | null {
  const candidates: { column: string; detection: TimestampDetection; rank: number; index: number }[] = [];
  headers.forEach((column, index) => {
    const values = rows.map((row) => row[index] ?? '');
    if (values.every((value) => value.trim() === '')) return;
    const detection = detectTimestampFormat(values, { columnName: column, decimalComma, preferDayFirst });
    const named = TIME_NAME.test(column);
    let rank = 0;
    if (detection.format !== 'unknown' && detection.format !== 'spreadsheet-serial' && !isLowConfidence(detection)) rank = named ? 5 : 4;
    else if (detection.elapsed?.clock) rank = named ? 3 : 2;
    else if (named && detection.format === 'spreadsheet-serial' && (detection.elapsed || detection.confidence === 1)) rank = 1;
    if (rank > 0) candidates.push({ column, detection, rank, index });
  });
  candidates.sort((a, b) => b.rank - a.rank || a.index - b.index);
  const chosen = candidates[0];
  return chosen ? { column: chosen.column, detection: chosen.detection } : null;
}

function numericShare(values: readonly string[], decimalComma: boolean): number {
  let written = 0;
  let numbers = 0;
  for (const value of values) {
    if (value.trim() === '') continue;
    written += 1;
    const parsed = parseNumericCell(value, { decimalComma });
    if (parsed !== null && !Number.isNaN(parsed)) numbers += 1;
  }
  return written === 0 ? 0 : numbers / written;
}

/** Cells that read as a time or a number, in a header: a header that is mostly such cells is data. */
function looksLikeData(cell: string, decimalComma: boolean): boolean {
  const value = cell.trim();
  if (value === '') return false;
  const parsed = parseNumericCell(value, { decimalComma });
  if (parsed !== null && !Number.isNaN(parsed)) return true;
  return detectTimestampFormat([value]).format !== 'unknown';
}

/** What a table whose first row reads as data is told; the wizard then reads it without a header row. */
export const HEADERLESS_NOTICE = 'The first row of this table looks like data, not column names: the file may have no header row; read without one, its columns are named Column 1, Column 2, ... and can be renamed.';

/** What a transposed table is told; the console offers to turn it (turnTable). */
export const TRANSPOSED_NOTICE = 'Time runs across the columns in this file (a transposed table): turn it so time runs down the rows to read it.';

/**
 * Time across the columns: the header's cells after the first are increasing numbers and the header,
 * or one of the first rows under it, is named as a time.
 */
function isTransposed(rawHeaders: readonly string[], rowLabels: readonly string[], decimalComma: boolean): boolean {
  const acrossColumns = rawHeaders.slice(1).filter((cell) => cell.trim() !== '');
  const numbers = acrossColumns.map((cell) => parseNumericCell(cell, { decimalComma }));
  const increasing = numbers.length >= 3 && numbers.every((value, index) => value !== null && !Number.isNaN(value) && (index === 0 || value > numbers[index - 1]!));
  // The row of times is the header itself, or one of the first rows under a row of cycle numbers
  // (Tecan i-control: 'Cycle Nr.', then 'Time [s]', then 'Temp. [°C]' and a row per well).
  return increasing && (TIME_NAME.test(rawHeaders[0] ?? '') || rowLabels.slice(0, 3).some((label) => TIME_NAME.test(label)));
}

function shapeNotices(rawHeaders: readonly string[], rows: readonly string[][], decimalComma: boolean, timeColumn: string | null): { notices: string[]; orientation: LayoutOrientation } {
  const notices: string[] = [];
  let orientation: LayoutOrientation = 'rows';
  const rowLabels = rows.map((row) => (row[0] ?? '').trim());
  const columnNumbers = rawHeaders.slice(1).map((cell) => cell.trim()).filter((cell) => cell !== '');
  if (
    columnNumbers.length >= 6 && columnNumbers.every((cell, index) => cell === String(index + 1))
    && rowLabels.length >= 4 && rowLabels.every((label, index) => label === String.fromCharCode(65 + index))
  ) {
    notices.push(`This file is a plate grid (rows A-${rowLabels[rowLabels.length - 1]} x columns 1-${columnNumbers.length}); reading plates is not supported yet.`);
  }
  const headerData = rawHeaders.filter((cell) => looksLikeData(cell, decimalComma)).length;
  const written = rawHeaders.filter((cell) => cell.trim() !== '').length;
  if (written >= 3 && (headerData / written >= 0.5 || headerData >= 3)) {
    if (isTransposed(rawHeaders, rowLabels, decimalComma)) {
      orientation = 'columns';
      notices.push(TRANSPOSED_NOTICE);
    } else if (!notices.some((notice) => notice.startsWith('This file is a plate grid'))) {
      notices.push(HEADERLESS_NOTICE);
    }
  }
  const wellColumn = rawHeaders.find((cell) => /^(well|wellnum|well ?id|position)$/i.test(cell.trim()));
  if (wellColumn) {
    notices.push(`Rows carry one well or position each (column '${wellColumn.trim()}'): map it as the key column (long format), with a second key column when one alone repeats times.`);
  }
  if (timeColumn === null) notices.push('No time column was found: choose one, or this file cannot be read as a time series.');
  return { notices, orientation };
}

/** How one table of a file reads, for the list of read blocks; null leaves it out (not a read, unless the file declares its blocks). */
function judgeBlock(
  lines: readonly string[], cells: readonly (readonly string[])[], index: number, run: number, delimiter: CsvDelimiter, preferDayFirst: boolean, keepAll: boolean,
): { shape: CsvReadBlock['shape']; time_axis: boolean } | null {
  if (readPlateGrid(lines.slice(index, index + PLATE_GRID_MAX_ROWS + 1), delimiter, index + 1)) return { shape: 'grid', time_axis: false };
  const rawHeaders = cells[index]!;
  const rows = cells.slice(index + 1, index + 1 + Math.min(run, CSV_LIMITS.dateDetectionSampleSize)) as string[][];
  const decimalComma = delimiter !== ',';
  if (isTransposed(rawHeaders, rows.map((row) => (row[0] ?? '').trim()), decimalComma)) return { shape: 'columns', time_axis: true };
  const headers = sanitizeHeaders([...rawHeaders]);
  const time = chooseTimeColumn(headers, rows, decimalComma, preferDayFirst);
  // An axis is two or more times: a settings table stating one start time (Tecan's `Start Time:` row) is none.
  const column = time ? headers.indexOf(time.column) : -1;
  const timeAxis = column !== -1 && rows.filter((row) => (row[column] ?? '').trim() !== '').length >= 2;
  return timeAxis || keepAll ? { shape: 'table', time_axis: timeAxis } : null;
}

/** A data section of a multi-section file as a read block: titled by its name and the unit its columns name. */
function dataSectionBlock(section: CsvDataSection, index: number, delimiter: CsvDelimiter, preferDayFirst: boolean, cutAtEnd: boolean): CsvReadBlock {
  const lines = splitLines(section.text, CSV_LIMITS.dateDetectionSampleSize + 1).filter((line) => line.trim() !== '');
  const rawHeaders = lineCells(lines[0]!, delimiter);
  const rows = lines.slice(1).map((line) => lineCells(line, delimiter));
  const headers = sanitizeHeaders([...rawHeaders]);
  const time = chooseTimeColumn(headers, rows, delimiter !== ',', preferDayFirst);
  const column = time ? headers.indexOf(time.column) : -1;
  // A section the bytes read end in: its last line is cut, not a row.
  const rowCount = cutAtEnd && !section.text.endsWith('\n') && section.rows > 0 ? section.rows - 1 : section.rows;
  return {
    index: index + 1, title: dataSectionTitle(section.name, rawHeaders), header_line: section.headerLine,
    last_line: section.headerLine + rowCount, rows: rowCount, columns: rawHeaders.length, shape: 'table',
    time_axis: column !== -1 && rows.filter((row) => (row[column] ?? '').trim() !== '').length >= 2,
  };
}

/** The grid as the answer describes it: its shape, not its wells and values (they are the table's headers and row). */
function gridShape(grid: PlateGrid): CsvLayout['grid'] {
  return { rows: grid.rows, columns: grid.columns, row_labels: grid.row_labels, empty_wells: grid.empty_wells, header_line: grid.header_line, last_line: grid.last_line };
}

/** What the user is told about the blocks and the plate grid read. */
function blockNotices(blocks: readonly CsvReadBlock[], block: CsvReadBlock | null, grid: PlateGrid | null, start: PreambleStart | null, fromFooter: boolean): string[] {
  const notices: string[] = [];
  if (block && blocks.length > 1) notices.push(`This file has ${blocks.length} read blocks; block ${block.index} ('${block.title}') is read: choose another under Block.`);
  if (grid) {
    const empty = grid.empty_wells > 0 ? ` ${grid.empty_wells} empty well(s) are left out.` : '';
    notices.push(`This table is a plate grid (rows A-${plateRowLabel(grid.rows - 1)} x columns 1-${grid.columns}): each well is read as one column (${grid.wells.length} wells) at one read time.${empty}`);
    if (!start) notices.push('This plate grid states no read time: give the date and time the plate was read as the start.');
    else if (fromFooter) notices.push(`The read time is when the file was saved (line ${start.line}: '${start.text}'): check it.`);
  }
  return notices;
}

export interface DetectOptions extends CsvReadingChoices {
  partial?: boolean;
  maxColumns?: number;
  /** Data rows to answer (default CSV_LIMITS.previewRows); the console asks for all of the bytes read. */
  maxRows?: number;
}

/**
 * Detects the layout of a file's first bytes. `partial`: the bytes are a prefix of a larger file.
 * Answers a message instead when the bytes are not a text table (binary, empty, script-like content,
 * no header, a read limit).
 */
export function detectCsvLayout(bytes: Uint8Array, options: DetectOptions = {}): LayoutOutcome {
  const binary = sniffBinary(bytes.subarray(0, 64 * 1024));
  if (binary) return { ok: false, message: binary };
  const partial = options.partial ?? false;
  const { text: decoded, encoding } = decodeCsvBytes(bytes, { partial, encoding: options.encoding });
  const text = decoded.charCodeAt(0) === 0xfeff ? decoded.slice(1) : decoded;
  if (text.trim() === '') return { ok: false, message: CSV_MESSAGES.contentEmpty };
  try {
    const outcome = detectInText(text, encoding, partial, options);
    // Only the table is stored and shown as data: a preamble's prose ("List of actions in this
    // measurement script:", Tecan i-control) is not checked, the header and every row are.
    if (!outcome.ok) return containsMaliciousContent(text) ? { ok: false, message: CSV_MESSAGES.maliciousContent } : outcome;
    if (containsMaliciousContent(tableText(text, outcome.layout))) return { ok: false, message: maliciousMessage(outcome.layout) };
    return outcome;
  } catch (error) {
    if (error instanceof CsvLimitError) return { ok: false, message: error.message };
    throw error;
  }
}

/** The lines of the table the layout found: from its header to its end (a plate grid's last row, or the end of the text). */
function tableText(text: string, layout: CsvLayout): string {
  const lines = text.split('\n');
  const end = layout.grid ? layout.grid.last_line : layout.table_end ? layout.table_end.line - 1 : undefined;
  return lines.slice(layout.header_line - 1, end).join('\n');
}

/** The fixed message, naming the column when the script-like text is in the header. */
function maliciousMessage(layout: CsvLayout): string {
  const index = layout.raw_headers.findIndex((cell) => containsMaliciousContent(cell));
  if (index === -1) return CSV_MESSAGES.maliciousContent;
  return `${CSV_MESSAGES.maliciousContent}: the name of column ${index + 1} ('${layout.headers[index]!.slice(0, 40)}')`;
}

function detectInText(text: string, encoding: CsvEncoding, partial: boolean, options: DetectOptions): LayoutOutcome {
  let lines = splitLines(text, LAYOUT_MAX_HEADER_LINE + 1);
  // A cut last line is not judged.
  if (partial && lines.length <= LAYOUT_MAX_HEADER_LINE) lines = lines.slice(0, -1);
  const hint = lines.length > 0 ? excelSeparatorHint(lines[0]!) : null;
  const firstLine = hint ? 1 : 0;
  // A file of several blocks (SoftMax Pro's `~End`-closed blocks) is read at its first block.
  const firstBlockEnd = text.startsWith('##BLOCKS=') ? lines.findIndex((line) => /^~End\s*$/.test(line)) : -1;
  const candidates = lines.slice(firstLine, firstBlockEnd > 0 ? firstBlockEnd : LAYOUT_MAX_HEADER_LINE);
  const dataSections = findDataSections(text);

  // Read blocks (sections.ts): the chosen one, else the one the header found when it has a time axis,
  // else the first with a time axis, else the first.
  let blocks: CsvReadBlock[] = [];
  let block: CsvReadBlock | null = null;
  let section: CsvDataSection | null = null;
  let delimiter: CsvDelimiter;
  let headerIndex: number;
  if (dataSections.length > 0) {
    // DASware, DASGIP: the header is a data section's first line (sections.ts); one section per unit
    // of a parallel run, each a read block, the first read unless another is chosen.
    delimiter = options.delimiter ?? chooseDelimiterAndHeader(splitLines(dataSections[0]!.text, 200), undefined).delimiter;
    if (dataSections.length > 1) blocks = dataSections.map((candidate, index) => dataSectionBlock(candidate, index, delimiter, options.preferDayFirst ?? false, partial && candidate.endOffset === text.length));
    if (options.block !== undefined) {
      block = blocks.find((candidate) => candidate.index === options.block) ?? null;
      if (!block) return { ok: false, message: `Block ${options.block} is not one of the ${blocks.length} read block(s) found in the part of the file that was read.` };
    } else {
      block = blocks.find((candidate) => candidate.header_line === options.header_line) ?? blocks[0] ?? null;
    }
    section = block ? dataSections[block.index - 1]! : dataSections[0]!;
    headerIndex = section.headerLine - 1;
  } else if (options.header_line !== undefined) {
    headerIndex = options.header_line - 1;
    if (headerIndex < firstLine || headerIndex >= lines.length) return { ok: false, message: `Line ${options.header_line} is not within the part of the file that was read (${lines.length} lines).` };
    delimiter = options.delimiter ?? hint ?? chooseDelimiterAndHeader(lines.slice(headerIndex, headerIndex + 200), undefined).delimiter;
  } else {
    const choice = chooseDelimiterAndHeader(candidates, options.delimiter ?? hint ?? undefined);
    if (!choice.header) return { ok: false, message: CSV_MESSAGES.headerRequired };
    delimiter = choice.delimiter;
    headerIndex = choice.header.index + firstLine;
  }

  if (!section) {
    const cells = lines.map((line) => lineCells(line, delimiter));
    const declared = declaresBlocks(lines);
    blocks = findReadBlocks(lines, cells, (index, run) => judgeBlock(lines, cells, index, run, delimiter, options.preferDayFirst ?? false, declared));
    const holding = (line: number) => blocks.find((candidate) => candidate.header_line <= line && line <= candidate.last_line) ?? null;
    if (options.block !== undefined) {
      block = blocks.find((candidate) => candidate.index === options.block) ?? null;
      if (!block) return { ok: false, message: `Block ${options.block} is not one of the ${blocks.length} read block(s) found in the part of the file that was read.` };
      headerIndex = block.header_line - 1;
    } else if (options.header_line === undefined && (declared ? blocks.length > 0 : blocks.length > 1)) {
      const found = holding(headerIndex + 1);
      block = found?.time_axis ? found : blocks.find((candidate) => candidate.time_axis) ?? found ?? blocks[0]!;
      headerIndex = block.header_line - 1;
    } else {
      block = holding(headerIndex + 1);
    }
  }
  const grid = section ? null : readPlateGrid(lines.slice(headerIndex, headerIndex + PLATE_GRID_MAX_ROWS + 1), delimiter, headerIndex + 1);

  // The table: from the header to its end (a marker, a one-cell line) or the text's end.
  let offset = 0;
  for (let index = 0; index < headerIndex; index += 1) offset = text.indexOf('\n', offset) + 1;
  let tableEnd: CsvLayout['table_end'] = null;
  let tableText: string;
  if (section) {
    tableText = section.text;
  } else if (grid) {
    // A plate grid is read as one reading per well (plate-grid.ts): the table the upload's cut writes.
    tableText = plateGridTable(grid, delimiter);
  } else {
    let position = text.indexOf('\n', offset);
    let lineNumber = headerIndex + 1;
    let endOffset = text.length;
    while (position !== -1) {
      const start = position + 1;
      let end = text.indexOf('\n', start);
      if (end === -1) {
        if (partial) break;
        end = text.length;
      }
      lineNumber += 1;
      const line = text.slice(start, end).replace(/\r$/, '');
      if (endsTable(line, delimiter)) {
        tableEnd = { line: lineNumber, text: line.slice(0, 80) };
        endOffset = start;
        break;
      }
      position = end === text.length ? -1 : end;
    }
    tableText = text.slice(offset, endOffset);
  }
  const tablePartial = partial && tableEnd === null && grid === null && (!section || section.endOffset === text.length);
  const parsed = parseCsvRows(tableText, delimiter, { partial: tablePartial }).filter((row) => !(row.length === 1 && row[0]!.trim() === ''));
  const firstRow = parsed[0];
  if (!firstRow || firstRow.every((cell) => cell.trim() === '')) return { ok: false, message: CSV_MESSAGES.headerRequired };
  // Without a header row the first row is data and the columns are named by position (or as given).
  const headerless = options.no_header === true;
  const rawHeaders = headerless ? headerlessColumnNames(parsed, options.column_names) : firstRow;
  checkColumnCount(rawHeaders.length, options.maxColumns);
  const headers = sanitizeHeaders(rawHeaders);
  const dataRows = headerless ? parsed : parsed.slice(1);
  if (dataRows.length === 0 && !tablePartial) return { ok: false, message: CSV_MESSAGES.headerWithoutRows };
  const sampleRows = dataRows.slice(0, CSV_LIMITS.dateDetectionSampleSize);
  const decimalComma = delimiter !== ',';
  const preferDayFirst = options.preferDayFirst ?? false;

  let time: TimeChoice | null = null;
  if (options.time_column !== undefined) {
    const index = headers.findIndex((name) => name.toLowerCase() === options.time_column!.trim().toLowerCase());
    if (index === -1) return { ok: false, message: `Time column '${options.time_column}' is not in the header.` };
    time = { column: headers[index]!, detection: detectTimestampFormat(sampleRows.map((row) => row[index] ?? ''), { columnName: headers[index], decimalComma, preferDayFirst }) };
  } else {
    time = chooseTimeColumn(headers, sampleRows, decimalComma, preferDayFirst);
  }
  const elapsed = time?.detection.elapsed ?? null;
  const absolute = time !== null && time.detection.format !== 'unknown' && !(time.detection.format === 'spreadsheet-serial' && elapsed);
  const preambleLines = section ? 0 : headerIndex;
  let start = preambleLines > 0 ? findPreambleStart(lines.slice(0, headerIndex), delimiter, { preferDayFirst }) : null;
  // SoftMax Pro states no time above its plates, only when the file was saved, in its footer.
  const footerStart = grid && !start ? findFooterTime(lines.slice(grid.last_line), grid.last_line + 1, preferDayFirst) : null;
  if (footerStart) start = footerStart;

  const columns: ColumnSuggestion[] = headers.map((column, index) => {
    const share = numericShare(sampleRows.map((row) => row[index] ?? ''), decimalComma);
    const isTime = time !== null && column === time.column;
    const suggested = suggestInstrument(column);
    return {
      column,
      unit_text: unitFromHeader(rawHeaders[index] ?? ''),
      numeric_share: share,
      suggestion: !isTime && share > 0 && (suggested.type !== '' || suggested.unit !== '') ? { type: suggested.type, unit: suggested.unit } : null,
    };
  });
  const shape = shapeNotices(rawHeaders, sampleRows, decimalComma, time?.column ?? null);
  const notices = [...blockNotices(blocks, block, grid, start, footerStart !== null), ...shape.notices];
  if (tableEnd) notices.push(`The table ends at line ${tableEnd.line} ('${tableEnd.text}'); what follows is not read.`);
  if (time && elapsed && !start && !grid) notices.push(`'${time.column}' counts time from the run's start: give the start date and time.`);
  if (time && absolute && isLowConfidence(time.detection)) notices.push(`The date format of '${time.column}' is a guess: check the first timestamps.`);
  if (headerless) notices.push(`Read without a header row: the columns are named ${headers[0]} to ${headers[headers.length - 1]}; rename them in the mapping table.`);
  const longFormat = suggestLongFormat(headers, dataRows, time ? headers.indexOf(time.column) : -1, decimalComma);
  if (longFormat) {
    const timeIndex = headers.indexOf(time!.column);
    const timed = dataRows.map((row) => (row[timeIndex] ?? '').trim()).filter((cell) => cell !== '');
    const told = `told apart by ${longFormat.key_columns.join(' x ')} (${longFormat.keys} in the rows read); read as long format.`;
    notices.push(new Set(timed).size < timed.length ? `Times repeat: each row is one series, ${told}` : `Each row is one well's read at its own time, ${told}`);
  }

  return {
    ok: true,
    layout: {
      encoding,
      delimiter,
      separator_hint: hint !== null,
      header_line: headerIndex + 1,
      preamble_lines: preambleLines,
      table_end: tableEnd,
      section: section?.name ?? null,
      header_row: !headerless,
      looks_headerless: headerless || shape.notices.includes(HEADERLESS_NOTICE),
      long_format: longFormat,
      row_filters: suggestRowFilters(headers, dataRows.slice(0, 5_000)),
      blocks,
      block: block?.index ?? null,
      grid: grid && gridShape(grid),
      vendor: VENDOR_SIGNATURES.find(([, matches]) => matches(text, rawHeaders))?.[0] ?? null,
      orientation: shape.orientation,
      raw_headers: rawHeaders,
      headers,
      rows: dataRows.slice(0, options.maxRows ?? CSV_LIMITS.previewRows),
      rows_parsed: dataRows.length,
      time_column: time?.column ?? null,
      time: time === null ? null : {
        mode: absolute ? 'absolute' : 'elapsed',
        format: time.detection.format,
        order: time.detection.order,
        confidence: time.detection.confidence,
        elapsed_unit: elapsed?.unit ?? null,
        clock: elapsed?.clock === true,
      },
      start,
      columns,
      notices,
      partial,
    },
  };
}

/** Whether a line is a section marker (re-exported for the wizard's preamble view). */
export { isMarkerLine };

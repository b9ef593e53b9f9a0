/**
 * An analyzer report read as the unit operation's samples would receive it: the table found by the
 * shared CSV detection (encoding, delimiter, header after a preamble, where the table ends), each
 * row's sample id matched to a stored sample (case and spaces aside), calibrator and control rows left
 * out, result cells read as numbers or flagged limits, and what cannot be read kept with its line.
 * Nothing here writes: the plan is the dry run's answer and the grid save the import then applies.
 */
import {
  createTimestampParser, decodeCsvBytes, detectCsvLayout, detectTimestampFormat, parseCsvRows, parseTimeZone, sniffBinary, TIME_ZONE_MESSAGE,
} from '@bioprocess/shared/csv/index';
import { keyValueTable, readKeyValueReport } from '@bioprocess/shared/samples-key-value';
import { spectrumRefusal } from '@bioprocess/shared/samples-import-suggestion';
import { headerUnit, sameUnitSpelling } from '@bioprocess/shared/instruments/header-unit';
import { ucumUnitProblem } from '@bioprocess/shared/instruments/ucum';
import type { SampleFlag, SampleGridSave } from '@bioprocess/shared/samples';
import {
  DEFAULT_EXCLUDED_WORDS, matchesExcludedWord, readReportCell, sampleIdKey, SAMPLE_IMPORT_MESSAGES, SAMPLE_REPORT_LISTED_ROWS,
  SAMPLE_REPORT_MAX_ROWS, type PlannedResult, type SampleImportPreview, type SampleImportRowProblem, type SampleReportMapping,
} from '@bioprocess/shared/samples-import';
import { badRequest } from '../platform/http-error.ts';
import { toSample, type SampleRow } from './repository.ts';

export interface ReportRow {
  /** 1-based line of the row in the decoded text. */
  line: number;
  cells: string[];
  /** Each cell's own line, where the cells are on lines of their own (a key/value report). */
  cellLines?: number[];
}

export interface ReportTable {
  headers: string[];
  rows: ReportRow[];
}

/** The column names of a report without a header row. */
export function positionalColumnName(index: number): string {
  return `Column ${index + 1}`;
}

/** The report's table: its header (as the preview names it) and every data row with its line. */
export function readReportTable(bytes: Uint8Array, mapping: SampleReportMapping, options: { maxColumns?: number } = {}): ReportTable {
  if (mapping.key_value) return readKeyValueTable(bytes, mapping, options.maxColumns);
  const headerless = mapping.header_line === 0;
  const outcome = detectCsvLayout(bytes, {
    encoding: mapping.encoding, delimiter: mapping.delimiter, header_line: headerless ? 1 : mapping.header_line,
    maxColumns: options.maxColumns, maxRows: 0, preferDayFirst: mapping.prefer_day_first,
  });
  if (!outcome.ok) throw badRequest(outcome.message);
  const layout = outcome.layout;
  const decoded = decodeCsvBytes(bytes, { encoding: layout.encoding }).text;
  const text = decoded.charCodeAt(0) === 0xfeff ? decoded.slice(1) : decoded;

  let offset = 0;
  for (let line = 1; line < layout.header_line && offset !== -1; line += 1) offset = text.indexOf('\n', offset) + 1;
  let end = text.length;
  if (layout.table_end) {
    end = offset;
    for (let line = layout.header_line; line < layout.table_end.line; line += 1) end = text.indexOf('\n', end) + 1;
  }
  const parsed = parseCsvRows(text.slice(offset, end), layout.delimiter);
  const rows: ReportRow[] = [];
  let line = layout.header_line;
  for (const cells of parsed) {
    const at = line;
    line += 1 + cells.reduce((count, cell) => count + (cell.match(/\n/g)?.length ?? 0), 0);
    if (cells.length === 1 && cells[0]!.trim() === '') continue;
    rows.push({ line: at, cells });
  }
  if (!headerless) rows.shift();
  if (rows.length > SAMPLE_REPORT_MAX_ROWS) throw badRequest(SAMPLE_IMPORT_MESSAGES.tooManyRows);
  if (!headerless) return { headers: layout.headers, rows };
  const width = rows.reduce((widest, row) => Math.max(widest, row.cells.length), 0);
  return { headers: Array.from({ length: width }, (_, index) => positionalColumnName(index)), rows };
}

/** A key/value report as a one-row table: its keys are the columns. */
function readKeyValueTable(bytes: Uint8Array, mapping: SampleReportMapping, maxColumns = SAMPLE_REPORT_MAX_ROWS): ReportTable {
  const binary = sniffBinary(bytes.subarray(0, 64 * 1024));
  if (binary) throw badRequest(binary);
  const { text } = decodeCsvBytes(bytes, { encoding: mapping.encoding });
  const report = readKeyValueReport(text);
  if (!report) throw badRequest(SAMPLE_IMPORT_MESSAGES.notKeyValue);
  // Its keys are the table's columns: as bounded as a table's.
  if (report.pairs.length > maxColumns) throw badRequest(SAMPLE_IMPORT_MESSAGES.tooManyKeys(maxColumns));
  const table = keyValueTable(report);
  return { headers: table.headers, rows: [{ line: table.lines[0]!, cells: table.values, cellLines: table.lines }] };
}

function columnIndex(headers: readonly string[], name: string, role: string): number {
  const wanted = name.trim().toLowerCase();
  const index = headers.findIndex((header) => header.trim().toLowerCase() === wanted);
  if (index === -1) throw badRequest(SAMPLE_IMPORT_MESSAGES.columnMissing(role, name));
  return index;
}

/** A unit as a report writes it, as the UCUM code of the same unit, or null when it is none. */
export function reportUnit(text: string): string | null {
  const trimmed = text.trim();
  if (trimmed === '') return null;
  if (ucumUnitProblem(trimmed) === null) return trimmed;
  const spelling = sameUnitSpelling(trimmed);
  return spelling && ucumUnitProblem(spelling) === null ? spelling : null;
}

/** A wide column's analyte name: the header without its unit (`CDW (g/L)` is CDW). */
export function analyteOfHeader(header: string): string {
  const unit = headerUnit(header);
  if (unit.literal === null) return header.trim();
  return header.trim().replace(/\s*[[(][^\][()]*[\])]\s*$/, '').trim() || header.trim();
}

interface ReadResult {
  analyte: string;
  value: number;
  flag: SampleFlag | null;
  unit: string;
  measured_at: string | null;
  line: number;
}

interface ReportSample {
  sampleId: string;
  drawnAt: string | null;
  results: Map<string, ReadResult>;
  rows: number;
  /** Results of this sample measured again later in the report. */
  superseded: number;
}

export interface ImportPlan {
  preview: Omit<SampleImportPreview, 'dry_run' | 'samples_created' | 'samples_updated'>;
  /** What the import saves through the grid's save: only samples whose results change. */
  save: SampleGridSave;
}

const sameTime = (left: string | null, right: string | null) =>
  left === right || (left !== null && right !== null && Date.parse(left) === Date.parse(right));

function timeParser(table: ReportTable, index: number, mapping: SampleReportMapping): (text: string) => number | null {
  const zone = parseTimeZone(mapping.time_zone ?? 'UTC');
  if (!zone) throw badRequest(`time_zone: ${TIME_ZONE_MESSAGE(mapping.time_zone ?? '')}`);
  const values = table.rows.map((row) => row.cells[index] ?? '').filter((value) => value.trim() !== '');
  const detection = detectTimestampFormat(values, { preferDayFirst: mapping.prefer_day_first });
  const parse = createTimestampParser(detection, { timeZone: zone });
  return (text) => (detection.format === 'unknown' || detection.format === 'spreadsheet-serial' ? null : parse(text.trim()));
}

/** Reads the report against the unit operation's samples: the preview and the save it implies. */
export function planReportImport(table: ReportTable, mapping: SampleReportMapping, stored: readonly SampleRow[]): ImportPlan {
  const { headers } = table;
  const sampleIdAt = columnIndex(headers, mapping.sample_id_column, 'Sample ID');
  // A scan's wavelength axis is no sample id: its rows are one spectrum, which the import refuses with why.
  const spectrum = sampleIdAt === 0 && !mapping.key_value ? spectrumRefusal(headers, table.rows.map((row) => row.cells)) : null;
  if (spectrum) throw badRequest(spectrum);
  const drawnAt = mapping.drawn_at_column ? columnIndex(headers, mapping.drawn_at_column, 'Drawn time') : -1;
  const measuredAt = mapping.measured_at_column ? columnIndex(headers, mapping.measured_at_column, 'Measured time') : -1;
  const limitAt = mapping.limit_column ? columnIndex(headers, mapping.limit_column, 'Limit') : -1;
  const parseDrawn = drawnAt >= 0 ? timeParser(table, drawnAt, mapping) : null;
  const parseMeasured = measuredAt >= 0 ? timeParser(table, measuredAt, mapping) : null;

  // The exclusion rule: a keep list on one column, or words on one column (by default the sample id
  // and any sample-type column, where analyzers name calibrators and controls).
  const exclude: NonNullable<SampleReportMapping['exclude']> = mapping.exclude ?? { column: null };
  const keep = exclude.keep?.map((value) => value.toLowerCase()) ?? null;
  const words = exclude.patterns ?? [...DEFAULT_EXCLUDED_WORDS];
  const ruleColumns = exclude.column
    ? [columnIndex(headers, exclude.column, 'Exclusion')]
    : [sampleIdAt, ...headers.flatMap((header, index) => (/^(sample\s*)?type$/i.test(header.trim()) && index !== sampleIdAt ? [index] : []))];

  const layout = mapping.layout;
  const wide = layout.kind === 'wide'
    ? layout.analytes.map((entry) => {
      const problem = ucumUnitProblem(entry.unit);
      if (problem) throw badRequest(`Unit of ${entry.analyte ?? entry.column}: ${problem}`);
      return { index: columnIndex(headers, entry.column, 'Analyte'), column: entry.column, analyte: entry.analyte ?? analyteOfHeader(entry.column), unit: entry.unit };
    })
    : [];
  const long = layout.kind === 'long'
    ? {
      analyte: columnIndex(headers, layout.analyte_column, 'Analyte'),
      value: columnIndex(headers, layout.value_column, 'Value'),
      unit: layout.unit_column ? columnIndex(headers, layout.unit_column, 'Unit') : -1,
      chosen: layout.analytes ? new Map(layout.analytes.map((entry) => [entry.source.toLowerCase(), entry])) : null,
    }
    : null;
  for (const entry of layout.kind === 'long' ? layout.analytes ?? [] : []) {
    const problem = entry.unit ? ucumUnitProblem(entry.unit) : null;
    if (problem) throw badRequest(`Unit of ${entry.analyte ?? entry.source}: ${problem}`);
  }

  const unreadable: SampleImportRowProblem[] = [];
  const excluded: SampleImportRowProblem[] = [];
  let rowsExcluded = 0;
  const analytes = new Map<string, { source: string; analyte: string; unit: string; results: number }>();
  const samples = new Map<string, ReportSample>();
  const problem = (row: ReportRow, sampleId: string | null, reason: string, column?: number) => {
    unreadable.push({ line: (column !== undefined ? row.cellLines?.[column] : undefined) ?? row.line, sample_id: sampleId, reason });
  };
  const leaveOut = (row: ReportRow, sampleId: string | null, reason: string) => {
    rowsExcluded += 1;
    if (excluded.length < SAMPLE_REPORT_LISTED_ROWS) excluded.push({ line: row.line, sample_id: sampleId, reason });
  };
  const countAnalyte = (source: string, analyte: string, unit: string, readable: boolean) => {
    const key = `${source.toLowerCase()}\u0000${unit}`;
    const entry = analytes.get(key) ?? { source, analyte, unit, results: 0 };
    if (readable) entry.results += 1;
    analytes.set(key, entry);
  };

  for (const row of table.rows) {
    const cell = (index: number) => row.cells[index] ?? '';
    const sampleId = cell(sampleIdAt).trim();
    const rule = ruleColumns.map((index) => ({ index, value: cell(index).trim() }));
    if (keep) {
      const { index, value } = rule[0]!;
      if (!keep.includes(value.toLowerCase())) {
        leaveOut(row, sampleId || null, `${headers[index]} is '${value}', not one of the kept values.`);
        continue;
      }
    } else {
      const hit = rule.find(({ value }) => value !== '' && matchesExcludedWord(value, words));
      if (hit) {
        leaveOut(row, sampleId || null, `${headers[hit.index]} '${hit.value}' names a calibrator, control or blank.`);
        continue;
      }
    }
    if (sampleId === '') {
      problem(row, null, 'The row has no sample ID.');
      continue;
    }
    let drawn: string | null = null;
    if (parseDrawn && cell(drawnAt).trim() !== '') {
      const ms = parseDrawn(cell(drawnAt));
      if (ms === null) {
        problem(row, sampleId, `Drawn time '${cell(drawnAt).trim().slice(0, 40)}' is not a time.`, drawnAt);
        continue;
      }
      drawn = new Date(ms).toISOString();
    }
    let measured: string | null = null;
    if (parseMeasured && cell(measuredAt).trim() !== '') {
      const ms = parseMeasured(cell(measuredAt));
      if (ms === null) {
        problem(row, sampleId, `Measured time '${cell(measuredAt).trim().slice(0, 40)}' is not a time.`, measuredAt);
        continue;
      }
      measured = new Date(ms).toISOString();
    }
    const limit = limitAt >= 0 ? cell(limitAt) : null;
    const found: ReadResult[] = [];
    if (long) {
      const source = cell(long.analyte).trim();
      if (source === '') {
        problem(row, sampleId, 'The row names no analyte.');
        continue;
      }
      const chosen = long.chosen ? long.chosen.get(source.toLowerCase()) : undefined;
      if (long.chosen && !chosen) {
        leaveOut(row, sampleId, `Analyte '${source}' is not among the chosen ones.`);
        continue;
      }
      const analyte = chosen?.analyte ?? source;
      const unitText = long.unit >= 0 ? cell(long.unit).trim() : '';
      const unit = chosen?.unit ?? reportUnit(unitText);
      countAnalyte(source, analyte, unit ?? unitText, false);
      if (!unit) {
        problem(row, sampleId, unitText
          ? `The unit '${unitText}' of ${source} is not a UCUM code: choose the unit it means.`
          : `${source} has no unit: choose one.`);
        continue;
      }
      const read = readReportCell(cell(long.value), limit);
      if (read.kind === 'error') problem(row, sampleId, `${headers[long.value]}: ${read.message}`);
      if (read.kind !== 'value') continue;
      countAnalyte(source, analyte, unit, true);
      found.push({ analyte, value: read.value, flag: read.flag, unit, measured_at: measured, line: row.line });
    } else {
      for (const column of wide) {
        const read = readReportCell(cell(column.index), limit);
        countAnalyte(column.column, column.analyte, column.unit, read.kind === 'value');
        if (read.kind === 'error') problem(row, sampleId, `${headers[column.index]}: ${read.message}`, column.index);
        if (read.kind !== 'value') continue;
        found.push({ analyte: column.analyte, value: read.value, flag: read.flag, unit: column.unit, measured_at: measured, line: row.line });
      }
    }
    const key = sampleIdKey(sampleId);
    const sample = samples.get(key) ?? { sampleId, drawnAt: null, results: new Map<string, ReadResult>(), rows: 0, superseded: 0 };
    sample.rows += 1;
    sample.drawnAt ??= drawn;
    for (const result of found) {
      const analyteKey = result.analyte.toLowerCase();
      const earlier = sample.results.get(analyteKey);
      if (earlier) {
        sample.superseded += 1;
        // A result measured again (a rerun after dilution) replaces the earlier one; without times, the later row does.
        if (earlier.measured_at && result.measured_at && Date.parse(result.measured_at) < Date.parse(earlier.measured_at)) continue;
      }
      sample.results.set(analyteKey, result);
    }
    samples.set(key, sample);
  }

  const storedByKey = new Map<string, SampleRow>();
  for (const row of stored) {
    const key = sampleIdKey(row.sample_id);
    // Two tubes told apart only by case: the exact spelling wins, checked below.
    if (!storedByKey.has(key)) storedByKey.set(key, row);
  }
  for (const row of stored) if (samples.get(sampleIdKey(row.sample_id))?.sampleId === row.sample_id) storedByKey.set(sampleIdKey(row.sample_id), row);

  const preview: ImportPlan['preview'] = {
    rows_read: table.rows.length,
    samples_matched: [], samples_to_create: [], unmatched_sample_ids: [],
    rows_excluded: rowsExcluded, excluded,
    results_added: 0, results_replaced: 0, results_unchanged: 0, results_superseded: 0, flags_kept: 0,
    analytes: [...analytes.values()],
    rows_unreadable: unreadable.length, unreadable: unreadable.slice(0, SAMPLE_REPORT_LISTED_ROWS),
  };
  const save: SampleGridSave = { samples: [], delete_ids: [] };
  const method = mapping.method;

  for (const [key, sample] of samples) {
    const target = storedByKey.get(key);
    const results = [...sample.results.values()];
    if (results.length === 0 && !target && !sample.drawnAt) {
      preview.unmatched_sample_ids.push({ sample_id: sample.sampleId, rows: sample.rows });
      continue;
    }
    if (target) {
      const current = toSample(target);
      const merged = current.results.map((result) => ({ ...result }));
      const planned: PlannedResult[] = [];
      for (const result of results) {
        const at = merged.findIndex((entry) => entry.analyte.toLowerCase() === result.analyte.toLowerCase());
        const next = { analyte: at >= 0 ? merged[at]!.analyte : result.analyte, value: result.value, flag: result.flag, unit: result.unit, method, measured_at: result.measured_at };
        let change: PlannedResult['change'] = 'add';
        if (at >= 0) {
          const before = merged[at]!;
          const same = before.value === next.value && before.flag === next.flag && before.unit === next.unit && before.method === next.method
            && sameTime(before.measured_at, next.measured_at);
          change = same ? 'unchanged' : 'replace';
          merged[at] = next;
        } else {
          merged.push(next);
        }
        planned.push({ analyte: next.analyte, value: next.value, flag: next.flag, unit: next.unit, measured_at: next.measured_at, change });
      }
      tally(preview, planned);
      preview.results_superseded += sample.superseded;
      preview.samples_matched.push({ id: Number(target.id), sample_id: current.sample_id, results: planned });
      if (planned.some((result) => result.change !== 'unchanged')) {
        save.samples.push({ id: Number(target.id), sample_id: current.sample_id, drawn_at: current.drawn_at, notes: current.notes, results: merged });
      }
      continue;
    }
    if (!sample.drawnAt) {
      preview.unmatched_sample_ids.push({ sample_id: sample.sampleId, rows: sample.rows });
      continue;
    }
    const planned: PlannedResult[] = results.map((result) => ({
      analyte: result.analyte, value: result.value, flag: result.flag, unit: result.unit, measured_at: result.measured_at, change: 'add',
    }));
    tally(preview, planned);
    preview.results_superseded += sample.superseded;
    preview.samples_to_create.push({ sample_id: sample.sampleId, drawn_at: sample.drawnAt, results: planned });
    save.samples.push({
      sample_id: sample.sampleId, drawn_at: sample.drawnAt, notes: null,
      results: results.map((result) => ({ analyte: result.analyte, value: result.value, flag: result.flag, unit: result.unit, method, measured_at: result.measured_at })),
    });
  }
  return { preview, save };
}

function tally(preview: ImportPlan['preview'], planned: readonly PlannedResult[]): void {
  for (const result of planned) {
    if (result.change === 'add') preview.results_added += 1;
    else if (result.change === 'replace') preview.results_replaced += 1;
    else preview.results_unchanged += 1;
    if (result.flag && result.change !== 'unchanged') preview.flags_kept += 1;
  }
}

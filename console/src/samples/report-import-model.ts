/**
 * What the report import dialog proposes for a detected report and what it sends. The proposal is the
 * shared one (samples-import-suggestion.ts: the sample ID and measured columns, each numeric column as
 * an analyte with the unit its header states, results of known units chosen), so what the dialog shows
 * first is what the corpus tests import. A key/value report (one sample as `key : value` lines) is read
 * here in the browser and sent with `key_value`, a table by the api's preview.
 */
import { decodeCsvBytes, type CsvEncoding } from '@bioprocess/shared/csv/index';
import type { SampleReportMappingInput } from '@bioprocess/shared/samples-import';
import { suggestReportImport } from '@bioprocess/shared/samples-import-suggestion';
import { keyValueTable, readKeyValueReport, type KeyValueReport } from '@bioprocess/shared/samples-key-value';
import { headerUnit } from '@bioprocess/shared/instruments/header-unit';
import type { ReportLayout } from './report-import-client.ts';

/** What the dialog reads of a report: the api's preview of a table, or the pairs of a key/value report. */
export type ReportView = Pick<ReportLayout, 'encoding' | 'delimiter' | 'header_line' | 'raw_headers' | 'headers' | 'rows' | 'rows_parsed' | 'partial' | 'vendor' | 'time_column' | 'time'> & {
  /** The key/value report's separator (' : ', ';'), or null for a table. */
  key_value: { separator: string; settingColumns: string[] } | null;
};

export interface WideColumnChoice {
  column: string;
  include: boolean;
  analyte: string;
  unit: string;
}

export interface LongUnitChoice {
  source: string;
  analyte: string;
  unit: string;
}

export interface ReportImportState {
  headerless: boolean;
  keyValue: boolean;
  /** Why this report cannot be imported (a scan over wavelength), or null. */
  refusal: string | null;
  sampleIdColumn: string;
  drawnAtColumn: string;
  measuredAtColumn: string;
  limitColumn: string;
  kind: 'wide' | 'long';
  wide: WideColumnChoice[];
  analyteColumn: string;
  valueColumn: string;
  unitColumn: string;
  /** Units and names of the long report's analytes, once a dry run listed them. */
  longAnalytes: LongUnitChoice[];
  exclusion: 'words' | 'keep';
  exclusionColumn: string;
  keepValues: string;
  method: string;
}

/** A table as the api's preview read it. */
export function tableView(layout: ReportLayout): ReportView {
  return { ...layout, key_value: null };
}

/** A key/value report as a one-row table: its keys are the columns. */
export function keyValueView(report: KeyValueReport, encoding: CsvEncoding): ReportView {
  const table = keyValueTable(report);
  return {
    encoding, delimiter: ',', header_line: table.lines[0] ?? 1, raw_headers: table.headers, headers: table.headers, rows: [table.values],
    rows_parsed: 1, partial: false, vendor: null, time_column: null, time: null,
    key_value: { separator: report.separator, settingColumns: table.settingKeys },
  };
}

/** The report's bytes as a key/value report, or null when they are a table (or anything else) for the api's preview. */
export function readKeyValueView(bytes: Uint8Array): ReportView | null {
  const { text, encoding } = decodeCsvBytes(bytes);
  const report = readKeyValueReport(text);
  return report ? keyValueView(report, encoding) : null;
}

/** The column names the dialog offers: the header's, or Column 1, Column 2, ... for a report without one. */
export function reportColumns(layout: ReportView, headerless: boolean): string[] {
  if (!headerless) return layout.headers;
  const width = Math.max(layout.raw_headers.length, ...layout.rows.map((row) => row.length));
  return Array.from({ length: width }, (_, index) => `Column ${index + 1}`);
}

/** The first rows as the dialog shows them (a headerless report's first line is data). */
export function reportRows(layout: ReportView, headerless: boolean): string[][] {
  return headerless ? [layout.raw_headers, ...layout.rows] : layout.rows;
}

/** The analyte a wide column names: its header without the unit. */
export function analyteOfColumn(column: string): string {
  return headerUnit(column).literal === null ? column.trim() : column.trim().replace(/\s*[[(][^\][()]*[\])]\s*$/, '').trim() || column.trim();
}

export function initialState(layout: ReportView, headerless: boolean): ReportImportState {
  const columns = reportColumns(layout, headerless);
  const suggestion = suggestReportImport({
    headers: columns, rows: reportRows(layout, headerless),
    // A detected time column is proposed as when results were measured, unless it says it holds drawn times.
    timeColumn: !headerless && layout.time_column && layout.time?.mode === 'absolute' ? layout.time_column : null,
    keyValue: layout.key_value !== null, settingColumns: layout.key_value?.settingColumns,
  });
  // Never proposed: a drawn-time column creates every sample the grid lacks, which the person chooses.
  const drawnAtColumn = '';
  const wideColumns = headerless ? [] : suggestion.wide;
  const wide = wideColumns.map(({ column, include, analyte, unit }) => ({ column, include, analyte, unit }));
  const methods = [...new Set(wideColumns.map((entry) => entry.method).filter((method): method is string => method !== null))];
  return {
    headerless, keyValue: layout.key_value !== null, refusal: suggestion.refusal,
    sampleIdColumn: suggestion.sampleIdColumn, drawnAtColumn, measuredAtColumn: headerless ? '' : suggestion.measuredAtColumn, limitColumn: '',
    kind: headerless ? 'long' : 'wide', wide,
    analyteColumn: '', valueColumn: '', unitColumn: '', longAnalytes: [],
    exclusion: 'words', exclusionColumn: '', keepValues: '', method: methods.length === 1 ? methods[0]! : '',
  };
}

/** Why the mapping cannot be sent yet, or null. */
export function mappingProblem(state: ReportImportState): string | null {
  if (state.refusal) return state.refusal;
  if (!state.sampleIdColumn) return 'Choose the sample ID column.';
  if (state.kind === 'wide') {
    const chosen = state.wide.filter((entry) => entry.include);
    if (chosen.length === 0) return 'Choose at least one analyte column.';
    const unitless = chosen.find((entry) => !entry.unit.trim());
    if (unitless) return `Give the unit of ${unitless.column} (a UCUM code such as g/L, mmol/L or 10*6/mL).`;
  } else if (!state.analyteColumn || !state.valueColumn) {
    return 'Choose the analyte and value columns.';
  }
  if (state.exclusion === 'keep' && (!state.exclusionColumn || !state.keepValues.trim())) return 'Choose the sample-type column and the values to keep.';
  return null;
}

/** The mapping the api reads, with the encoding, delimiter and header line the preview detected, so both read the same table. */
export function buildMapping(state: ReportImportState, layout: ReportView, timeZone: string): SampleReportMappingInput {
  const optional = (value: string) => (value ? value : null);
  const tableLayout: SampleReportMappingInput['layout'] = state.kind === 'wide'
    ? {
      kind: 'wide',
      analytes: state.wide.filter((entry) => entry.include).map((entry) => ({ column: entry.column, analyte: entry.analyte.trim() || undefined, unit: entry.unit.trim() })),
    }
    : {
      kind: 'long', analyte_column: state.analyteColumn, value_column: state.valueColumn, unit_column: optional(state.unitColumn),
      ...(state.longAnalytes.length > 0
        ? { analytes: state.longAnalytes.map((entry) => ({ source: entry.source, analyte: entry.analyte.trim() || undefined, unit: entry.unit.trim() || undefined })) }
        : {}),
    };
  return {
    encoding: layout.encoding,
    ...(state.keyValue ? { key_value: true } : { delimiter: layout.delimiter, header_line: state.headerless ? 0 : layout.header_line }),
    sample_id_column: state.sampleIdColumn,
    drawn_at_column: optional(state.drawnAtColumn),
    measured_at_column: optional(state.measuredAtColumn),
    limit_column: optional(state.limitColumn),
    time_zone: timeZone,
    method: optional(state.method.trim()),
    layout: tableLayout,
    exclude: state.exclusion === 'keep'
      ? { column: state.exclusionColumn, keep: state.keepValues.split(',').map((value) => value.trim()).filter(Boolean) }
      : undefined,
  };
}

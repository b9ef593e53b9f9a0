/**
 * What the report import dialog proposes for a detected report and what it sends: the sample id and
 * time columns guessed from their names, every numeric column as a wide analyte with the unit its
 * header states (`CDW (g/L)`, `Glucose [g/L]`), and the mapping the api reads.
 */
import { headerUnit } from '@bioprocess/shared/instruments/header-unit';
import type { SampleReportMappingInput } from '@bioprocess/shared/samples-import';
import type { ReportLayout } from './report-import-client.ts';
import { parseHeaderCell } from './paste-parser.ts';

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

/** The column names the dialog offers: the header's, or Column 1, Column 2, ... for a report without one. */
export function reportColumns(layout: ReportLayout, headerless: boolean): string[] {
  if (!headerless) return layout.headers;
  const width = Math.max(layout.raw_headers.length, ...layout.rows.map((row) => row.length));
  return Array.from({ length: width }, (_, index) => `Column ${index + 1}`);
}

/** The first rows as the dialog shows them (a headerless report's first line is data). */
export function reportRows(layout: ReportLayout, headerless: boolean): string[][] {
  return headerless ? [layout.raw_headers, ...layout.rows] : layout.rows;
}

const SAMPLE_ID_NAMES = /^(sample\s*(id|name|identifier|identifer)?|tube|tx|id|name)$/i;


/** The analyte a wide column names: its header without the unit. */
export function analyteOfColumn(column: string): string {
  return headerUnit(column).literal === null ? column.trim() : column.trim().replace(/\s*[[(][^\][()]*[\])]\s*$/, '').trim() || column.trim();
}

/** A wide column's analyte, unit and method as its header states them; the grid's own `Glucose [g/L] (Cedex Bio)` first. */
function wideColumnOf(column: string): { analyte: string; unit: string; method: string | null } {
  const spec = parseHeaderCell(column);
  if (spec?.kind === 'result') return { analyte: spec.analyte, unit: spec.unit, method: spec.method };
  return { analyte: analyteOfColumn(column), unit: headerUnit(column).unit, method: null };
}

export function initialState(layout: ReportLayout, headerless: boolean): ReportImportState {
  const columns = reportColumns(layout, headerless);
  const sampleIdColumn = columns.find((column) => SAMPLE_ID_NAMES.test(column.trim())) ?? columns.find((column) => /sample|id/i.test(column)) ?? columns[0] ?? '';
  // Never proposed: a drawn-time column creates every sample the grid lacks, which the person chooses.
  const drawnAtColumn = '';
  // The detected time column is proposed as when results were measured, unless it says it holds drawn times.
  const measuredAtColumn = !headerless && layout.time_column && layout.time?.mode === 'absolute' && !/draw/i.test(layout.time_column) ? layout.time_column : '';
  const taken = new Set([sampleIdColumn, drawnAtColumn, measuredAtColumn]);
  // Numeric columns, and those whose header names a unit (a column of flagged results may hold few numbers).
  const wideColumns = headerless ? [] : layout.columns
    .filter((entry) => !taken.has(entry.column) && (entry.numeric_share > 0 || parseHeaderCell(entry.column)?.kind === 'result'))
    .map((entry) => ({ column: entry.column, ...wideColumnOf(entry.column) }));
  const wide = wideColumns.map(({ column, analyte, unit }) => ({ column, include: false, analyte, unit }));
  const methods = [...new Set(wideColumns.map((entry) => entry.method).filter((method): method is string => method !== null))];
  return {
    headerless, sampleIdColumn, drawnAtColumn, measuredAtColumn, limitColumn: '',
    kind: headerless ? 'long' : 'wide', wide,
    analyteColumn: '', valueColumn: '', unitColumn: '', longAnalytes: [],
    exclusion: 'words', exclusionColumn: '', keepValues: '', method: methods.length === 1 ? methods[0]! : '',
  };
}

/** Why the mapping cannot be sent yet, or null. */
export function mappingProblem(state: ReportImportState): string | null {
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
export function buildMapping(state: ReportImportState, layout: ReportLayout, timeZone: string): SampleReportMappingInput {
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
    encoding: layout.encoding, delimiter: layout.delimiter,
    header_line: state.headerless ? 0 : layout.header_line,
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

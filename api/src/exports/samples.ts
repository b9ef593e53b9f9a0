/**
 * Samples in exports: the long file (one row per result), the wide file (one row per sample, a column
 * per analyte and unit: the grid's own layout, so a wide file pasted back into the grid gives the same
 * results) and their two XLSX sheets. A unit operation's samples are few (a handful a day), so an
 * export reads them whole from PostgreSQL before writing.
 *
 * Flags are written so that they read back: the long file keeps `flag` and `limit` apart from `value`,
 * the wide file writes a flagged result as the grid does (`< 0.5`). Times are ISO 8601 UTC text in
 * both, which the grid reads in any time zone.
 */
import type ExcelJS from 'exceljs';
import type { Pool } from '@bioprocess/shared/server/postgres';
import { csvRow, type CsvValue } from '@bioprocess/shared/csv/write';
import {
  formatSampleResult, resultColumnLabel, SAMPLE_GRID_COLUMNS, SAMPLE_LONG_COLUMNS, type SampleExportFormat,
} from '@bioprocess/shared/samples';
import { listUnitOperationsWithRunName } from '@bioprocess/shared/server/unit-operations-repository';
import { listSamplesOfUnitOperations, toSample } from '../samples/repository.ts';
import type { Sample } from '@bioprocess/shared/samples';
import type { ExportScope } from './scope.ts';

export interface ExportSamples {
  samples: Sample[];
  /** Each unit operation's start (what `elapsed_s` counts from), null when it has none. */
  startMsOf: ReadonlyMap<number, number | null>;
  /** Whether the samples come from several unit operations (the wide layout then names each row's). */
  manyUnitOperations: boolean;
}

/** The wide layout's header cell for the unit operation of a row: not a grid column, so a paste ignores it. */
export const UNIT_OPERATION_COLUMN = 'Unit operation';

export async function loadExportSamples(
  pool: Pool,
  organizationId: number,
  unitOperations: ReadonlyArray<{ id: number; startMs: number | null }>,
  manyUnitOperations: boolean,
): Promise<ExportSamples> {
  const rows = await listSamplesOfUnitOperations(pool, organizationId, unitOperations.map((unitOperation) => unitOperation.id));
  return {
    samples: rows.map(toSample),
    startMsOf: new Map(unitOperations.map((unitOperation) => [unitOperation.id, unitOperation.startMs])),
    manyUnitOperations,
  };
}

/** The samples of a time-series export's unit operations (none for instruments alone). */
export async function loadScopeSamples(pool: Pool, organizationId: number, scope: ExportScope): Promise<ExportSamples> {
  const unitOperations = scope.sections.flatMap((section) => (section.unitOperation ? [{ id: section.unitOperation.id, startMs: section.originMs }] : []));
  return loadExportSamples(pool, organizationId, unitOperations, scope.resourceType === 'run');
}

/** The samples of one unit operation or of every unit operation of a run (ids already checked to be the organisation's). */
export async function loadSamplesOf(pool: Pool, organizationId: number, which: { ids: number[] } | { runId: number }): Promise<ExportSamples> {
  const rows = await listUnitOperationsWithRunName(pool, organizationId, which);
  return loadExportSamples(pool, organizationId, rows.map((row) => ({ id: Number(row.id), startMs: row.start_time?.getTime() ?? null })), 'runId' in which);
}

function elapsedSeconds(set: ExportSamples, sample: Sample): number | null {
  const startMs = set.startMsOf.get(sample.unit_operation_id) ?? null;
  return startMs === null ? null : (Date.parse(sample.drawn_at) - startMs) / 1000;
}

/** One row per result, in the columns of SAMPLE_LONG_COLUMNS; a sample without results is one row without an analyte. */
export function* sampleLongRows(set: ExportSamples): Generator<CsvValue[]> {
  for (const sample of set.samples) {
    const own = [sample.unit_operation_id, sample.sample_id, sample.drawn_at, elapsedSeconds(set, sample)];
    if (sample.results.length === 0) yield [...own, null, null, null, null, null, null, null, sample.notes];
    for (const result of sample.results) {
      yield [
        ...own, result.analyte, result.flag ? null : result.value, result.flag, result.flag ? result.value : null,
        result.unit, result.method, result.measured_at, sample.notes,
      ];
    }
  }
}

interface WideColumn {
  label: string;
  /** A flagged result as the grid writes it; a measured one as its number. */
  cells: Map<number, string | number>;
}

/**
 * The wide table: `Sample ID`, `Drawn`, one column per analyte and unit (the grid's columns: analytes
 * compared ignoring case), `Notes`. A column whose results share one method names it, `Glucose [g/L]
 * (Cedex Bio)`, so the grid keeps the method; when several share a column the file cannot say which
 * was which, and the long file keeps them.
 */
export function sampleWideTable(set: ExportSamples): { header: string[]; rows: Array<Array<string | number | null>> } {
  const columns = new Map<string, WideColumn & { methods: Set<string | null> }>();
  set.samples.forEach((sample, row) => {
    for (const result of sample.results) {
      const key = `${result.analyte.toLowerCase()}[${result.unit}]`;
      let column = columns.get(key);
      if (!column) {
        column = { label: resultColumnLabel(result.analyte, result.unit), cells: new Map(), methods: new Set() };
        columns.set(key, column);
      }
      column.methods.add(result.method);
      column.cells.set(row, result.flag ? formatSampleResult(result) : result.value);
    }
  });
  const resultColumns = [...columns.values()];
  const titles = resultColumns.map((column) => {
    const [method] = column.methods;
    return column.methods.size === 1 && method ? `${column.label} (${method})` : column.label;
  });
  const header = [
    ...(set.manyUnitOperations ? [UNIT_OPERATION_COLUMN] : []), SAMPLE_GRID_COLUMNS.sampleId, SAMPLE_GRID_COLUMNS.drawnAt, ...titles, SAMPLE_GRID_COLUMNS.notes,
  ];
  const rows = set.samples.map((sample, row) => [
    ...(set.manyUnitOperations ? [sample.unit_operation_id] : []),
    sample.sample_id,
    sample.drawn_at,
    ...resultColumns.map((column) => column.cells.get(row) ?? null),
    sample.notes,
  ]);
  return { header, rows };
}

/** A sample file as CSV text chunks (small: one chunk per sample). */
export async function* sampleCsv(set: ExportSamples, format: SampleExportFormat, tally: { rows: number }): AsyncGenerator<string> {
  if (format === 'csv-long') {
    yield csvRow(SAMPLE_LONG_COLUMNS);
    for (const row of sampleLongRows(set)) {
      tally.rows += 1;
      yield csvRow(row);
    }
    return;
  }
  const table = sampleWideTable(set);
  yield csvRow(table.header);
  for (const row of table.rows) {
    tally.rows += 1;
    yield csvRow(row);
  }
}

/** Sheet names of the samples in a workbook (a unit operation's sheet starts with its id, so none can clash). */
export const SAMPLE_SHEETS = { wide: 'Samples', long: 'Sample results' } as const;

/** The samples as two sheets of a streaming workbook: the wide one to paste into the grid, the long one with every field. */
export function addSampleSheets(workbook: ExcelJS.stream.xlsx.WorkbookWriter, set: ExportSamples): number {
  if (set.samples.length === 0) return 0;
  const wide = workbook.addWorksheet(SAMPLE_SHEETS.wide);
  const table = sampleWideTable(set);
  wide.addRow(table.header).commit();
  for (const row of table.rows) wide.addRow(row).commit();
  wide.commit();
  const long = workbook.addWorksheet(SAMPLE_SHEETS.long);
  long.addRow([...SAMPLE_LONG_COLUMNS]).commit();
  let rows = 0;
  for (const row of sampleLongRows(set)) {
    long.addRow(row).commit();
    rows += 1;
  }
  long.commit();
  return table.rows.length + rows;
}

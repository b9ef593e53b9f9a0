/**
 * The samples grid as data: columns (sample id, drawn time, one per analyte and unit, notes), rows of
 * cell texts beside what is stored, edits and pastes, the checks of each cell, the one request that
 * saves the changes, and the api's bad cells put back on the grid. Pure, so the grid component only
 * draws it and the rules are tested without a browser.
 */
import {
  resultColumnLabel, SAMPLE_GRID_COLUMNS, type SampleCellError, type SampleFlag, type SampleGridSave, type SampleResultInput,
} from '@bioprocess/shared/samples';
import { CELL_MESSAGES, formatResultCell, formatTimeCell, parseResultCell, parseTimeCell } from './cell-values.ts';
import type { ColumnSpec, ParsedPaste } from './paste-parser.ts';

/** A stored sample as the console reads it (camelCased). */
export interface SampleView {
  id: number;
  unitOperationId: number;
  sampleId: string;
  drawnAt: string;
  notes: string | null;
  results: Array<{ analyte: string; value: number; flag: SampleFlag | null; unit: string; method: string | null; measuredAt: string | null }>;
}

export interface GridColumn {
  key: string;
  spec: ColumnSpec;
  label: string;
}

export interface GridRow {
  key: string;
  /** The stored sample this row shows; null for a new row. */
  stored: SampleView | null;
  cells: Readonly<Record<string, string>>;
}

export interface GridState {
  columns: GridColumn[];
  rows: GridRow[];
  /** Stored samples whose rows were removed. */
  deletedIds: number[];
}

export const SAMPLE_ID_KEY = 'sample-id';
export const DRAWN_AT_KEY = 'drawn-at';
export const NOTES_KEY = 'notes';

export function columnKey(spec: ColumnSpec): string {
  switch (spec.kind) {
    case 'sampleId': return SAMPLE_ID_KEY;
    case 'drawnAt': return DRAWN_AT_KEY;
    case 'notes': return NOTES_KEY;
    default: return `result:${spec.analyte.toLowerCase()}[${spec.unit}]`;
  }
}

function columnOf(spec: ColumnSpec): GridColumn {
  const label = spec.kind === 'sampleId' ? SAMPLE_GRID_COLUMNS.sampleId
    : spec.kind === 'drawnAt' ? SAMPLE_GRID_COLUMNS.drawnAt
      : spec.kind === 'notes' ? SAMPLE_GRID_COLUMNS.notes
        : resultColumnLabel(spec.analyte, spec.unit);
  return { key: columnKey(spec), spec, label };
}

let rowSerial = 0;
function newRowKey(): string {
  rowSerial += 1;
  return `new-${rowSerial}`;
}

/** The cells of a stored sample, written as the grid writes them. */
function storedCells(sample: SampleView): Record<string, string> {
  const cells: Record<string, string> = {
    [SAMPLE_ID_KEY]: sample.sampleId,
    [DRAWN_AT_KEY]: formatTimeCell(sample.drawnAt),
    [NOTES_KEY]: sample.notes ?? '',
  };
  for (const result of sample.results) {
    cells[columnKey({ kind: 'result', analyte: result.analyte, unit: result.unit, method: null })] = formatResultCell(result.value, result.flag);
  }
  return cells;
}

/** The grid of the stored samples: one analyte column per analyte and unit, in the order first met. */
export function gridFromSamples(samples: readonly SampleView[]): GridState {
  const resultColumns = new Map<string, GridColumn>();
  for (const sample of samples) {
    for (const result of sample.results) {
      const column = columnOf({ kind: 'result', analyte: result.analyte, unit: result.unit, method: null });
      if (!resultColumns.has(column.key)) resultColumns.set(column.key, column);
    }
  }
  return {
    columns: [columnOf({ kind: 'sampleId' }), columnOf({ kind: 'drawnAt' }), ...resultColumns.values(), columnOf({ kind: 'notes' })],
    rows: samples.map((sample) => ({ key: `sample-${sample.id}`, stored: sample, cells: storedCells(sample) })),
    deletedIds: [],
  };
}

function cellText(row: GridRow, key: string): string {
  return row.cells[key] ?? '';
}

function isBlankRow(row: GridRow): boolean {
  return Object.values(row.cells).every((text) => text.trim() === '');
}

/** Whether two texts of a result cell read as the same result ('3.90' and '3.9', '<0.5' and '< 0.5'). */
function sameResult(a: string, b: string): boolean {
  const left = parseResultCell(a);
  const right = parseResultCell(b);
  return left.kind === 'value' && right.kind === 'value' && left.value === right.value && left.flag === right.flag;
}

/**
 * Whether a cell as typed says what is stored: the same text, or the same time or result written
 * another way (an exported file writes drawn times in ISO 8601, the grid in the browser's zone).
 */
function sameAsStored(key: string, stored: string, typed: string): boolean {
  if (stored.trim() === typed.trim()) return true;
  if (key === DRAWN_AT_KEY) {
    const left = parseTimeCell(stored);
    const right = parseTimeCell(typed);
    return left !== null && right !== null && left.getTime() === right.getTime();
  }
  return key.startsWith('result:') && sameResult(stored, typed);
}

/** Whether a row differs from what is stored (a new row: whether anything is typed in it). */
export function isRowChanged(row: GridRow): boolean {
  if (!row.stored) return !isBlankRow(row);
  const stored = storedCells(row.stored);
  const keys = new Set([...Object.keys(stored), ...Object.keys(row.cells)]);
  return [...keys].some((key) => !sameAsStored(key, stored[key] ?? '', cellText(row, key)));
}

export function isGridChanged(state: GridState): boolean {
  return state.deletedIds.length > 0 || state.rows.some(isRowChanged);
}

export function emptyRow(): GridRow {
  return { key: newRowKey(), stored: null, cells: {} };
}

export function setCell(state: GridState, rowIndex: number, key: string, text: string): GridState {
  const rows = [...state.rows];
  while (rows.length <= rowIndex) rows.push(emptyRow());
  rows[rowIndex] = { ...rows[rowIndex]!, cells: { ...rows[rowIndex]!.cells, [key]: text } };
  return { ...state, rows };
}

export function removeRow(state: GridState, rowIndex: number): GridState {
  const row = state.rows[rowIndex];
  if (!row) return state;
  return {
    ...state,
    rows: state.rows.filter((_, index) => index !== rowIndex),
    deletedIds: row.stored ? [...state.deletedIds, row.stored.id] : state.deletedIds,
  };
}

/** Adds an analyte column before Notes (or returns the state when it is there already). */
export function addColumn(state: GridState, spec: ColumnSpec): GridState {
  const column = columnOf(spec);
  if (state.columns.some((existing) => existing.key === column.key)) {
    return spec.kind === 'result' && spec.method
      ? { ...state, columns: state.columns.map((existing) => (existing.key === column.key ? column : existing)) }
      : state;
  }
  const notesIndex = state.columns.findIndex((existing) => existing.key === NOTES_KEY);
  const columns = [...state.columns];
  columns.splice(notesIndex < 0 ? columns.length : notesIndex, 0, column);
  return { ...state, columns };
}

/**
 * A paste. With a header row, each pasted row goes to the row with its sample id (or a new row) and
 * each cell to its named column, new analyte columns added; without one, the block fills the grid
 * from the active cell to the right and down, adding rows as needed.
 */
export function applyPaste(state: GridState, paste: ParsedPaste, anchor: { row: number; column: number }): GridState {
  let next = state;
  if (paste.header) {
    const header = paste.header;
    for (const spec of header) if (spec?.kind === 'result') next = addColumn(next, spec);
    const keys = header.map((spec) => (spec ? columnKey(spec) : null));
    const sampleIdAt = keys.indexOf(SAMPLE_ID_KEY);
    for (const cells of paste.rows) {
      const sampleId = sampleIdAt >= 0 ? (cells[sampleIdAt] ?? '').trim() : '';
      let rowIndex = sampleId ? next.rows.findIndex((row) => cellText(row, SAMPLE_ID_KEY).trim() === sampleId) : -1;
      if (rowIndex < 0) {
        // A new row takes the first blank row, so typing and pasting fill the same trailing row.
        rowIndex = next.rows.findIndex((row) => !row.stored && isBlankRow(row));
        if (rowIndex < 0) rowIndex = next.rows.length;
      }
      keys.forEach((key, index) => {
        if (key !== null) next = setCell(next, rowIndex, key, cells[index] ?? '');
      });
    }
    return next;
  }
  paste.rows.forEach((cells, offset) => {
    cells.forEach((text, columnOffset) => {
      const column = next.columns[anchor.column + columnOffset];
      if (column) next = setCell(next, anchor.row + offset, column.key, text);
    });
  });
  return next;
}

/** What is wrong with a cell as typed, or null. */
export function cellProblem(column: GridColumn, text: string, row: GridRow): string | null {
  if (!row.stored && isBlankRow(row)) return null;
  switch (column.spec.kind) {
    case 'sampleId': return text.trim() ? null : CELL_MESSAGES.sampleIdRequired;
    case 'drawnAt':
      if (!text.trim()) return CELL_MESSAGES.timeRequired;
      return parseTimeCell(text) ? null : CELL_MESSAGES.badTime;
    case 'notes': return null;
    default: {
      const result = parseResultCell(text);
      return result.kind === 'error' ? result.message : null;
    }
  }
}

/** Every problem of the grid: rows by key, then columns by key. */
export function gridProblems(state: GridState): Map<string, Map<string, string>> {
  const problems = new Map<string, Map<string, string>>();
  const seen = new Map<string, string>();
  for (const row of state.rows) {
    for (const column of state.columns) {
      const problem = cellProblem(column, cellText(row, column.key), row);
      if (problem) {
        if (!problems.has(row.key)) problems.set(row.key, new Map());
        problems.get(row.key)!.set(column.key, problem);
      }
    }
    const sampleId = cellText(row, SAMPLE_ID_KEY).trim();
    if (!sampleId) continue;
    if (seen.has(sampleId)) {
      if (!problems.has(row.key)) problems.set(row.key, new Map());
      problems.get(row.key)!.set(SAMPLE_ID_KEY, 'Sample ID appears more than once.');
    }
    seen.set(sampleId, row.key);
  }
  return problems;
}

function resultFor(row: GridRow, column: GridColumn & { spec: { kind: 'result' } }): SampleResultInput | null {
  const text = cellText(row, column.key);
  const parsed = parseResultCell(text);
  if (parsed.kind !== 'value') return null;
  const stored = row.stored?.results.find((result) => columnKey({ kind: 'result', analyte: result.analyte, unit: result.unit, method: null }) === column.key);
  // An unchanged cell keeps what only the stored result knows: its method and when it was measured.
  if (stored && sameResult(formatResultCell(stored.value, stored.flag), text)) {
    return { analyte: stored.analyte, value: stored.value, flag: stored.flag, unit: stored.unit, method: stored.method, measured_at: stored.measuredAt };
  }
  return {
    analyte: column.spec.analyte, value: parsed.value, flag: parsed.flag, unit: column.spec.unit,
    method: column.spec.method ?? stored?.method ?? null, measured_at: null,
  };
}

/** The save request for the changed rows and removed samples; `rowKeys[i]` is the grid row of `samples[i]`. */
export function buildSaveRequest(state: GridState): { body: SampleGridSave; rowKeys: string[] } {
  const changed = state.rows.filter(isRowChanged);
  const samples = changed.map((row) => {
    const drawn = parseTimeCell(cellText(row, DRAWN_AT_KEY));
    const results = state.columns
      .filter((column): column is GridColumn & { spec: { kind: 'result' } } => column.spec.kind === 'result')
      .map((column) => resultFor(row, column))
      .filter((result): result is SampleResultInput => result !== null);
    return {
      ...(row.stored ? { id: row.stored.id } : {}),
      sample_id: cellText(row, SAMPLE_ID_KEY).trim(),
      drawn_at: drawn ? drawn.toISOString() : cellText(row, DRAWN_AT_KEY),
      notes: cellText(row, NOTES_KEY).trim() || null,
      results,
    };
  });
  return { body: { samples, delete_ids: state.deletedIds }, rowKeys: changed.map((row) => row.key) };
}

/** The api's bad cells on the grid: row positions back to row keys, column headers back to column keys. */
export function serverProblems(state: GridState, rowKeys: readonly string[], cells: readonly SampleCellError[]): Map<string, Map<string, string>> {
  const problems = new Map<string, Map<string, string>>();
  for (const cell of cells) {
    const rowKey = rowKeys[cell.row - 1];
    if (!rowKey) continue;
    const column = state.columns.find((candidate) => candidate.label === cell.column) ?? state.columns[0]!;
    if (!problems.has(rowKey)) problems.set(rowKey, new Map());
    problems.get(rowKey)!.set(column.key, cell.message);
  }
  return problems;
}

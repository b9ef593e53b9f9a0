/**
 * Every bad cell of a grid save, by row and column, so the console can mark each cell and a script's
 * author reads them all in one answer. Rows count from 1 in the order of `samples`; a result's column
 * is its `Analyte [unit]` header, as the grid writes it.
 */
import type { z } from 'zod';
import { resultColumnLabel, SAMPLE_GRID_COLUMNS, type SampleCellError } from '@bioprocess/shared/samples';
import { ucumUnitProblem } from '@bioprocess/shared/instruments/ucum';

/** How many cells the one-sentence `error` spells out; `cells` always lists them all. */
const CELLS_IN_MESSAGE = 20;

export class SampleGridError extends Error {
  constructor(public readonly cells: SampleCellError[], message = describeCells(cells)) {
    super(message);
    this.name = 'SampleGridError';
  }
}

function describeCells(cells: SampleCellError[]): string {
  const named = cells.slice(0, CELLS_IN_MESSAGE).map((cell) => `row ${cell.row}, ${cell.column}: ${cell.message}`);
  const more = cells.length > CELLS_IN_MESSAGE ? `; and ${cells.length - CELLS_IN_MESSAGE} more` : '';
  return `The samples were not saved (${cells.length === 1 ? '1 bad cell' : `${cells.length} bad cells`}): ${named.join('; ')}${more}`;
}

function text(value: unknown): string {
  return typeof value === 'string' ? value.trim() : '';
}

/** The grid column of a result as the client sent it (the analyte and unit may themselves be what is wrong). */
function resultColumn(result: unknown, index: number): string {
  const fields = (result && typeof result === 'object' ? result : {}) as Record<string, unknown>;
  const analyte = text(fields.analyte);
  return analyte ? resultColumnLabel(analyte, text(fields.unit)) : `Result ${index + 1}`;
}

const SAMPLE_FIELD_COLUMNS: Record<string, string> = {
  sample_id: SAMPLE_GRID_COLUMNS.sampleId,
  id: SAMPLE_GRID_COLUMNS.sampleId,
  drawn_at: SAMPLE_GRID_COLUMNS.drawnAt,
  notes: SAMPLE_GRID_COLUMNS.notes,
};

/** The cell of an issue under `samples.<row>`, or null for an issue about the request as a whole. */
function cellOf(body: unknown, path: readonly PropertyKey[], message: string): SampleCellError | null {
  if (path[0] !== 'samples' || typeof path[1] !== 'number') return null;
  const samples = (body as { samples?: unknown[] }).samples ?? [];
  const row = path[1] + 1;
  const sample = (samples[path[1]] && typeof samples[path[1]] === 'object' ? samples[path[1]] : {}) as Record<string, unknown>;
  if (path[2] === 'results' && typeof path[3] === 'number') {
    const results = Array.isArray(sample.results) ? sample.results : [];
    const field = typeof path[4] === 'string' && path[4] !== 'value' ? `${path[4]}: ` : '';
    return { row, column: resultColumn(results[path[3]], path[3]), message: `${field}${message}` };
  }
  if (path[2] === 'results') return { row, column: 'Results', message };
  const column = typeof path[2] === 'string' ? SAMPLE_FIELD_COLUMNS[path[2]] : undefined;
  return { row, column: column ?? SAMPLE_GRID_COLUMNS.sampleId, message };
}

/** Throws the grid's 400 for a body that failed its schema: every cell, or the first issue of a malformed request. */
export function rejectInvalidGrid(body: unknown, error: z.ZodError): never {
  const cells: SampleCellError[] = [];
  for (const issue of error.issues) {
    const cell = cellOf(body, issue.path, issue.message);
    if (!cell) {
      const where = issue.path.map(String).join('.');
      throw new SampleGridError([], where ? `${where}: ${issue.message}` : issue.message);
    }
    cells.push(cell);
  }
  throw new SampleGridError(cells);
}

/** The cells whose unit is not a UCUM code, as grid errors. */
export function unitCells(samples: ReadonlyArray<{ results: ReadonlyArray<{ analyte: string; unit: string }> }>): SampleCellError[] {
  const cells: SampleCellError[] = [];
  samples.forEach((sample, row) => {
    for (const result of sample.results) {
      const problem = ucumUnitProblem(result.unit);
      if (problem) cells.push({ row: row + 1, column: resultColumnLabel(result.analyte, result.unit), message: problem });
    }
  });
  return cells;
}

import { describe, expect, it } from 'vitest';
import { buildMapping, initialState, mappingProblem, reportColumns } from './report-import-model.ts';
import type { ReportLayout } from './report-import-client.ts';

function layout(headers: string[], rows: string[][], timeColumn: string | null, numeric: Record<string, number>): ReportLayout {
  return {
    file_name: 'report.csv', encoding: 'utf-8', delimiter: ',', separator_hint: false, header_line: 2, preamble_lines: 1, table_end: null,
    section: null, vendor: null, orientation: 'rows', raw_headers: headers, headers, rows, rows_parsed: rows.length, time_column: timeColumn,
    time: timeColumn ? { mode: 'absolute', format: 'iso-space', order: null, confidence: 1, elapsed_unit: null, clock: false } : null,
    start: null, columns: headers.map((column) => ({ column, unit_text: null, numeric_share: numeric[column] ?? 0, suggestion: null })), notices: [], partial: false,
  };
}

describe('report import choices', () => {
  it('proposes the sample ID and measured columns and the analyte columns with the units their headers state', () => {
    const detected = layout(['Sample ID', 'Measured', 'CDW (g/L)', 'Glucose [g/L] (Cedex Bio)', 'Operator'], [['S1', '2024-01-01 08:00', '0.5', '< 0.5', 'AB']], 'Measured', { 'CDW (g/L)': 1, 'Glucose [g/L] (Cedex Bio)': 0 });
    const state = initialState(detected, false);
    expect(state).toMatchObject({ sampleIdColumn: 'Sample ID', drawnAtColumn: '', measuredAtColumn: 'Measured', kind: 'wide', method: 'Cedex Bio' });
    expect(state.wide).toEqual([
      { column: 'CDW (g/L)', include: false, analyte: 'CDW', unit: 'g/L' },
      { column: 'Glucose [g/L] (Cedex Bio)', include: false, analyte: 'Glucose', unit: 'g/L' },
    ]);
    expect(mappingProblem(state)).toBe('Choose at least one analyte column.');
    const chosen = { ...state, wide: state.wide.map((entry) => ({ ...entry, include: true })) };
    expect(mappingProblem(chosen)).toBeNull();
    expect(buildMapping(chosen, detected, 'Europe/Amsterdam')).toEqual({
      encoding: 'utf-8', delimiter: ',', header_line: 2, sample_id_column: 'Sample ID', drawn_at_column: null, measured_at_column: 'Measured',
      limit_column: null, time_zone: 'Europe/Amsterdam', method: 'Cedex Bio',
      layout: { kind: 'wide', analytes: [{ column: 'CDW (g/L)', analyte: 'CDW', unit: 'g/L' }, { column: 'Glucose [g/L] (Cedex Bio)', analyte: 'Glucose', unit: 'g/L' }] },
      exclude: undefined,
    });
  });

  it('names the columns of a report without a header row by position and reads it as long', () => {
    const detected = layout(['0', '2022-10-20 16:34:37', '#ARC-FILE#'], [['40', '2022-10-17 08:12:47', 'Plate1_1', 'ID396', 'SAM']], null, {});
    expect(reportColumns(detected, true)).toEqual(['Column 1', 'Column 2', 'Column 3', 'Column 4', 'Column 5']);
    const state = { ...initialState(detected, true), analyteColumn: 'Column 4', valueColumn: 'Column 5', exclusion: 'keep' as const, exclusionColumn: 'Column 5', keepValues: 'SAM, ' };
    expect(state.kind).toBe('long');
    expect(buildMapping(state, detected, 'UTC')).toMatchObject({ header_line: 0, exclude: { column: 'Column 5', keep: ['SAM'] }, layout: { kind: 'long', analyte_column: 'Column 4', value_column: 'Column 5', unit_column: null } });
  });
});

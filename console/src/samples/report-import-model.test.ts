import { describe, expect, it } from 'vitest';
import { buildMapping, initialState, mappingProblem, readKeyValueView, reportColumns, type ReportView } from './report-import-model.ts';

function layout(headers: string[], rows: string[][], timeColumn: string | null): ReportView {
  return {
    encoding: 'utf-8', delimiter: ',', header_line: 2, vendor: null, raw_headers: headers, headers, rows, rows_parsed: rows.length, time_column: timeColumn,
    time: timeColumn ? { mode: 'absolute', format: 'iso-space', order: null, confidence: 1, elapsed_unit: null, clock: false } : null,
    partial: false, key_value: null,
  };
}

describe('report import choices', () => {
  it('proposes the sample ID and measured columns and the analyte columns with the units their headers state', () => {
    const detected = layout(['Sample ID', 'Measured', 'CDW (g/L)', 'Glucose [g/L] (Cedex Bio)', 'Operator'], [['S1', '2024-01-01 08:00', '0.5', '< 0.5', 'AB']], 'Measured');
    const state = initialState(detected, false);
    expect(state).toMatchObject({ sampleIdColumn: 'Sample ID', drawnAtColumn: '', measuredAtColumn: 'Measured', kind: 'wide', method: 'Cedex Bio', keyValue: false, refusal: null });
    // The grid's own result column is chosen; a column the suggestion does not know as a result is offered.
    expect(state.wide).toEqual([
      { column: 'CDW (g/L)', include: false, analyte: 'CDW', unit: 'g/L' },
      { column: 'Glucose [g/L] (Cedex Bio)', include: true, analyte: 'Glucose', unit: 'g/L' },
    ]);
    expect(mappingProblem({ ...state, wide: state.wide.map((entry) => ({ ...entry, include: false })) })).toBe('Choose at least one analyte column.');
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
    const detected = layout(['0', '2022-10-20 16:34:37', '#ARC-FILE#'], [['40', '2022-10-17 08:12:47', 'Plate1_1', 'ID396', 'SAM']], null);
    expect(reportColumns(detected, true)).toEqual(['Column 1', 'Column 2', 'Column 3', 'Column 4', 'Column 5']);
    const state = { ...initialState(detected, true), analyteColumn: 'Column 4', valueColumn: 'Column 5', exclusion: 'keep' as const, exclusionColumn: 'Column 5', keepValues: 'SAM, ' };
    expect(state.kind).toBe('long');
    expect(buildMapping(state, detected, 'UTC')).toMatchObject({ header_line: 0, exclude: { column: 'Column 5', keep: ['SAM'] }, layout: { kind: 'long', analyte_column: 'Column 4', value_column: 'Column 5', unit_column: null } });
  });

  it('reads a key/value report in the browser and sends it with key_value, without a delimiter or header line', () => {
    const text = ['Counter 2.0', '', 'Sample ID : BR1-D3', 'Run date : 2024-02-03 10:00:00', 'Results:', 'Viability (%) : 95.5',
      'Total cells / ml (x 10^6) : 4.2', 'Average diameter (microns) : 14.1', 'Settings:', 'Minimum diameter (microns) : 6.0', 'Cell type : CHO'].join('\r\n');
    const view = readKeyValueView(new TextEncoder().encode(text))!;
    expect(view.key_value).toEqual({ separator: ' : ', settingColumns: ['Minimum diameter (microns)', 'Cell type'] });
    const state = initialState(view, false);
    expect(state).toMatchObject({ keyValue: true, sampleIdColumn: 'Sample ID', measuredAtColumn: 'Run date' });
    expect(state.wide.filter((entry) => entry.include).map((entry) => [entry.analyte, entry.unit]))
      .toEqual([['Viability', '%'], ['Total cells', '10*6/mL'], ['Average diameter', 'um']]);
    const mapping = buildMapping(state, view, 'UTC');
    expect(mapping).toMatchObject({ key_value: true, encoding: 'utf-8', sample_id_column: 'Sample ID', measured_at_column: 'Run date' });
    expect(mapping).not.toHaveProperty('delimiter');
    expect(mapping).not.toHaveProperty('header_line');
  });

  it('refuses a scan over wavelength with why, before anything is sent', () => {
    const state = initialState(layout(['wavelength(nm)', 'ABS', '%T'], [['325.0', '2.385', '0.41'], ['326.0', '2.450', '0.35'], ['327.0', '2.510', '0.31']], null), false);
    expect(state.refusal).toContain("This report is a scan over wavelength ('wavelength(nm)', from 325 nm)");
    expect(mappingProblem(state)).toBe(state.refusal);
  });
});

import { describe, expect, it } from 'vitest';
import { parseClipboardTable, parseHeaderCell, parsePaste } from './paste-parser.ts';
import { parseResultCell, parseTimeCell, formatTimeCell, parseNumber } from './cell-values.ts';
import { applyPaste, buildSaveRequest, gridFromSamples, gridProblems, isGridChanged, removeRow, serverProblems, setCell, type SampleView } from './grid-model.ts';

const DAY_FROM_EXCEL = [
  'Sample ID\tDrawn\tVCD [10*6/mL]\tViability [%]\tGlucose [g/L] (Cedex Bio)\tLactate [g/L]',
  'BR1-D1\t2024-03-02 08:00\t4.2\t97.5\t5,1\t< 0.5',
  'BR1-D2\t2024-03-03 08:15\t8.9\t96.1\t3.9\t1.2',
  '',
].join('\r\n');

const stored: SampleView = {
  id: 7, unitOperationId: 3, sampleId: 'BR1-D1', drawnAt: new Date(2024, 2, 2, 8, 0).toISOString(), notes: null,
  results: [{ analyte: 'Glucose', value: 5.4, flag: null, unit: 'g/L', method: 'YSI', measuredAt: '2024-03-02T09:00:00.000Z' }],
};

describe('the paste from a spreadsheet', () => {
  it('reads tab-separated rows, quoted cells and CRLF line ends, without the trailing empty line', () => {
    expect(parseClipboardTable('a\t"b\tc"\td\r\n"multi\nline"\t2\r\n')).toEqual([['a', 'b\tc', 'd'], ['multi\nline', '2']]);
    expect(parseClipboardTable('')).toEqual([]);
  });

  it('names columns from a header row: sample id, drawn time, notes, analyte [unit] (method)', () => {
    expect(parseHeaderCell('Sample ID')).toEqual({ kind: 'sampleId' });
    expect(parseHeaderCell('sample')).toEqual({ kind: 'sampleId' });
    expect(parseHeaderCell('Drawn at')).toEqual({ kind: 'drawnAt' });
    expect(parseHeaderCell('Notes')).toEqual({ kind: 'notes' });
    expect(parseHeaderCell('Glucose [g/L]')).toEqual({ kind: 'result', analyte: 'Glucose', unit: 'g/L', method: null });
    expect(parseHeaderCell(' VCD  [10*6/mL] (Vi-CELL BLU) ')).toEqual({ kind: 'result', analyte: 'VCD', unit: '10*6/mL', method: 'Vi-CELL BLU' });
    expect(parseHeaderCell('Glucose')).toBeNull();
    expect(parsePaste(DAY_FROM_EXCEL).header?.map((spec) => spec?.kind)).toEqual(['sampleId', 'drawnAt', 'result', 'result', 'result', 'result']);
    expect(parsePaste('BR1-D1\t2024-03-02 08:00\t4.2').header).toBeNull();
  });

  it('reads results as numbers or flagged limits and times in the console format', () => {
    expect(parseResultCell('12.5')).toEqual({ kind: 'value', value: 12.5, flag: null });
    expect(parseResultCell('5,1')).toEqual({ kind: 'value', value: 5.1, flag: null });
    expect(parseResultCell('< 0.5')).toEqual({ kind: 'value', value: 0.5, flag: 'below_limit' });
    expect(parseResultCell('>50')).toEqual({ kind: 'value', value: 50, flag: 'above_limit' });
    expect(parseResultCell('  ')).toEqual({ kind: 'empty' });
    expect(parseResultCell('<LOQ').kind).toBe('error');
    expect(parseResultCell('<').kind).toBe('error');
    expect(parseResultCell('n/a').kind).toBe('error');
    expect(parseNumber('1,234.5')).toBeNull();
    expect(parseTimeCell('2024-03-02 08:00')).toEqual(new Date(2024, 2, 2, 8, 0));
    expect(parseTimeCell('2024-03-02 08:00:30')).toEqual(new Date(2024, 2, 2, 8, 0, 30));
    expect(parseTimeCell('2024-03-02T08:00:00Z')).toEqual(new Date(Date.UTC(2024, 2, 2, 8)));
    expect(parseTimeCell('2024-3-2 8:00')).toBeNull();
    expect(parseTimeCell('tomorrow')).toBeNull();
    expect(formatTimeCell(new Date(2024, 2, 2, 8, 0))).toBe('2024-03-02 08:00');
  });

  it('puts a pasted day with a header on the rows of its sample ids, adding analyte columns', () => {
    const grid = applyPaste(gridFromSamples([stored]), parsePaste(DAY_FROM_EXCEL), { row: 0, column: 0 });
    expect(grid.columns.map((column) => column.label)).toEqual([
      'Sample ID', 'Drawn', 'Glucose [g/L]', 'VCD [10*6/mL]', 'Viability [%]', 'Lactate [g/L]', 'Notes',
    ]);
    expect(grid.rows.map((row) => row.cells['sample-id'])).toEqual(['BR1-D1', 'BR1-D2']);
    expect(gridProblems(grid).size).toBe(0);

    const { body, rowKeys } = buildSaveRequest(grid);
    expect(rowKeys).toEqual(grid.rows.map((row) => row.key));
    expect(body.delete_ids).toEqual([]);
    expect(body.samples[0]).toMatchObject({ id: 7, sample_id: 'BR1-D1', drawn_at: new Date(2024, 2, 2, 8, 0).toISOString() });
    expect(body.samples[0]!.results).toEqual([
      { analyte: 'Glucose', value: 5.1, flag: null, unit: 'g/L', method: 'Cedex Bio', measured_at: null },
      { analyte: 'VCD', value: 4.2, flag: null, unit: '10*6/mL', method: null, measured_at: null },
      { analyte: 'Viability', value: 97.5, flag: null, unit: '%', method: null, measured_at: null },
      { analyte: 'Lactate', value: 0.5, flag: 'below_limit', unit: 'g/L', method: null, measured_at: null },
    ]);
    expect(body.samples[1]).toMatchObject({ sample_id: 'BR1-D2', notes: null });
    expect(body.samples[1]).not.toHaveProperty('id');
  });

  it('fills the grid from the active cell when the block has no header, and checks every cell', () => {
    const grid = applyPaste(gridFromSamples([]), parsePaste('S1\t2024-03-02 08:00\nS2\tyesterday\n\t2024-03-04 08:00\n'), { row: 0, column: 0 });
    expect(grid.rows).toHaveLength(3);
    const problems = gridProblems(grid);
    expect(problems.get(grid.rows[1]!.key)?.get('drawn-at')).toMatch(/^Not a time/);
    expect(problems.get(grid.rows[2]!.key)?.get('sample-id')).toBe('Sample ID is required.');
    expect(problems.get(grid.rows[0]!.key)).toBeUndefined();
  });

  it('keeps an unchanged result\'s method and measured time, deletes removed rows and maps the api\'s bad cells back', () => {
    const grid = setCell(gridFromSamples([stored]), 0, 'notes', 'foam');
    expect(buildSaveRequest(grid).body.samples[0]!.results).toEqual([
      { analyte: 'Glucose', value: 5.4, flag: null, unit: 'g/L', method: 'YSI', measured_at: '2024-03-02T09:00:00.000Z' },
    ]);
    expect(buildSaveRequest(gridFromSamples([stored])).body.samples).toEqual([]);
    const removed = removeRow(gridFromSamples([stored]), 0);
    expect(buildSaveRequest(removed).body).toEqual({ samples: [], delete_ids: [7] });

    const problems = serverProblems(grid, [grid.rows[0]!.key], [{ row: 1, column: 'Glucose [g/L]', message: "'g/L' is not a UCUM unit code" }]);
    expect(problems.get(grid.rows[0]!.key)?.get('result:glucose[g/L]')).toBe("'g/L' is not a UCUM unit code");
  });

  it('reads a cell that says what is stored in another way as unchanged: an ISO drawn time, a flag without its space, 3.90 for 3.9', () => {
    const flagged: SampleView = { ...stored, results: [...stored.results, { analyte: 'Lactate', value: 0.5, flag: 'below_limit', unit: 'g/L', method: null, measuredAt: null }] };
    const grid = gridFromSamples([flagged]);
    const exported = `Sample ID\tDrawn\tGlucose [g/L] (YSI)\tLactate [g/L]\r\nBR1-D1\t${flagged.drawnAt}\t5.40\t<0.5`;
    const pasted = applyPaste(grid, parsePaste(exported), { row: 0, column: 0 });
    expect(isGridChanged(pasted)).toBe(false);
    // A value that differs is a change, and the stored method and measured time stay with an unchanged cell.
    const changed = setCell(pasted, 0, 'result:lactate[g/L]', '< 0.2');
    expect(isGridChanged(changed)).toBe(true);
    expect(buildSaveRequest(changed).body.samples[0]!.results).toEqual([
      { analyte: 'Glucose', value: 5.4, flag: null, unit: 'g/L', method: 'YSI', measured_at: '2024-03-02T09:00:00.000Z' },
      { analyte: 'Lactate', value: 0.2, flag: 'below_limit', unit: 'g/L', method: null, measured_at: null },
    ]);
  });
});

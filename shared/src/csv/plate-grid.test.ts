import { describe, expect, it } from 'vitest';
import { detectCsvLayout } from './detect.ts';
import { findFooterTime, plateColumnsOf, PlateGridCutter, plateGridTable, plateRowLabel, readPlateGrid } from './plate-grid.ts';
import { parseCsvRows } from './row-parser.ts';

const bytes = (text: string) => new TextEncoder().encode(text);

/** A MARS-like export: a preamble with the read's date and time, then a lettered 8 x 12 grid. */
function marsGrid(cell: (row: number, column: number) => string = (row, column) => `0.${row}${String(column).padStart(2, '0')}`): string {
  const rows = Array.from({ length: 8 }, (_, row) => [plateRowLabel(row), ...Array.from({ length: 12 }, (_, column) => cell(row, column + 1))].join(','));
  return ['Test name: plate,Date: 5/14/2021,Time: 3:29:50 PM', '', 'Raw Data (450 1)', '', `,${Array.from({ length: 12 }, (_, index) => index + 1).join(',')},`, ...rows, ''].join('\r\n');
}

describe('plate grids', () => {
  it('finds the column numbers of a grid header, and only of a standard plate', () => {
    expect(plateColumnsOf(['', '1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11', '12', ''])).toEqual({ first: 1, count: 12 });
    expect(plateColumnsOf(['', 'Temperature(¡C)', '1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11', '12', '', ''])).toEqual({ first: 2, count: 12 });
    // Eleven columns is no plate; a named cell after the numbers is another table.
    expect(plateColumnsOf(['', '1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11'])).toBeNull();
    expect(plateColumnsOf(['Cycle Nr.', '1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11', '12', '13'])).toBeNull();
    expect(plateColumnsOf(['1', '2', '3'])).toBeNull();
    expect(plateRowLabel(0)).toBe('A');
    expect(plateRowLabel(15)).toBe('P');
    expect(plateRowLabel(26)).toBe('AA');
  });

  it('reads a lettered grid as one reading per well, leaving empty wells out and keeping flags as written', () => {
    const text = marsGrid((row, column) => (row === 0 && column === 2 ? '' : row === 7 && column === 12 ? 'OVRFLW' : `${row}.${column}`));
    const lines = text.split('\r\n');
    const grid = readPlateGrid(lines.slice(4), ',', 5)!;
    expect(grid).toMatchObject({ rows: 8, columns: 12, row_labels: 'letters', empty_wells: 1, header_line: 5, last_line: 13 });
    expect(grid.wells).toHaveLength(95);
    expect(grid.wells.slice(0, 2)).toEqual(['A1', 'A3']);
    expect(grid.values.slice(0, 2)).toEqual(['0.1', '0.3']);
    expect(grid.wells.at(-1)).toBe('H12');
    expect(grid.values.at(-1)).toBe('OVRFLW');
    const table = parseCsvRows(plateGridTable(grid, ','), ',');
    expect(table[0]!.slice(0, 3)).toEqual(['Read time', 'A1', 'A3']);
    expect(table[1]!.slice(0, 3)).toEqual(['0:00:00', '0.1', '0.3']);
  });

  it('reads unlettered rows (SoftMax Pro) only when there are as many as the plate has, and stops at the first blank line', () => {
    const header = ['', 'Temperature(¡C)', ...Array.from({ length: 12 }, (_, index) => String(index + 1)), '', ''].join('\t');
    const row = (value: string, temperature = '') => ['', temperature, ...Array.from({ length: 12 }, () => value), '', ''].join('\t');
    const plate = [header, row('1.5', 'NaN'), ...Array.from({ length: 7 }, () => row('2.5')), '', header, row('9')];
    const grid = readPlateGrid(plate, '\t', 3)!;
    expect(grid).toMatchObject({ rows: 8, row_labels: 'positions', last_line: 11 });
    expect(grid.values.slice(0, 13)).toEqual([...Array.from({ length: 12 }, () => '1.5'), '2.5']);
    // Seven rows are no 96-well plate.
    expect(readPlateGrid([header, ...Array.from({ length: 7 }, () => row('2.5'))], '\t', 1)).toBeNull();
    // A row label that is not the next letter ends a lettered grid; a first label that is no letter A is no grid.
    expect(readPlateGrid([',1,2,3', 'A,1,2,3', 'B,1,2,3', 'D,1,2,3'], ',', 1)).toMatchObject({ rows: 2 });
    expect(readPlateGrid([',1,2,3', 'X,1,2,3', 'Y,1,2,3'], ',', 1)).toBeNull();
  });

  it('reads a 384-well plate, rows A-P by columns 1-24', () => {
    const header = `,${Array.from({ length: 24 }, (_, index) => index + 1).join(',')}`;
    const rows = Array.from({ length: 16 }, (_, row) => `${plateRowLabel(row)},${Array.from({ length: 24 }, (_, column) => `${row}.${column}`).join(',')}`);
    const grid = readPlateGrid([header, ...rows, ''], ',', 1)!;
    expect(grid).toMatchObject({ rows: 16, columns: 24, empty_wells: 0 });
    expect(grid.wells).toHaveLength(384);
    expect([grid.wells.at(-1), grid.values.at(-1)]).toEqual(['P24', '15.23']);
  });

  it('quotes a value holding the delimiter so the table reads back as written', () => {
    const grid = readPlateGrid(['\t1\t2\t3', 'A\t1,5\t"x"\t3', 'B\t4\t5\t6'], '\t', 1)!;
    expect(parseCsvRows(plateGridTable(grid, ','), ',')[1]!.slice(1, 3)).toEqual(['1,5', 'x']);
  });

  it('the detection answers the grid as its table, with the read time from the preamble', () => {
    const outcome = detectCsvLayout(bytes(marsGrid()));
    expect(outcome.ok).toBe(true);
    if (!outcome.ok) return;
    expect(outcome.layout).toMatchObject({
      header_line: 5, time_column: 'Read time', time: { mode: 'elapsed', elapsed_unit: 'seconds', clock: true },
      start: { wallClock: '2021-05-14T15:29:50' }, grid: { rows: 8, columns: 12 }, rows_parsed: 1, table_end: null,
    });
    expect(outcome.layout.headers).toHaveLength(97);
    expect(outcome.layout.notices).not.toContain("'Read time' counts time from the run's start: give the start date and time.");
  });

  it('a grid without a stated time asks for one; SoftMax Pro\'s footer gives the time the file was saved', () => {
    const withoutTime = detectCsvLayout(bytes(marsGrid().replace('Test name: plate,Date: 5/14/2021,Time: 3:29:50 PM', 'Test name: plate')));
    expect(withoutTime.ok && withoutTime.layout.start).toBeNull();
    expect(withoutTime.ok && withoutTime.layout.notices).toContain('This plate grid states no read time: give the date and time the plate was read as the start.');
    const footer = ['~End', 'Original Filename: x; Date Last Saved: 11/27/2023 10:43:25 AM'];
    expect(findFooterTime(footer, 40)).toEqual({ wallClock: '2023-11-27T10:43:25', line: 41, text: 'Date Last Saved: 11/27/2023 10:43:25 AM' });
    expect(findFooterTime(['~End', 'Date Last Saved: never'], 1)).toBeNull();
  });

  it('the upload cut streams past everything but the grid, in any chunking, and refuses lines that are no grid', () => {
    const text = `${marsGrid()}\r\nmore,lines,after\r\n`;
    const whole = new PlateGridCutter({ headerLine: 5, delimiter: ',' });
    const expected = whole.push(text) + whole.end();
    expect(expected.startsWith('Read time,A1,A2,')).toBe(true);
    expect(expected.split('\n')[1]!.split(',')).toHaveLength(97);
    for (const size of [1, 7, 64]) {
      const cutter = new PlateGridCutter({ headerLine: 5, delimiter: ',' });
      let output = '';
      for (let start = 0; start < text.length; start += size) output += cutter.push(text.slice(start, start + size));
      expect(output + cutter.end()).toBe(expected);
    }
    const notGrid = new PlateGridCutter({ headerLine: 1, delimiter: ',' });
    expect(() => notGrid.push('time,temp\n1,2\n3,4\n\n') + notGrid.end()).toThrow('Line 1 does not start a plate grid');
  });
});

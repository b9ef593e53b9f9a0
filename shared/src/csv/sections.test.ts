import { describe, expect, it } from 'vitest';
import { parseCsvRows } from './row-parser.ts';
import { detectCsvLayout } from './detect.ts';
import {
  DataSectionFilter,
  findReadBlocks,
  findDataSection,
  isMultiSectionCsv,
  readTimezoneBiasMinutes,
  sectionNameOfLine,
  sectionNameOfRow,
} from './sections.ts';

const DASWARE_LIKE = [
  '"[Info]"',
  '"Product";"Version"',
  '"FngArchiv";"5.0.0"',
  '',
  '"[CoreInfo]"',
  '"Product";"Version";"Host";"Option1"',
  '"TimezoneBias";120',
  '',
  '"[TrackData]"',
  '',
  '"[TrackData1]"',
  '"Timestamp";"Duration";"Unit 1.T1.PV [°C]"',
  '2020-07-14 09:55:33;0;30.01',
  '2020-07-14 09:56:03;0.000347;""',
  '',
  '"[Events]"',
  '"No";"Timestamp";"Description"',
  '360374;2020-07-14 09:55:34;"Database capacity utilization 6 %."',
].join('\r\n');

describe('multi-section files', () => {
  it('recognises section marker lines and rows', () => {
    expect(sectionNameOfLine('"[TrackData1]"')).toBe('TrackData1');
    expect(sectionNameOfLine('[Events]\r')).toBe('Events');
    expect(sectionNameOfLine('"[/Fb-Pro]"')).toBe('/Fb-Pro');
    expect(sectionNameOfLine('"Timestamp";"Duration"')).toBeNull();
    expect(sectionNameOfRow(['[TrackData1]'])).toBe('TrackData1');
    expect(sectionNameOfRow(['[Events]', ''])).toBe('Events');
    expect(sectionNameOfRow(['[a]', 'b'])).toBeNull();
    expect(isMultiSectionCsv(DASWARE_LIKE)).toBe(true);
    expect(isMultiSectionCsv('time,value\n1,2')).toBe(false);
  });

  it('finds the data table and stops at the next section', () => {
    const section = findDataSection(DASWARE_LIKE)!;
    expect(section.name).toBe('TrackData1');
    expect(section.text.startsWith('"Timestamp";"Duration"')).toBe(true);
    expect(parseCsvRows(section.text, ';')).toEqual([
      ['Timestamp', 'Duration', 'Unit 1.T1.PV [°C]'],
      ['2020-07-14 09:55:33', '0', '30.01'],
      ['2020-07-14 09:56:03', '0.000347', ''],
    ]);
    expect(findDataSection('time,value\n1,2')).toBeNull();
    expect(findDataSection('"[Info]"\n"a";"b"\n')).toBeNull();
  });

  it('filters streamed rows down to the data table', () => {
    const filter = new DataSectionFilter();
    const verdicts = parseCsvRows(DASWARE_LIKE, ';').map((row) => filter.accept(row));
    expect(verdicts.filter((verdict) => verdict === 'header')).toHaveLength(1);
    expect(verdicts.filter((verdict) => verdict === 'row')).toHaveLength(2);
    expect(verdicts.indexOf('end')).toBe(verdicts.indexOf('row') + 2);
    expect(filter.sectionName).toBe('TrackData1');
    expect(filter.foundTable).toBe(true);
    expect(filter.accept(['anything'])).toBe('end');
  });

  it('reads the DASware time zone bias', () => {
    expect(readTimezoneBiasMinutes(DASWARE_LIKE)).toBe(120);
    expect(readTimezoneBiasMinutes('"TimezoneBias";-60')).toBe(-60);
    expect(readTimezoneBiasMinutes('time,value')).toBeNull();
  });
});

describe('read blocks', () => {
  const cellsOf = (lines: string[], delimiter: string) => lines.map((line) => line.split(delimiter));
  const keepAll = () => ({ shape: 'table' as const, time_axis: false });

  it('takes declared blocks (SoftMax Pro) one each, titled by their first line, and leaves the footer out', () => {
    const lines = [
      '##BLOCKS= 2', 'Plate:\tPlate01\t1.3\tPlateFormat', '\tTemperature(¡C)\t1\t2\t3', '\t25\t1\t2\t3', '\t\t4\t5\t6', '~End',
      'Group: Standards', 'Sample\tWells\tOD', '01\tA1\t3.4', '02\tB1\t1.1', '', 'Group Column\tFormula Name\tFormula', '1\tSample\t!SampleNames', '~End',
      'Original Filename: x; Date Last Saved: 11/27/2023 10:43:25 AM',
    ];
    const blocks = findReadBlocks(lines, cellsOf(lines, '\t'), keepAll);
    expect(blocks.map(({ index, title, header_line, last_line, rows }) => ({ index, title, header_line, last_line, rows }))).toEqual([
      { index: 1, title: 'Plate: Plate01', header_line: 3, last_line: 5, rows: 2 },
      { index: 2, title: 'Group: Standards', header_line: 8, last_line: 10, rows: 2 },
    ]);
  });

  it('finds the tables of an undeclared file the judge keeps, titled by the Label: or one-cell line above them', () => {
    const lines = [
      'Date:,20.02.2024', '', 'Label: Abs600_Copy1', 'Mode,,,,Absorbance', '', '<>,1,2,3', 'A,0.1,0.2,0.3', 'B,0.4,0.5,0.6', '',
      'Label: Abs600', '', 'Cycle Nr.,1,2,3', 'Time [s],0,95.3,190.6', 'A1,0.25,0.26,0.27', '',
      'Results', 'Well,Max V,Lag', 'A1,0.7,1:00:00', 'A2,0.8,2:00:00', '',
    ];
    const judged: number[] = [];
    const blocks = findReadBlocks(lines, cellsOf(lines, ','), (index) => {
      judged.push(index + 1);
      return index + 1 === 17 ? null : { shape: 'table', time_axis: index + 1 === 12 };
    });
    expect(judged).toEqual([6, 12, 17]);
    expect(blocks.map(({ title, header_line, rows, time_axis }) => ({ title, header_line, rows, time_axis }))).toEqual([
      { title: 'Label: Abs600_Copy1', header_line: 6, rows: 2, time_axis: false },
      { title: 'Label: Abs600', header_line: 12, rows: 2, time_axis: true },
    ]);
  });

  it('the detection reads the first block with a time axis, or the one chosen, and lists them all', () => {
    const read = (wavelength: string, value: string) => [wavelength, '', `Time\tT 600\tA1\tA2`, `0:00:22\t30.0\t${value}\t0.2`, `0:04:22\t30.0\t${value}\t0.3`, '0:00:00', ''];
    const text = ['Software Version\t3.0.1', 'Date\t09/15/2023', 'Time\t12:30:01 PM', '', ...read('600', '0.1'), ...read('450', '0.9')].join('\n');
    const detected = detectCsvLayout(new TextEncoder().encode(text));
    expect(detected.ok).toBe(true);
    if (!detected.ok) return;
    expect(detected.layout).toMatchObject({ block: 1, header_line: 7, time_column: 'Time', start: { wallClock: '2023-09-15T12:30:01' } });
    expect(detected.layout.blocks.map(({ title, header_line, shape, time_axis }) => ({ title, header_line, shape, time_axis }))).toEqual([
      { title: '600', header_line: 7, shape: 'table', time_axis: true },
      { title: '450', header_line: 14, shape: 'table', time_axis: true },
    ]);
    expect(detected.layout.notices).toContain("This file has 2 read blocks; block 1 ('600') is read: choose another under Block.");
    const second = detectCsvLayout(new TextEncoder().encode(text), { block: 2 });
    expect(second.ok && second.layout).toMatchObject({ block: 2, header_line: 14, table_end: { line: 17 }, rows: [['0:00:22', '30.0', '0.9', '0.2'], ['0:04:22', '30.0', '0.9', '0.3']] });
    const missing = detectCsvLayout(new TextEncoder().encode(text), { block: 3 });
    expect(missing).toEqual({ ok: false, message: 'Block 3 is not one of the 2 read block(s) found in the part of the file that was read.' });
  });

  it('a Tecan i-control sheet: its settings tables are no blocks, its single read is a grid at its own start, its kinetic read the default', () => {
    const settings = (label: string, start: string) => [
      `Label: ${label}`, 'Measurement Wavelength,,,,600,nm', 'Bandwidth,,,,9,nm', 'Number of Flashes,,,,10', `Start Time:,${start}`, '',
    ];
    const grid = ['<>,1,2,3,4,5,6,7,8,9,10,11,12', ...'ABCDEFGH'.split('').map((row) => `${row},${Array.from({ length: 12 }, (_, index) => `0.${index + 1}`).join(',')}`), ''];
    const kinetic = ['Cycle Nr.,1,2,3', 'Time [s],0,95.3,190.6', 'Temp. [°C],37.3,37.2,37.2', 'A1,0.25,0.26,0.27', 'A2,0.1,0.11,0.12', ''];
    const text = ['Date:,20.02.2024', 'Time:,18:19:42', '', ...settings('Abs600_Copy1', '20.02.2024 18:19:42'), ...grid, 'List of actions in this measurement script:', '',
      ...settings('Abs600', '20.02.2024 18:20:28'), ...kinetic].join('\n');
    const detected = detectCsvLayout(new TextEncoder().encode(text));
    expect(detected.ok && detected.layout.blocks.map(({ title, shape, time_axis }) => ({ title, shape, time_axis }))).toEqual([
      { title: 'Label: Abs600_Copy1', shape: 'grid', time_axis: false }, { title: 'Label: Abs600', shape: 'columns', time_axis: true },
    ]);
    expect(detected.ok && detected.layout).toMatchObject({ block: 2, orientation: 'columns', start: { wallClock: '2024-02-20T18:20:28' } });
    const single = detectCsvLayout(new TextEncoder().encode(text), { block: 1 });
    expect(single.ok && single.layout).toMatchObject({ block: 1, grid: { rows: 8, columns: 12 }, time_column: 'Read time', start: { wallClock: '2024-02-20T18:19:42' } });
  });
});

describe('read blocks are found in linear work', () => {
  /** Lines and cells looked at while finding the blocks of `lines`, counted through proxies. */
  function workOf(lines: string[]): number {
    let looked = 0;
    const counted = <T,>(array: T[]): T[] => new Proxy(array, {
      get(target, property, receiver) {
        if (typeof property === 'string' && /^\d+$/.test(property)) looked += 1;
        return Reflect.get(target, property, receiver) as unknown;
      },
    });
    const cells = lines.map((line) => line.split(','));
    findReadBlocks(counted(lines), counted(cells), () => ({ shape: 'table', time_axis: true }));
    return looked;
  }

  const shapes: Record<string, (count: number) => string[]> = {
    'headers followed by one row each': (count) => Array.from({ length: count }, (_, index) => (index % 3 === 0 ? 'a,b,c' : index % 3 === 1 ? '1,2,3' : '')),
    'many small tables': (count) => Array.from({ length: count }, (_, index) => (index % 4 === 0 ? ',1,2,3' : index % 4 === 3 ? '' : `${'AB'[(index % 4) - 1]},1,2,3`)),
    'one long table': (count) => ['a,b,c', ...Array.from({ length: count - 1 }, (_, index) => `${index},2,3`)],
    'declared blocks': (count) => ['##BLOCKS= 9', ...Array.from({ length: count - 1 }, (_, index) => ['Plate: P', 'a,b,c', '1,2,3', '~End'][index % 4]!)],
  };

  for (const [name, shape] of Object.entries(shapes)) {
    it(`${name}: each line is looked at a few times, and twice the lines cost at most about twice the work`, () => {
      const small = workOf(shape(2_000));
      const large = workOf(shape(4_000));
      expect(small).toBeGreaterThanOrEqual(2_000);
      expect(small).toBeLessThanOrEqual(8 * 2_000);
      expect(large).toBeLessThanOrEqual(2.2 * small);
    });
  }
});

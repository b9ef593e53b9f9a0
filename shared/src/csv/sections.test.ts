import { describe, expect, it } from 'vitest';
import { parseCsvRows } from './row-parser.ts';
import { detectCsvLayout } from './detect.ts';
import {
  DataSectionCutter,
  DataSectionFilter,
  dataSectionTitle,
  findReadBlocks,
  findDataSection,
  findDataSections,
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

/** A DASGIP Control export of a parallel run, cut down: one `[TrackDataN]` section per unit. */
const DASGIP_LIKE = [
  '"[Info]"',
  '"Product";"Version"',
  '"FngArchiv";"4.0.1"',
  '',
  '"[CoreInfo]"',
  '"TimezoneBias";-120',
  '',
  '"[TrackData]"',
  '',
  '"[TrackData1]"',
  '"Timestamp";"Duration";"Unit 1.pH1.PV [pH]"',
  '2018-07-26 11:53:36;0.0007;6.70',
  '2018-07-26 11:54:36;0.0014;6.71',
  '',
  '"[TrackData2]"',
  '"Timestamp";"Duration";"Unit 2.pH2.PV [pH]"',
  '2018-07-26 11:53:37;0.0007;7.02',
  '2018-07-26 11:54:37;0.0014;7.03',
  '2018-07-26 11:55:37;0.0021;7.04',
  '',
  '"[TrackData3]"',
  '"Timestamp";"Duration";"Unit 3.pH3.PV [pH]"',
  '2018-07-26 11:53:38;0.0007;6.90',
  '2018-07-26 11:54:38;0.0014;6.91',
  '',
  '"[Events]"',
  '"No";"Timestamp";"Description"',
  '1;2018-07-26 11:53:40;"Unit 3 started"',
].join('\r\n');

describe('multi-section files of several units (DASGIP Control)', () => {
  it('finds every data section with its header line and rows, the empty [TrackData] none', () => {
    const sections = findDataSections(DASGIP_LIKE);
    expect(sections.map(({ name, headerLine, rows }) => ({ name, headerLine, rows }))).toEqual([
      { name: 'TrackData1', headerLine: 11, rows: 2 },
      { name: 'TrackData2', headerLine: 16, rows: 3 },
      { name: 'TrackData3', headerLine: 22, rows: 2 },
    ]);
    expect(parseCsvRows(sections[2]!.text, ';').filter((row) => row.join('') !== '')).toEqual([
      ['Timestamp', 'Duration', 'Unit 3.pH3.PV [pH]'],
      ['2018-07-26 11:53:38', '0.0007', '6.90'],
      ['2018-07-26 11:54:38', '0.0014', '6.91'],
    ]);
    expect(findDataSection(DASGIP_LIKE)!.name).toBe('TrackData1');
  });

  it('titles a section by its name and the unit all its columns name', () => {
    expect(dataSectionTitle('TrackData2', ['Timestamp', 'Duration', 'Unit 2.pH2.PV [pH]', 'Unit 2.T2.PV [°C]'])).toBe('TrackData2 (Unit 2)');
    expect(dataSectionTitle('TrackData1', ['Timestamp', 'Unit 1.pH1.PV [pH]', 'Unit 2.pH2.PV [pH]'])).toBe('TrackData1');
    expect(dataSectionTitle('TrackData1', ['Timestamp', 'pH'])).toBe('TrackData1');
  });

  it('the detection lists each section as a block, reads the first, or the one chosen by index or header line', () => {
    const layoutOf = (choices: Parameters<typeof detectCsvLayout>[1]) => {
      const outcome = detectCsvLayout(new TextEncoder().encode(DASGIP_LIKE), choices);
      if (!outcome.ok) throw new Error(outcome.message);
      return outcome.layout;
    };
    const first = layoutOf({});
    expect(first.blocks.map(({ index, title, header_line, last_line, rows, shape, time_axis }) => ({ index, title, header_line, last_line, rows, shape, time_axis }))).toEqual([
      { index: 1, title: 'TrackData1 (Unit 1)', header_line: 11, last_line: 13, rows: 2, shape: 'table', time_axis: true },
      { index: 2, title: 'TrackData2 (Unit 2)', header_line: 16, last_line: 19, rows: 3, shape: 'table', time_axis: true },
      { index: 3, title: 'TrackData3 (Unit 3)', header_line: 22, last_line: 24, rows: 2, shape: 'table', time_axis: true },
    ]);
    expect(first).toMatchObject({ block: 1, section: 'TrackData1', header_line: 11, rows_parsed: 2 });
    expect(first.notices).toContain("This file has 3 read blocks; block 1 ('TrackData1 (Unit 1)') is read: choose another under Block.");
    const third = layoutOf({ block: 3 });
    expect(third).toMatchObject({ block: 3, section: 'TrackData3', header_line: 22, preamble_lines: 0, rows_parsed: 2, time_column: 'Timestamp' });
    expect(third.headers).toEqual(['Timestamp', 'Duration', 'Unit 3.pH3.PV [pH]']);
    expect(third.rows.map((row) => row[2])).toEqual(['6.90', '6.91']);
    // The upload names a block by its header line.
    expect(layoutOf({ header_line: 16 })).toMatchObject({ block: 2, section: 'TrackData2', rows_parsed: 3 });
    const refused = detectCsvLayout(new TextEncoder().encode(DASGIP_LIKE), { block: 4 });
    expect(refused).toEqual({ ok: false, message: 'Block 4 is not one of the 3 read block(s) found in the part of the file that was read.' });
  });

  it('a one-unit export (DASware) lists no blocks', () => {
    const outcome = detectCsvLayout(new TextEncoder().encode(DASWARE_LIKE));
    expect(outcome.ok && outcome.layout).toMatchObject({ blocks: [], block: null, section: 'TrackData1', header_line: 12 });
  });

  /** The cutter's output, the text pushed in pieces of `size` characters. */
  function cutInPieces(text: string, headerLine: number, size: number): string {
    const cutter = new DataSectionCutter(headerLine);
    let output = '';
    for (let start = 0; start < text.length && !cutter.finished; start += size) output += cutter.push(text.slice(start, start + size));
    return output + (cutter.finished ? '' : cutter.end());
  }

  it('cuts the file to the chosen section, keeping the sections before the data, however the text arrives', () => {
    const expected = [
      '"[Info]"', '"Product";"Version"', '"FngArchiv";"4.0.1"', '', '"[CoreInfo]"', '"TimezoneBias";-120', '',
      '"[TrackData3]"', '"Timestamp";"Duration";"Unit 3.pH3.PV [pH]"', '2018-07-26 11:53:38;0.0007;6.90', '2018-07-26 11:54:38;0.0014;6.91', '',
    ].join('\r\n') + '\r\n';
    for (const size of [1, 7, 64, DASGIP_LIKE.length]) expect(cutInPieces(DASGIP_LIKE, 22, size), `pieces of ${size}`).toBe(expected);
    // What the worker reads of the cut: the chosen unit's rows, nothing of the others, the bias kept.
    const cut = cutInPieces(DASGIP_LIKE, 22, 64);
    const filter = new DataSectionFilter();
    const rows = parseCsvRows(cut, ';').filter((row) => filter.accept(row) === 'row' && row.join('') !== '');
    expect(filter.sectionName).toBe('TrackData3');
    expect(rows.map((row) => row[2])).toEqual(['6.90', '6.91']);
    expect(readTimezoneBiasMinutes(cut)).toBe(-120);
    // A section the file ends in is cut to the end.
    const lastOnly = DASGIP_LIKE.slice(0, DASGIP_LIKE.indexOf('\r\n\r\n"[Events]"'));
    expect(cutInPieces(lastOnly, 22, 5).endsWith('"[TrackData3]"\r\n"Timestamp";"Duration";"Unit 3.pH3.PV [pH]"\r\n2018-07-26 11:53:38;0.0007;6.90\r\n2018-07-26 11:54:38;0.0014;6.91')).toBe(true);
  });

  it('streams: what it keeps is given back as its lines arrive, the other units pass through unkept, and it stops at the chosen table\'s end', () => {
    const preamble = DASGIP_LIKE.slice(0, DASGIP_LIKE.indexOf('"[TrackData]"'));
    const rows = 100_000;
    const otherUnit = '2018-07-26 11:53:37;0.0007;7.02\r\n'.repeat(rows);
    // Preamble lines, the unit 2 marker and header, its rows, then the unit 3 marker: its header's line.
    const headerLine = preamble.split('\r\n').length - 1 + 2 + rows + 2;
    const cutter = new DataSectionCutter(headerLine);
    expect(cutter.push(preamble)).toBe(preamble);
    expect(cutter.push('"[TrackData2]"\r\n"Timestamp";"Duration";"Unit 2.pH2.PV [pH]"\r\n' + otherUnit.slice(0, 1_000_001))).toBe('');
    expect(cutter.push(otherUnit.slice(1_000_001))).toBe('');
    const unitThree = '"[TrackData3]"\r\n"Timestamp";"Duration";"Unit 3.pH3.PV [pH]"\r\n2018-07-26 11:53:38;0.0007;6.90\r\n';
    expect(cutter.push(unitThree)).toBe(unitThree);
    expect(cutter.finished).toBe(false);
    expect(cutter.push('\r\n"[Events]"\r\n"No";"Timestamp"\r\n')).toBe('\r\n');
    expect(cutter.finished).toBe(true);
    expect(cutter.push('1;2018-07-26 11:53:40\r\n')).toBe('');
  });

  it('refuses a header line that is not a data section\'s header', () => {
    const message = 'Line 12 is not the header of a data section ([TrackData1], [TrackData2], ...) of this file: choose one of its blocks.';
    expect(() => cutInPieces(DASGIP_LIKE, 12, 16)).toThrow(message);
    expect(() => cutInPieces(DASGIP_LIKE, 2, 16)).toThrow('Line 2 is not the header');
    expect(() => cutInPieces(DASGIP_LIKE, 500, 16)).toThrow('Line 500 is not the header');
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

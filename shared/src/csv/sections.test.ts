import { describe, expect, it } from 'vitest';
import { parseCsvRows } from './row-parser.ts';
import {
  DataSectionFilter,
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

/**
 * Long format as the detection suggests it (the key columns that tell rows apart when the time
 * repeats, one column or several together), header-less tables named by position, and the row
 * filters suggested for calibrators and blanks: on the real exports and on small files of each shape.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { detectCsvLayout, LAYOUT_PREVIEW_BYTES, type CsvLayout, type DetectOptions } from './detect.ts';
import { distinctRowKeys, KEY_JOINER, keyColumnsOf, rowKey, suggestLongFormat } from './long-format.ts';
import { longFormatAlias } from './export-shapes.ts';
import { headerLineOf, headerlessColumnNames } from './headerless.ts';
import { realExportPath, type RealExportName } from '../../test-data/real-exports.ts';

function layoutOf(source: RealExportName | { text: string }, choices: DetectOptions = {}): CsvLayout {
  const bytes = typeof source === 'object' ? new TextEncoder().encode(source.text) : new Uint8Array(readFileSync(realExportPath(source)));
  const head = bytes.subarray(0, LAYOUT_PREVIEW_BYTES);
  const outcome = detectCsvLayout(head, { partial: head.length < bytes.length, ...choices });
  if (!outcome.ok) throw new Error(outcome.message);
  return outcome.layout;
}

/** A plate read every ten minutes, each well in two channels: every timestamp repeats 2 x wells times. */
function wellChannelFile(wells = ['A1', 'A2', 'B1'], times = 3): string {
  const lines = ['Time,Well,Channel,Value'];
  for (let t = 0; t < times; t += 1) {
    for (const well of wells) {
      for (const channel of ['OD600', 'GFP']) lines.push(`2024-03-01 10:${String(t * 10).padStart(2, '0')}:00,${well},${channel},${(t + 1) * 0.1 + wells.indexOf(well)}`);
    }
  }
  return lines.join('\n');
}

describe('long format suggested by the detection', () => {
  it('suggests well x channel when the well alone repeats every timestamp', () => {
    const layout = layoutOf({ text: wellChannelFile() });
    expect(layout.time_column).toBe('Time');
    expect(layout.long_format).toEqual({ key_columns: ['Well', 'Channel'], value_columns: ['Value'], keys: 6 });
    expect(layout.notices).toContain('Times repeat: each row is one series, told apart by Well x Channel (6 in the rows read); read as long format.');
  });

  it('suggests the one key column of the Chronograf export, whose first rows all share one time', () => {
    const layout = layoutOf('O2_2021-10-01-10-59 Chronograf Data.csv');
    expect(layout.rows.slice(0, 10).every((row) => row[0] === layout.rows[0]![0])).toBe(true);
    expect(layout.long_format).toMatchObject({ key_columns: ['position'], value_columns: ['Presens_data.O2_value'], keys: 48 });
  });

  it('suggests the BioLector I\'s well column, though each well is read at its own time and reference and event rows have no well', () => {
    const layout = layoutOf('JH_ShakerSteps_20170302_070206.csv');
    expect(layout.long_format).toEqual({
      key_columns: ['WELLNUM'], value_columns: ['AMPLITUDE', 'PHASE', 'ACT TEMP [°C]', 'ACT HUMIDITY [rH]', 'ACT O2 [%]', 'ACT CO2 [%]'], keys: 48,
    });
    expect(layout.notices).toContain("Each row is one well's read at its own time, told apart by WELLNUM (48 in the rows read); read as long format.");
  });

  it('splits the BioLector Pro\'s wells by filter set: a well alone repeats no time, but one series never mixes channels', () => {
    const layout = layoutOf('224-MO_Coryne--2019-07-12-16-54-30.csv');
    expect(layout.long_format).toMatchObject({ key_columns: ['Well', 'Filterset'], keys: 144 });
    expect(layout.long_format!.value_columns.slice(0, 6)).toEqual(['Amp_1', 'Amp_2', 'AmpRef_1', 'AmpRef_2', 'Phase', 'Cal']);
  });

  it('a well column of recurring values is long format on a small file too; a well column of one row each is not', () => {
    const reads = ['time,well,channel,value', '0.01,,1,5', '0.02,A1,1,1.5', '0.03,A2,1,2.5', '0.04,A1,2,7.5', '0.05,A2,2,8.5', '0.06,,1,5', '0.07,A1,1,1.6', '0.08,A2,1,2.6'];
    const rows = reads.slice(1).map((line) => line.split(','));
    expect(suggestLongFormat(reads[0]!.split(','), rows, 0, false)).toEqual({ key_columns: ['well', 'channel'], value_columns: ['value'], keys: 4 });
    const once = [['0.01', 'A1', '1.5'], ['0.02', 'A2', '2.5'], ['0.03', 'A3', '3.5']];
    expect(suggestLongFormat(['time', 'well', 'value'], once, 0, false)).toBeNull();
  });

  it('suggests nothing for a wide file, whose times do not repeat', () => {
    expect(layoutOf({ text: 'time,a,b\n2024-01-01 00:00:00,1,2\n2024-01-01 00:01:00,3,4\n' }).long_format).toBeNull();
  });

  it('prefers a column named like a key over a numeric value that happens to tell rows apart', () => {
    const rows = [['t1', '1.5', 'R1'], ['t1', '2.5', 'R2'], ['t2', '1.6', 'R1'], ['t2', '2.6', 'R2']];
    expect(suggestLongFormat(['time', 'value', 'reactor'], rows, 0, false)).toEqual({ key_columns: ['reactor'], value_columns: ['value'], keys: 2 });
  });

  it('joins a composite key and names its series by the key alone', () => {
    expect(rowKey(['t', 'A1', 'OD600'], [1, 2])).toBe(`A1${KEY_JOINER}OD600`);
    expect(rowKey(['t', ' 7 '], [1])).toBe('7');
    expect(distinctRowKeys([['t', 'A2', 'x'], ['t', 'A10', 'x'], ['t', 'A2', 'x'], ['t', '', '']], [1, 2])).toEqual(['A2 · x', 'A10 · x']);
    expect(longFormatAlias('Value', ['Well', 'Channel'], 'A1 · OD600')).toBe('Value (A1 · OD600)');
    expect(longFormatAlias('Presens_data.O2_value', 'position', '7')).toBe('Presens_data.O2_value (position 7)');
    expect(keyColumnsOf({ key_column: 'position' })).toEqual(['position']);
    expect(keyColumnsOf({ key_columns: ['Well', 'Channel'] })).toEqual(['Well', 'Channel']);
    expect(keyColumnsOf({})).toEqual([]);
  });
});

describe('tables without a header row', () => {
  it('says the Cedex Bio HT archive has none, and read without one names its columns by position with every row as data', () => {
    const detected = layoutOf('roche_cedex_bioht_example03.txt');
    expect(detected).toMatchObject({ header_row: true, looks_headerless: true });
    // Line 1 is the archive's file record; the results start on line 2.
    const layout = layoutOf('roche_cedex_bioht_example03.txt', { header_line: 2, no_header: true });
    expect(layout.header_row).toBe(false);
    expect(layout.headers.slice(0, 3)).toEqual(['Column 1', 'Column 2', 'Column 3']);
    expect(layout.headers).toHaveLength(26);
    // The first result record is data now, not the header.
    expect(layout.rows[0]!.slice(0, 3)).toEqual(['40', '2022-10-17 08:12:47', 'Plate1_1']);
    expect(layout.rows_parsed).toBe(930);
    expect(layout.time_column).toBe('Column 2');
    expect(layout.notices).toContain('Read without a header row: the columns are named Column 1 to Column 26; rename them in the mapping table.');
  });

  it('takes the names the user gives, and the rest stay positional', () => {
    const layout = layoutOf({ text: '2024-01-01 00:00:00,1.5,7\n2024-01-01 00:01:00,1.6,8\n' }, { no_header: true, column_names: ['time', 'pH'] });
    expect(layout.headers).toEqual(['time', 'pH', 'Column 3']);
    expect(layout.rows).toHaveLength(2);
    expect(layout.time_column).toBe('time');
  });

  it('writes the header line the api puts above a header-less table', () => {
    expect(headerlessColumnNames([['a', 'b'], ['a', 'b', 'c']], ['Time'])).toEqual(['Time', 'Column 2', 'Column 3']);
    expect(headerLineOf(['Time', 'Feed; total', 'pH'], ';')).toBe('Time;"Feed; total";pH\n');
  });
});

describe('row filters suggested', () => {
  it('suggests leaving out calibrators, controls and blanks named in a Sample Type column', () => {
    const text = ['Time,Sample Type,Sample,Glucose (g/L)', '2024-01-01 08:00:00,Calibrator,CAL1,5.0', '2024-01-01 08:05:00,Sample,R1,3.1',
      '2024-01-01 08:10:00,Control,QC-L,2.0', '2024-01-01 08:15:00,Sample,R2,3.3', '2024-01-01 08:20:00,Blank,B,0'].join('\n');
    expect(layoutOf({ text }).row_filters).toEqual([{ column: 'Sample Type', operator: 'equals', values: ['Calibrator', 'Control', 'Blank'] }]);
  });

  it('suggests none when the rows are all samples', () => {
    expect(layoutOf({ text: 'Time,Type,v\n2024-01-01 00:00:00,Sample,1\n2024-01-01 00:01:00,Sample,2\n' }).row_filters).toEqual([]);
  });
});

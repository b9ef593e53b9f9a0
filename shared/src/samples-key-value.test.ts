import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REAL_EXPORT_NAMES, realExportPath } from '../test-data/real-exports.ts';
import { decodeCsvBytes } from './csv/encoding.ts';
import { keyValueTable, readKeyValueReport } from './samples-key-value.ts';

const text = (name: (typeof REAL_EXPORT_NAMES)[number]) => decodeCsvBytes(new Uint8Array(readFileSync(realExportPath(name)))).text;

describe('key/value reports', () => {
  it('reads the Vi-CELL XR report: spaced colons, empty values, headings as sections, settings marked', () => {
    const report = readKeyValueReport(text('Beckman_Vi-Cell-XR_example07_instrumentOutput.txt'))!;
    expect(report.separator).toBe(' : ');
    const table = keyValueTable(report);
    expect(table.headers.slice(0, 4)).toEqual(['Sample ID', 'File name', 'Time', 'LogDate']);
    expect(table.values.slice(0, 4)).toEqual(['CLB001', 'CLB001.txt', '', '29 Sep 2023  5:21:06 AM']);
    expect(table.lines[0]).toBe(3);
    expect(report.pairs.find((pair) => pair.key === 'Viability (%)')).toMatchObject({ value: '97.0', line: 19, section: 'Results' });
    expect(table.settingKeys).toContain('Minimum diameter (microns)');
    expect(table.settingKeys).not.toContain('Average diameter (microns)');
  });

  it('reads the NucleoView count: trailing separators, a title and filler lines, a checksum line', () => {
    const report = readKeyValueReport(text('chemometec_nucleoview_example01.csv'))!;
    expect(report.separator).toBe(';');
    expect(report.pairs.slice(0, 3).map(({ key, value }) => [key, value])).toEqual([['Image', '20231120-0012-c-cellsABCD'], ['Operator', 'DrScientist'], ['Viability (%)', '68.2']]);
    expect(report.pairs.at(-1)).toMatchObject({ key: 'csv file version', value: '2' });
  });

  it('numbers a repeated key instead of losing it', () => {
    const report = readKeyValueReport(['Sample ID : A1', 'Total cells (%) : 5', 'Viable cells (%) : 4', 'Comment : first', 'Comment : second', 'Cell type : CHO'].join('\n'))!;
    expect(keyValueTable(report).headers).toEqual(['Sample ID', 'Total cells (%)', 'Viable cells (%)', 'Comment', 'Comment (2)', 'Cell type']);
  });

  it('takes no table for a key/value report: not a two-column series, not a sample table, not any table of the corpus', () => {
    const series = ['Time,Value', ...Array.from({ length: 20 }, (_, index) => `2024-01-01 10:${String(index).padStart(2, '0')}:00,${index / 10}`)].join('\n');
    expect(readKeyValueReport(series)).toBeNull();
    const samples = ['Sample,Glucose', ...Array.from({ length: 20 }, (_, index) => `BR1-D${index},${index / 10}`)].join('\n');
    expect(readKeyValueReport(samples)).toBeNull();
    const keyValue = new Set(['Beckman_Vi-Cell-XR_example07_instrumentOutput.txt', 'chemometec_nucleoview_example01.csv']);
    for (const name of REAL_EXPORT_NAMES.filter((file) => !file.endsWith('.xlsx') && !keyValue.has(file))) {
      expect(readKeyValueReport(text(name)), name).toBeNull();
    }
  });
});

import { describe, expect, it } from 'vitest';
import { checkCsvContent, checkCsvFile, checkRowLimit } from './file-checks.ts';

describe('checkCsvFile', () => {
  const ok = { name: 'data.csv', size: 10, type: 'text/csv' };

  it('accepts a csv file of csv, text, Windows-Excel or unknown type', () => {
    expect(checkCsvFile(ok)).toBeNull();
    expect(checkCsvFile({ ...ok, name: 'DATA.CSV', type: 'text/plain' })).toBeNull();
    expect(checkCsvFile({ ...ok, type: 'application/vnd.ms-excel' })).toBeNull();
    expect(checkCsvFile({ ...ok, type: '' })).toBeNull();
    expect(checkCsvFile({ name: 'data.csv', size: 10 })).toBeNull();
  });

  it('takes the names text exports and workbooks have (.csv, .txt, .tsv, .asc, .xlsx, any case) and refuses others', () => {
    for (const name of ['data.csv', 'PLATE.CSV', 'gen5.txt', 'scan.tsv', 'log.asc', 'MFCS.XLSX']) expect(checkCsvFile({ ...ok, name })).toBeNull();
    expect(checkCsvFile({ ...ok, name: 'MFCS.xlsx', type: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' })).toBeNull();
    expect(checkCsvFile({ ...ok, name: 'data.xls' })).toBe('File must be a text export named .csv, .txt, .tsv or .asc, or an Excel workbook (.xlsx)');
    expect(checkCsvFile({ ...ok, name: 'csv' })).toBe('File must be a text export named .csv, .txt, .tsv or .asc, or an Excel workbook (.xlsx)');
  });

  it('limits the size to the configured value', () => {
    expect(checkCsvFile({ ...ok, size: 5 * 1024 * 1024 + 1 }, { maxBytes: 5 * 1024 * 1024 })).toBe(
      'File size must be less than 5MB',
    );
    expect(checkCsvFile({ ...ok, size: 3 * 1024 ** 3 })).toBe('File size must be less than 2GB');
    expect(checkCsvFile({ ...ok, size: 1024 ** 3 })).toBeNull();
  });

  it('rejects other types and empty files', () => {
    expect(checkCsvFile({ ...ok, type: 'application/pdf' })).toBe('Invalid file type. Please select a CSV file.');
    expect(checkCsvFile({ ...ok, type: 'image/png' })).toBe('Invalid file type. Please select a CSV file.');
    expect(checkCsvFile({ ...ok, size: 0 })).toBe('File is empty');
  });
});

describe('checkCsvContent', () => {
  it('accepts a normal file', () => {
    expect(checkCsvContent('time,value\n2024-01-01T00:00:00Z,1\n')).toBeNull();
  });

  it('rejects empty content, a missing header and malicious content', () => {
    expect(checkCsvContent('')).toBe('File content is empty');
    expect(checkCsvContent('\uFEFF \r\n\n')).toBe('File content is empty');
    expect(checkCsvContent(',,,\n1,2,3,4\n')).toBe('CSV file must contain a header row');
    expect(checkCsvContent('a,b\n<SCRIPT>alert(1)</SCRIPT>,2')).toBe('File contains potentially malicious content');
  });

  it('applies the configured row limit', () => {
    expect(checkCsvContent('a\n1\n2\n3', { maxRows: 2, dataRowCount: 3 })).toBe(
      'File must not have more than 2 rows',
    );
    expect(checkCsvContent('a\n1\n2', { maxRows: 2, dataRowCount: 2 })).toBeNull();
    expect(checkRowLimit(100_001, 100_000)).toBe('File must not have more than 100,000 rows');
    expect(checkRowLimit(100_000, 100_000)).toBeNull();
  });
});

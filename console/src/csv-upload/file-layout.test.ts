import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { realExportPath } from '../../../shared/test-data/real-exports.ts';
import { readingOf, startInstant } from './file-layout.ts';
import { readCsvPreview } from './read-preview.ts';

function fileOf(path: string, name: string) {
  const bytes = new Uint8Array(readFileSync(path));
  return { name, type: '', size: bytes.length, slice: (start: number, end: number) => ({ arrayBuffer: async () => bytes.slice(start, end).buffer }) };
}

describe('the wizard\'s file layout', () => {
  it('a preamble start is placed in the chosen zone', () => {
    expect(startInstant('2023-09-15T12:30:01', 'UTC')).toBe('2023-09-15T12:30:01.000Z');
    expect(startInstant('2023-09-15T12:30:01', 'Europe/Amsterdam')).toBe('2023-09-15T10:30:01.000Z');
    expect(startInstant('2023-09-15 12:30', '+02:00')).toBe('2023-09-15T10:30:00.000Z');
    expect(startInstant('15.09.2023', 'UTC')).toBeNull();
  });

  it('previews a Gen5 .txt past its preamble and carries the reading to the upload', async () => {
    const outcome = await readCsvPreview(fileOf(realExportPath('kinetic_helper_gene_growth_curve.txt'), 'kinetic.txt'));
    if (!outcome.ok) throw new Error(outcome.message);
    expect(outcome.preview.headers.slice(0, 3)).toEqual(['Time', 'T∞ 600', 'A1']);
    expect(outcome.sampleRows).toHaveLength(20);
    expect(outcome.layout.start?.wallClock).toBe('2023-09-15T12:30:01');
    expect(readingOf(outcome.layout)).toEqual({ encoding: 'utf-8', delimiter: '\t', header_line: 34, table_end: true });
  });

  it('previews a UTF-16 file decoded, and a header line the user chose', async () => {
    const outcome = await readCsvPreview(fileOf(realExportPath('Beckman_Vi-Cell-BLU_example01_utf16.csv'), 'vicell.csv'));
    expect(outcome.ok && outcome.encoding).toBe('utf-16be');
    const chosen = await readCsvPreview(fileOf(realExportPath('kinetic_helper_gene_growth_curve.txt'), 'kinetic.txt'), undefined, { header_line: 13 });
    expect(chosen.ok && chosen.layout.header_line).toBe(13);
  });
});

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { realExportPath } from '../../../shared/test-data/real-exports.ts';
import { blockLabel, readingOf, startInstant } from './file-layout.ts';
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

  it('carries a plate grid to the upload, and names the read blocks for the Block picker', async () => {
    const mars = await readCsvPreview(fileOf(realExportPath('BMG Labtech format.CSV'), 'plate.CSV'));
    if (!mars.ok) throw new Error(mars.message);
    expect(mars.preview.headers.slice(0, 2)).toEqual(['Read time', 'A1']);
    expect(readingOf(mars.layout)).toEqual({ encoding: 'utf-8', delimiter: ',', header_line: 9, table_end: false, plate_grid: true });
    const softMax = await readCsvPreview(fileOf(realExportPath('MD_SMP_absorbance_endpoint_example01.txt'), 'elisa.txt'), undefined, { block: 2 });
    if (!softMax.ok) throw new Error(softMax.message);
    expect(softMax.layout.blocks.map(blockLabel)).toEqual([
      '1. Plate: Plate01 (line 3: plate grid)', '2. Plate: Plate02 (line 24: plate grid)',
      '3. Group: Standards (line 45: table, 42 row(s))', '4. Group: UnknownsNoDiln (line 105: table, 144 row(s))',
    ]);
    expect(readingOf(softMax.layout)).toMatchObject({ header_line: 24, plate_grid: true });
  });
});

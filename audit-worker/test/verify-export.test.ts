/**
 * The offline verifier without services: a synthetic chain of 50,000 entries (the bench verifies a
 * million: deploy/bench/audit-verify-step.ts) passes against its checkpoint with every entry checked,
 * the same file with one cell changed fails naming the entry, and the CSV reader agrees with csv-parse
 * on awkward input fed in every chunking.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync, createReadStream } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { parse } from 'csv-parse/sync';
import { csvRecords } from '../src/csv-records.ts';
import { writeSyntheticExport } from '../src/synthetic-chain.ts';
import { verifyExport } from '../src/verify-export.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'bp-verify-export-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function collect(chunks: Iterable<string | Buffer>): Promise<string[][]> {
  const records: string[][] = [];
  for await (const record of csvRecords(Readable.from(chunks))) records.push(record);
  return records;
}

describe('offline audit verifier', () => {
  it('verifies every entry of a 50,000-entry chain against its checkpoint, and finds one changed cell', async () => {
    const file = path.join(dir, 'chain.csv');
    const checkpoint = await writeSyntheticExport(file, 50_000);
    const result = await verifyExport(createReadStream(file), checkpoint);
    expect(result).toMatchObject({ valid: true, entries: 50_000, unlinked: 0, checkpoint: { signature_valid: true, reached: true } });
    expect(result.organizations).toEqual([expect.objectContaining({ entries: 50_000, last_seq: 50_000, broken: null })]);

    const text = readFileSync(file, 'utf8');
    const at = text.indexOf('Run 37777');
    writeFileSync(file, `${text.slice(0, at)}Run 37778${text.slice(at + 'Run 37777'.length)}`);
    const tampered = await verifyExport(createReadStream(file), checkpoint);
    expect(tampered.valid).toBe(false);
    expect(tampered.organizations[0]!.broken).toMatchObject({ kind: 'edited', chain_seq: 37_777 });
  }, 180_000);

  it('reads RFC 4180 records as csv-parse does, however the stream is cut', async () => {
    const text = '\ufeffa,"b ""quoted"", with comma","multi\r\nline"\r\n,,\r\n"é ü 😀",x,"y"\nlast,row,"end"';
    const expected = parse(text, { bom: true, relax_column_count: true, record_delimiter: ['\r\n', '\n'] }) as string[][];
    expect(await collect([text])).toEqual(expected);
    const bytes = Buffer.from(text, 'utf8');
    for (const size of [1, 2, 3, 5, 7]) {
      const chunks: Buffer[] = [];
      for (let offset = 0; offset < bytes.length; offset += size) chunks.push(bytes.subarray(offset, offset + size));
      expect(await collect(chunks), `chunks of ${size} bytes`).toEqual(expected);
    }
    await expect(collect(['a,b"c\r\n'])).rejects.toThrow(/quote inside an unquoted cell/);
    await expect(collect(['"a"b,c\r\n'])).rejects.toThrow(/text after a closing quote/);
  });
});

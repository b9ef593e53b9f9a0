/**
 * The read pass with the mapping's reading choices: a long file keyed by two columns together, rows
 * left out by row filters (counted by filter and value), and a column converted to another unit, on
 * files of several read chunks (so the in-place reading of quote-free chunks is covered too). The
 * expectations come from a plain model of the rules, not from the reader.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { CsvMapping } from '@bioprocess/shared/timeseries';
import { CsvRejected, readAndStageCsv, type CsvPlan } from './staging-reader.ts';
import { READ_CHUNK_BYTES } from './record-reader.ts';

const folder = mkdtempSync(path.join(tmpdir(), 'staging-reader-long-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** The values staged per instrument, in file order. A staged row holds the instrument (UInt64) first and the value's double at byte 17. */
async function stage(lines: string[], mapping: Partial<CsvMapping>): Promise<{ plan: CsvPlan; values: Map<number, number[]> }> {
  const file = path.join(folder, `upload-${Math.random().toString(36).slice(2)}.csv`);
  writeFileSync(file, lines.join('\n'));
  const values = new Map<number, number[]>();
  const plan = await readAndStageCsv({
    filePath: file, mapping: { timestamp_mode: 'absolute', replace_existing: false, ...mapping } as CsvMapping, timeZone: 'UTC', timeZoneSource: 'organization',
    startMs: null, endMs: null, versionSeq: 3, maxRows: 10_000_000, batchPoints: 20_000, from: null, versioned: false,
  }, {
    async batch(chunks) {
      for (const chunk of chunks) {
        const view = new DataView(chunk.buffer, chunk.byteOffset, chunk.byteLength);
        const instrument = Number(view.getBigUint64(0, true));
        // One chunk per column entry: its rows are all one instrument's, of one size.
        let size = 0;
        for (const candidate of [25, 27, 33, 35]) {
          if (chunk.byteLength % candidate === 0 && Number(view.getBigUint64(candidate, true)) === instrument) {
            size = candidate;
            break;
          }
        }
        if (size === 0) size = chunk.byteLength;
        const list = values.get(instrument) ?? [];
        for (let offset = 0; offset < chunk.byteLength; offset += size) list.push(view.getFloat64(offset + 17, true));
        values.set(instrument, list);
      }
    },
    progress() {},
  });
  return { plan, values };
}

const time = (index: number) => new Date(Date.UTC(2024, 0, 1) + index * 60_000).toISOString().replace('T', ' ').slice(0, 19);

describe('reading choices of the mapping', () => {
  it('keys rows by well x channel and leaves out the filtered rows, across read chunks', async () => {
    const wells = ['A1', 'A2', 'B1', 'B2'];
    const channels = ['OD600', 'GFP'];
    const kinds = ['Sample', 'Sample', 'Blank', 'Control', 'Sample'];
    const lines = ['Time,Type,Well,Channel,Value'];
    const expected = new Map<string, number[]>();
    const leftOut = new Map<string, number>();
    let unselected = 0;
    const picked = new Map([['A1 · OD600', 1], ['B2 · GFP', 2]]);
    let index = 0;
    let bytes = 0;
    while (bytes < READ_CHUNK_BYTES * 2 + 1000) {
      for (const well of wells) {
        for (const channel of channels) {
          const kind = kinds[(index + wells.indexOf(well)) % kinds.length]!;
          const value = index * 10 + wells.indexOf(well) + channels.indexOf(channel) / 10;
          lines.push(`${time(index)},${kind},${well},${channel},${value}`);
          bytes += lines.at(-1)!.length + 1;
          const key = `${well} · ${channel}`;
          if (kind === 'Blank' || kind === 'Control') leftOut.set(kind, (leftOut.get(kind) ?? 0) + 1);
          else if (!picked.has(key)) unselected += 1;
          else expected.set(key, [...(expected.get(key) ?? []), value]);
        }
      }
      index += 1;
    }
    const { plan, values } = await stage(lines, {
      timestamp_column: 'Time', key_columns: ['Well', 'Channel'],
      row_filters: [{ column: 'Type', operator: 'not_equals', values: ['Sample'] }],
      columns: [...picked].map(([key, id]) => ({ column: 'Value', key, instrument_id: id, fill_forward: false })),
    });
    expect(plan.skippedFiltered).toBe((leftOut.get('Blank') ?? 0) + (leftOut.get('Control') ?? 0));
    expect(plan.filtered).toHaveLength(1);
    expect(plan.filtered![0]).toMatchObject({ column: 'Type', operator: 'not_equals', values: ['Sample'], rows: plan.skippedFiltered, other_rows: 0 });
    expect(new Map(plan.filtered![0]!.by_value.map((entry) => [entry.value, entry.rows]))).toEqual(leftOut);
    expect(plan.skippedUnselectedKey).toBe(unselected);
    expect(values.get(1)).toEqual(expected.get('A1 · OD600'));
    expect(values.get(2)).toEqual(expected.get('B2 · GFP'));
  });

  it('converts a column while reading, in the chunks read in place too', async () => {
    const lines = ['time,feed,temp'];
    const feeds: number[] = [];
    const temps: number[] = [];
    for (let index = 0, bytes = 0; bytes < READ_CHUNK_BYTES * 2 + 1000; index += 1) {
      const feed = (index % 997) + 0.5;
      const temp = 32 + (index % 180);
      feeds.push(Number((feed / 1000).toPrecision(15)));
      temps.push(Number((((temp - 32) * 5) / 9).toFixed(11)));
      lines.push(`${time(index)},${feed},${temp}`);
      bytes += lines.at(-1)!.length + 1;
    }
    const { plan, values } = await stage(lines, {
      timestamp_column: 'time', columns: [
        { column: 'feed', instrument_id: 1, fill_forward: false, convert_unit: { from: 'mL/h', to: 'L/h' } },
        { column: 'temp', instrument_id: 2, fill_forward: false, convert_unit: { from: 'fahrenheit', to: 'celsius' } },
      ],
    });
    expect(plan.points).toBe(feeds.length * 2);
    expect(values.get(1)).toEqual(feeds);
    expect(values.get(2)).toEqual(temps);
  });

  it('refuses a row filter or key column the header does not have', async () => {
    const lines = ['time,v,k', `${time(0)},1,a`];
    await expect(stage(lines, { timestamp_column: 'time', row_filters: [{ column: 'Type', operator: 'equals', values: ['x'] }], columns: [{ column: 'v', instrument_id: 1, fill_forward: false }] }))
      .rejects.toThrow(new CsvRejected("Row filter column 'Type' is not in the CSV header."));
    await expect(stage(lines, { timestamp_column: 'time', key_columns: ['k', 'Channel'], columns: [{ column: 'v', key: 'a · x', instrument_id: 1, fill_forward: false }] }))
      .rejects.toThrow(new CsvRejected("Key column 'Channel' is not in the CSV header."));
  });
});

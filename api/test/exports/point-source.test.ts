/**
 * The export's point reader against real ClickHouse: many time windows, RowBinary rows split across
 * network chunks and batches, rewritten and deleted keys. What it yields must equal what the read
 * endpoint answers, row for row and bit for bit; the CSV long written as bytes from ClickHouse's text (read
 * in the table's key order and merged into time order here) must equal, byte for byte, what the row path
 * writes from those readings, whatever order the section lists its instruments in. Readings carry
 * microseconds, quality codes and historical flags (some rewritten without them): each key gives its
 * newest version's.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '../support/test-context.ts';
import { readSeries, startWorker } from '../support/ingest.ts';
import type { IngestWorker } from '@bioprocess/ingest-worker';
import { csvLongText, planSection, sectionBatches } from '../../src/exports/point-source.ts';
import { elapsedText, IsoTimestamps, valueText } from '../../src/exports/cells.ts';
import type { ExportSection } from '../../src/exports/scope.ts';
import { fractionMicros } from '@bioprocess/shared/sub-millisecond-time';
import { createPlant, type Plant } from '../support/fixtures.ts';

const T0 = Date.UTC(2024, 5, 1);
const HOUR = 3_600_000;
const POINTS_PER_INSTRUMENT = 20_000;
const STEP_MS = 700;

describe('export point reader', () => {
  let ctx: TestContext;
  let worker: IngestWorker;
  let plant: Plant;
  beforeAll(async () => {
    ctx = await createTestContext();
    worker = startWorker(ctx);
    plant = await createPlant(ctx, 2);
    const post = async (data: unknown[]) => {
      const response = await ctx.request({ method: 'POST', url: '/api/v1/time-series-data/bulk?wait=true', token: plant.editor.token, payload: { data } });
      expect(response.statusCode, response.body).toBe(200);
    };
    const data = plant.instrumentIds.flatMap((instrument, column) => Array.from({ length: POINTS_PER_INSTRUMENT }, (_, index) => ({
      // Every third reading has microseconds (an epoch-milliseconds fraction), some a quality code or the historical flag.
      ts: T0 + index * STEP_MS + (index % 3 === 0 ? ((index * 7) % 1000) / 1000 : 0), instrument_id: instrument,
      value: index % 97 === 0 ? null : Math.sin(index + column) * 10 ** ((index % 40) - 20),
      ...(index % 11 === 0 ? { quality: (index * 104_729) % 2 ** 32 } : {}), ...(index % 13 === 0 ? { historical: true } : {}),
    })));
    await post(data);
    // Rewrites (the newest version wins) and a deletion (its keys disappear).
    await post(Array.from({ length: 1_000 }, (_, index) => ({ ts: T0 + index * 7 * STEP_MS, instrument_id: plant.instrumentIds[0], value: -index - 0.1 })));
    const deletion = await ctx.request({ method: 'DELETE', url: '/api/v1/time-series-data?wait=true', token: plant.editor.token,
      payload: { instrument_ids: [plant.instrumentIds[1]], start_time: new Date(T0 + HOUR).toISOString(), end_time: new Date(T0 + HOUR + 600_000).toISOString() } });
    expect(deletion.statusCode).toBe(200);
  }, 120_000);
  afterAll(async () => {
    await worker.close();
    await ctx.close();
  });

  it('yields, over many windows and chunk boundaries, exactly the readings the read endpoint answers', async () => {
    const endMs = T0 + POINTS_PER_INSTRUMENT * STEP_MS;
    const section: ExportSection = {
      unitOperation: null, startMs: T0, endMs, originMs: T0,
      instruments: plant.instrumentIds.map((id) => ({ id, name: `i${id}`, unit: null, title: `i${id}` })),
    };
    type Row = [ts: number, micros: number, instrument: number, value: number | null, quality: number | null, historical: boolean];
    const rows: Row[] = [];
    let batches = 0;
    for await (const batch of sectionBatches(ctx.deps.clickhouse, plant.organizationId, section, null, 5_000)) {
      batches += 1;
      for (let index = 0; index < batch.count; index += 1) {
        const value = batch.value[index]!;
        const quality = batch.quality[index]!;
        rows.push([batch.ts[index]!, batch.micros[index]!, batch.instrument[index]!, value === value ? value : null, quality === quality ? quality : null, batch.historical[index] === 1]);
      }
    }
    expect(batches).toBeGreaterThan(4);
    const expected: Row[] = [];
    for (const instrument of plant.instrumentIds) {
      const readings = await readSeries(ctx, plant.viewer.token, { instrument_id: instrument, start_time: new Date(T0).toISOString(), end_time: new Date(endMs).toISOString(), limit: 100_000 });
      for (const reading of readings) {
        expected.push([Date.parse(reading.ts), fractionMicros(reading.ts), instrument, reading.value, reading.quality ?? null, reading.historical ?? false]);
      }
    }
    expected.sort((x, y) => x[0] - y[0] || x[2] - y[2]);
    expect(expected.filter((row) => row[1] !== 0).length).toBeGreaterThan(1_000);
    expect(expected.filter((row) => row[4] !== null).length).toBeGreaterThan(1_000);
    expect(expected.filter((row) => row[5]).length).toBeGreaterThan(1_000);
    expect(rows.length).toBe(expected.length);
    expect(rows.length).toBe(2 * POINTS_PER_INSTRUMENT - Math.floor(600_000 / STEP_MS) - 1);
    rows.forEach((row, index) => {
      const wanted = expected[index]!;
      if (row.some((cell, at) => !Object.is(cell, wanted[at]))) {
        throw new Error(`row ${index}: ${JSON.stringify(row)} instead of ${JSON.stringify(wanted)}`);
      }
    });
  });

  it('downsamples over windows cut at multiples of the bucket width', async () => {
    const section: ExportSection = {
      unitOperation: null, startMs: T0, endMs: T0 + POINTS_PER_INSTRUMENT * STEP_MS, originMs: T0,
      instruments: [{ id: plant.instrumentIds[0]!, name: 'a', unit: null, title: 'a' }],
    };
    const buckets: number[] = [];
    for await (const batch of sectionBatches(ctx.deps.clickhouse, plant.organizationId, section, 600_000, 2_000)) {
      for (let index = 0; index < batch.count; index += 1) buckets.push(batch.ts[index]!);
    }
    // Every bucket once: no window split one.
    expect(buckets).toEqual([...new Set(buckets)].sort((x, y) => x - y));
    expect(buckets).toHaveLength(Math.ceil((POINTS_PER_INSTRUMENT * STEP_MS) / 600_000));
  });

  it.each([
    ['in id order', false],
    ['listed against id order (ties in time still go by id)', true],
  ])('CSV long written as bytes from ClickHouse\'s text equals, byte for byte and over many windows, the text written from the rows: instruments %s', async (_name, reversed) => {
    const endMs = T0 + POINTS_PER_INSTRUMENT * STEP_MS;
    const listed = reversed ? [...plant.instrumentIds].reverse() : plant.instrumentIds;
    const section: ExportSection = {
      unitOperation: null, startMs: T0, endMs, originMs: T0 - 1_500,
      instruments: listed.map((id) => ({ id, name: `i${id}`, unit: null, title: `i${id}` })),
    };
    const middles = section.instruments.map((instrument) => `i${instrument.id},${instrument.id},,`);
    const plan = await planSection(ctx.deps.clickhouse, plant.organizationId, section, 1, 3_000);
    expect(plan.windows.length).toBeGreaterThan(2); // cut at hours: the readings span four
    const chunks: Buffer[] = [];
    let counted = 0;
    for await (const chunk of csvLongText(ctx.deps.clickhouse, plant.organizationId, section, plan, middles.map((middle) => Buffer.from(middle)), (rows) => { counted += rows; })) {
      chunks.push(chunk);
    }
    const stamps = new IsoTimestamps();
    const position = new Map(section.instruments.map((instrument, index) => [instrument.id, index]));
    let expected = '';
    let rows = 0;
    for await (const batch of sectionBatches(ctx.deps.clickhouse, plant.organizationId, section, null, 5_000)) {
      for (let index = 0; index < batch.count; index += 1) {
        const ms = batch.ts[index]!;
        const micros = batch.micros[index]!;
        const quality = batch.quality[index]!;
        expected += `${stamps.format(ms, micros)},${elapsedText(ms, section.originMs, micros)},${middles[position.get(batch.instrument[index]!)!]}${valueText(batch.value[index]!)}`
          + `,${quality === quality ? quality : ''},${batch.historical[index] === 1 ? 'true' : ''}\r\n`;
      }
      rows += batch.count;
    }
    const text = Buffer.concat(chunks).toString('utf8');
    expect(counted).toBe(rows);
    expect(text.length).toBe(expected.length);
    if (text !== expected) {
      const lines = text.split('\r\n');
      const wanted = expected.split('\r\n');
      const first = lines.findIndex((line, index) => line !== wanted[index]);
      throw new Error(`line ${first}: ${lines[first]} instead of ${wanted[first]}`);
    }
  });
});

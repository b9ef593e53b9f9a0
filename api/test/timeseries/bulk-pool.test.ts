/**
 * The parsing threads: while none is ready, a post of up to a megabyte is parsed in place and a thread
 * starts; once one is ready, posts above the in-place size go to it. Both give what prepareBulkPost gives.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { createBulkPool } from '../../src/timeseries/bulk-pool.ts';
import { prepareBulkPost, type BulkPreparation } from '../../src/timeseries/bulk-prepare.ts';

const T0 = Date.UTC(2024, 0, 1);

/** A 500-point post of 20 instruments (about 34 KB: above the size always parsed in place). */
function feedBody(): Uint8Array {
  const points = Array.from({ length: 500 }, (_, index) => `{"measured_at":${T0 + Math.floor(index / 20) * 1000},"instrument_id":${1 + (index % 20)},"float_value":${index / 4}}`);
  return new Uint8Array(Buffer.from(`{"data":[${points.join(',')}]}`));
}

/** The parts of a preparation that can be compared, as plain values. */
function comparable(result: BulkPreparation) {
  if (!result.ok) return result;
  return { ...result, readings: Buffer.from(result.readings).toString(), chunks: result.chunks.map((chunk) => Buffer.from(chunk).toString('hex')) };
}

describe('bulk parsing threads', () => {
  const pool = createBulkPool(1);
  afterAll(async () => { await pool.close(); });

  it('parses in place while no thread is ready, starts one, then hands posts to it', async () => {
    const body = feedBody();
    const expected = comparable(prepareBulkPost(body, 7, 42, true));
    expect(pool.readyThreads()).toBe(0);
    // No thread to wait for: answered in place, before the thread it started has loaded.
    expect(comparable(await pool.prepare({ body: body.slice(), organizationId: 7, versionSeq: 42, echo: true }))).toEqual(expected);
    expect(pool.readyThreads()).toBe(0);
    const deadline = Date.now() + 30_000;
    while (pool.readyThreads() === 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(pool.readyThreads()).toBe(1);
    expect(comparable(await pool.prepare({ body: body.slice(), organizationId: 7, versionSeq: 42, echo: true }))).toEqual(expected);
    const minimal = await pool.prepare({ body: body.slice(), organizationId: 7, versionSeq: 42, echo: false });
    expect(minimal.ok && minimal.readings.length).toBe(0);
  });
});

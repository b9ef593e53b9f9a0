/**
 * The store-and-forward buffer on a real disk: order across segments, a batch fixed before it is sent
 * comes back whole under the same key after a restart (so the api's idempotency answers a replay), a
 * torn record left by a crash mid-append is cut off, and an append waits while the buffer is full.
 */
import { appendFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StoreForward, type StoredReading } from '../src/connectors/store-forward.ts';

const reading = (index: number): StoredReading => [1, 1_700_000_000_000 + index * 1000, index, null, 0];
const dirs: string[] = [];
function freshDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bp-store-forward-'));
  dirs.push(dir);
  return dir;
}
afterEach(() => { for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true }); });

describe('store and forward', () => {
  it('hands out batches in append order and replays an unacknowledged batch whole under the same key', async () => {
    const dir = freshDir();
    const store = await StoreForward.open(dir, 1024 ** 3);
    for (let index = 0; index < 10; index += 1) await store.append([reading(index * 2), reading(index * 2 + 1)]);
    const first = await store.nextBatch(5);
    // Whole records only: two records of two readings fit in five.
    expect(first!.readings.map((item) => item[2])).toEqual([0, 1, 2, 3]);
    // Appends after the batch was fixed do not join it, before or after a restart.
    await store.append([reading(100)]);
    await store.close();

    const reopened = await StoreForward.open(dir, 1024 ** 3);
    const replay = await reopened.nextBatch(1000);
    expect(replay).toEqual(first);
    await reopened.commit();
    const rest = await reopened.nextBatch(1000);
    expect(rest!.readings.map((item) => item[2])).toEqual([...Array.from({ length: 16 }, (_, index) => index + 4), 100]);
    expect(rest!.key).not.toBe(first!.key);
    await reopened.commit();
    expect(await reopened.nextBatch(1000)).toBeNull();
    expect(reopened.bufferedBytes()).toBe(0);
    await reopened.close();
  });

  it('cuts a torn record off the end and keeps every whole one', async () => {
    const dir = freshDir();
    const store = await StoreForward.open(dir, 1024 ** 3);
    await store.append([reading(1)]);
    await store.append([reading(2)]);
    await store.close();
    const segment = readdirSync(dir).find((name) => name.startsWith('seg-'))!;
    // A crash mid-append: a header that promises more bytes than follow.
    appendFileSync(path.join(dir, segment), Buffer.from([200, 0, 0, 0, 1, 2, 3, 4, 91, 91]));
    const reopened = await StoreForward.open(dir, 1024 ** 3);
    await reopened.append([reading(3)]);
    const batch = await reopened.nextBatch(1000);
    expect(batch!.readings.map((item) => item[2])).toEqual([1, 2, 3]);
    await reopened.close();
  });

  it('holds an append while the unsent bytes would pass the limit, and lets it in once a batch is accepted', async () => {
    const dir = freshDir();
    const store = await StoreForward.open(dir, 1024 ** 2);
    await store.append([reading(0)]);
    store.limitBytes = store.bufferedBytes();
    let stored = false;
    const waiting = store.append([reading(1)]).then(() => { stored = true; });
    await store.waitForData(50);
    expect(stored).toBe(false);
    expect(store.isFull(1)).toBe(true);
    await store.nextBatch(1000);
    await store.commit();
    await waiting;
    expect(stored).toBe(true);
    expect((await store.nextBatch(1000))!.readings.map((item) => item[2])).toEqual([1]);
    await store.close();
  });
});

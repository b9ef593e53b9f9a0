import { describe, expect, it } from 'vitest';
import { ByteBudget } from '../../src/timeseries/bulk-admission.ts';

const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('ByteBudget', () => {
  it('grants at once while bytes remain, then in arrival order as they come back', async () => {
    const budget = new ByteBudget(100);
    const first = await budget.take(60);
    const order: string[] = [];
    const second = budget.take(50).then((release) => { order.push('second'); return release; });
    const third = budget.take(10).then((release) => { order.push('third'); return release; });
    await settled();
    expect(order).toEqual([]); // the third fits, but does not overtake the second
    first();
    await settled();
    expect(order).toEqual(['second', 'third']);
    (await second)();
    (await third)();
    await budget.take(100); // everything came back
  });

  it('lets a request larger than the whole budget run alone, and counts a release once', async () => {
    const budget = new ByteBudget(100);
    const small = await budget.take(1);
    let huge = false;
    const hugeRelease = budget.take(10_000).then((release) => { huge = true; return release; });
    await settled();
    expect(huge).toBe(false);
    small();
    small();
    await settled();
    expect(huge).toBe(true);
    let after = false;
    const next = budget.take(1).then(() => { after = true; });
    await settled();
    expect(after).toBe(false); // a second release of `small` gave nothing back
    (await hugeRelease)();
    await next;
    expect(after).toBe(true);
  });
});

describe('ByteBudget partial give-back', () => {
  it('gives back all but what a request keeps, then the rest once', async () => {
    const budget = new ByteBudget(100);
    const holder = await budget.take(80);
    let second = false;
    const secondRelease = budget.take(70).then((release) => { second = true; return release; });
    holder(40);
    await settled();
    expect(second).toBe(false); // 60 free
    holder(30);
    await settled();
    expect(second).toBe(true); // 70 free
    holder(50); // keeping more than it holds gives nothing back, and takes nothing
    expect(budget.free()).toBe(0);
    holder();
    holder();
    expect(budget.free()).toBe(30);
    (await secondRelease)();
    expect(budget.free()).toBe(100);
  });
});

describe('ByteBudget shares', () => {
  it('keeps one owner within its share while another owner goes ahead', async () => {
    const budget = new ByteBudget(100, 40);
    const first = await budget.take(1_000, 'a'); // larger than the share: takes the share
    expect(budget.held('a')).toBe(40);
    let second = false;
    const secondRelease = budget.take(10, 'a').then((release) => { second = true; return release; });
    await settled();
    expect(second).toBe(false); // waits on its own owner
    const other = await budget.take(30, 'b'); // not held up by the owner waiting on its share
    expect(budget.held('b')).toBe(30);
    first();
    await settled();
    expect(second).toBe(true);
    (await secondRelease)();
    other();
    expect(budget.free()).toBe(100);
  });

  it('drops a waiting request whose signal aborts, and lets those behind it in', async () => {
    const budget = new ByteBudget(100, 100);
    const holder = await budget.take(60, 'a');
    const leaving = new AbortController();
    const left = budget.take(80, 'b', leaving.signal);
    let after = false;
    const next = budget.take(30, 'c').then((release) => { after = true; return release; });
    await settled();
    expect(after).toBe(false); // queued behind the larger request
    leaving.abort(new Error('gone'));
    await expect(left).rejects.toThrow('gone');
    await settled();
    expect(after).toBe(true);
    (await next)();
    holder();
    expect(budget.free()).toBe(100);
  });
});

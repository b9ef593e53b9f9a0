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

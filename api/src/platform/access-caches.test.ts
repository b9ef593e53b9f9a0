import { describe, expect, it } from 'vitest';
import { ChangeNotifiedCache } from './access-caches.ts';

describe('ChangeNotifiedCache', () => {
  it('drops the answer of a lookup that was under way when a change was heard', () => {
    const cache = new ChangeNotifiedCache<string, number>(60_000, () => true);
    const before = cache.stamp();
    cache.forget('other'); // any change heard meanwhile: the answer may predate it
    cache.set('key', 1, before);
    expect(cache.get('key')).toBeUndefined();
    cache.set('key', 2, cache.stamp());
    expect(cache.get('key')).toBe(2);
    cache.forget('key');
    expect(cache.get('key')).toBeUndefined();
  });

  it('serves and stores nothing while changes are not heard, and nothing past its time', () => {
    let serving = false;
    const cache = new ChangeNotifiedCache<string, number>(60_000, () => serving);
    cache.set('key', 1, cache.stamp());
    serving = true;
    expect(cache.get('key')).toBeUndefined();
    cache.set('key', 1, cache.stamp());
    expect(cache.get('key')).toBe(1);
    serving = false;
    expect(cache.get('key')).toBeUndefined();

    const expired = new ChangeNotifiedCache<string, number>(-1, () => true);
    expired.set('key', 1, expired.stamp());
    expect(expired.get('key')).toBeUndefined();
  });
});

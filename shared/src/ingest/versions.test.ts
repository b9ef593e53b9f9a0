import { describe, expect, it } from 'vitest';
import { nextRequestVersion, pointVersion, tombstoneVersion } from '@bioprocess/shared/ingest/versions';

const asBig = (text: string) => BigInt(text);

describe('row versions', () => {
  it('orders a request above every earlier one, with its tombstones just below its own points', () => {
    expect(tombstoneVersion(42)).toBe('420000000000');
    expect(pointVersion(42, 0)).toBe('420000000001');
    expect(pointVersion(42, 9_999_999_998)).toBe('429999999999');
    expect(asBig(pointVersion(41, 9_999_999_998))).toBeLessThan(asBig(tombstoneVersion(42)));
    expect(asBig(tombstoneVersion(42))).toBeLessThan(asBig(pointVersion(42, 0)));
    expect(asBig(pointVersion(42, 5))).toBeLessThan(asBig(nextRequestVersion(42)));
    // Fits ClickHouse's UInt64 for any sequence value up to 1.8e9 requests.
    expect(asBig(pointVersion(1_800_000_000, 9_999_999_998))).toBeLessThan(2n ** 64n);
  });
});

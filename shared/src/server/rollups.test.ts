/**
 * Whether a flush's writes could hold the same key (keysMayOverlap): it decides between composing
 * rollups and recomputing them, so it must find every pair of writes sharing an instrument and a
 * moment, and no other.
 */
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../seeded-random.ts';
import type { RangeOnInstruments } from './points-store.ts';
import { keysMayOverlap } from './rollups.ts';

/** The definition: some two ranges of one organisation share an instrument and overlap in time. */
const overlapByPairs = (ranges: readonly RangeOnInstruments[]) => ranges.some((range, index) => ranges.slice(index + 1).some((other) =>
  other.organizationId === range.organizationId && other.startMs <= range.endMs && range.startMs <= other.endMs
  && other.instrumentIds.some((id) => range.instrumentIds.includes(id))));

describe('keysMayOverlap', () => {
  it('finds exactly the flushes where two writes share an instrument and a moment', () => {
    const random = seededRandom(19);
    const pick = (count: number) => Math.floor(random() * count);
    let overlapping = 0;
    for (let trial = 0; trial < 2_000; trial += 1) {
      const ranges = Array.from({ length: 1 + pick(12) }, () => {
        const startMs = pick(60) * 1_000;
        return {
          organizationId: 1 + pick(2),
          instrumentIds: [...new Set(Array.from({ length: 1 + pick(4) }, () => 1 + pick(20)))],
          startMs, endMs: startMs + pick(10) * 1_000,
        };
      });
      const expected = overlapByPairs(ranges);
      if (expected) overlapping += 1;
      expect(keysMayOverlap(ranges), JSON.stringify(ranges)).toBe(expected);
    }
    // Both answers were tried many times.
    expect(overlapping).toBeGreaterThan(200);
    expect(overlapping).toBeLessThan(1_800);
  });

  it('does not count a write against itself, and tells touching ranges from adjacent ones', () => {
    const feed = (startMs: number, endMs: number, instrumentIds = [1, 2]) => ({ organizationId: 1, instrumentIds, startMs, endMs });
    expect(keysMayOverlap([feed(0, 4_000)])).toBe(false);
    expect(keysMayOverlap([feed(0, 4_000), feed(5_000, 9_000)])).toBe(false);
    expect(keysMayOverlap([feed(0, 5_000), feed(5_000, 9_000)])).toBe(true);
    expect(keysMayOverlap([feed(0, 5_000), feed(0, 5_000, [3])])).toBe(false);
    expect(keysMayOverlap([feed(0, 5_000), { ...feed(0, 5_000), organizationId: 2 }])).toBe(false);
  });
});

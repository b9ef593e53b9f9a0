import { describe, expect, it } from 'vitest';
import { createProcessSimulation } from './process-simulation.ts';
import { SCROLL_OFFSET_PX, scrollTargetTop } from './smooth-scroll.ts';

describe('smooth scroll target', () => {
  it('stops 80px above the section and never above the page', () => {
    expect(SCROLL_OFFSET_PX).toBe(80);
    expect(scrollTargetTop(500, 100)).toBe(520);
    expect(scrollTargetTop(20, 0)).toBe(0);
  });
});

describe('landing process simulation', () => {
  it('is deterministic and stays in a plausible fermentation range', () => {
    const first = createProcessSimulation(7);
    const second = createProcessSimulation(7);
    for (let i = 0; i < 500; i += 1) {
      const sample = first();
      expect(second()).toEqual(sample);
      expect(sample.temperature).toBeGreaterThan(36);
      expect(sample.temperature).toBeLessThan(38);
      expect(sample.pH).toBeGreaterThan(6.6);
      expect(sample.pH).toBeLessThan(7.4);
      expect(sample.feedRate).toBeGreaterThanOrEqual(0);
      expect(sample.feedRate).toBeLessThanOrEqual(5);
    }
  });
});

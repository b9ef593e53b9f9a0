import { describe, expect, it } from 'vitest';
import { elapsedUnitFor, formatElapsed } from './elapsed-time.ts';

describe('elapsed time', () => {
  it('counts a span in the unit that fits it', () => {
    expect(elapsedUnitFor(90)).toBe('minutes');
    expect(elapsedUnitFor(180)).toBe('minutes');
    expect(elapsedUnitFor(181)).toBe('hours');
    // A 37-hour run was once labelled in minutes (0 ... 2,220).
    expect(elapsedUnitFor(37 * 60)).toBe('hours');
    expect(elapsedUnitFor(5 * 24 * 60)).toBe('hours');
    expect(elapsedUnitFor(12 * 24 * 60)).toBe('days');
  });

  it('writes one elapsed moment in the largest units that fit', () => {
    expect(formatElapsed(0)).toBe('0 min');
    expect(formatElapsed(45.5)).toBe('45.5 min');
    // The comment label that read 'min 363.3'.
    expect(formatElapsed(363.3)).toBe('6 h 03 min');
    expect(formatElapsed(37 * 60)).toBe('37 h 00 min');
    expect(formatElapsed(2 * 1440 + 4 * 60 + 10)).toBe('2 d 04 h 10 min');
    expect(formatElapsed(-90)).toBe('-1 h 30 min');
    expect(formatElapsed(Number.NaN)).toBe('-');
  });
});

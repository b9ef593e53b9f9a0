import { describe, expect, it } from 'vitest';
import { formatTimeHeading, formatTimeTick, timeAxisTitle, timeScaleUnit, timeTicks } from './time-scale.ts';

describe('time scale', () => {
  it('counts minutes up to three hours, hours up to five days, days beyond', () => {
    expect(timeScaleUnit(120)).toBe('minutes');
    expect(timeScaleUnit(37 * 60)).toBe('hours');
    expect(timeScaleUnit(48 * 60)).toBe('hours');
    expect(timeScaleUnit(10.8 * 24 * 60)).toBe('days');
    expect(timeScaleUnit(45 * 24 * 60)).toBe('days');
    expect(timeAxisTitle('hours')).toBe('Time since unit operation start (hours)');
  });

  it('labels a 10.8-day operation in whole hours, at most ten ticks', () => {
    const ticks = timeTicks(0, 15_552, 'hours', 10);
    expect(ticks.length).toBeLessThanOrEqual(10);
    expect(ticks.every((t) => t % 60 === 0)).toBe(true);
    expect(ticks.map((t) => formatTimeTick(t, 'hours')).slice(0, 3)).toEqual(['0 h', '48 h', '96 h']);
  });

  it('keeps natural minute steps for short operations', () => {
    expect(timeTicks(0, 1440, 'minutes', 10)).toEqual([0, 180, 360, 540, 720, 900, 1080, 1260, 1440]);
    expect(formatTimeTick(90, 'minutes')).toBe('90');
  });

  it('starts ticks at a multiple of the step inside a zoomed range', () => {
    expect(timeTicks(125, 200, 'minutes', 10)).toEqual([130, 140, 150, 160, 170, 180, 190, 200]);
  });

  it('labels days with a d', () => {
    expect(formatTimeTick(2880, 'days')).toBe('2 d');
    expect(formatTimeTick(720, 'days')).toBe('0.5 d');
  });

  it('gives the moment as comment labels write it and the exact minute in the tooltip heading', () => {
    expect(formatTimeHeading(90, 'minutes')).toBe('Minute 90');
    expect(formatTimeHeading(2220, 'hours')).toBe('37 h 00 min (minute 2220)');
    expect(formatTimeHeading(7812, 'days')).toBe('5 d 10 h 12 min (minute 7812)');
  });
});

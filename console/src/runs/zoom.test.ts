import { describe, expect, it } from 'vitest';
import { clampZoom, formatZoom, ZOOM_DEFAULT, zoomForWheel, zoomIn, zoomOut } from './zoom.ts';

describe('zoom', () => {
  it('steps by 10 % between 30 % and 200 %', () => {
    let zoom = ZOOM_DEFAULT;
    for (let step = 0; step < 20; step += 1) zoom = zoomIn(zoom);
    expect(zoom).toBe(2);
    for (let step = 0; step < 30; step += 1) zoom = zoomOut(zoom);
    expect(zoom).toBe(0.3);
    expect(formatZoom(zoom)).toBe('30%');
  });
  it('never drifts off whole percents', () => {
    expect(zoomIn(zoomIn(zoomIn(1)))).toBe(1.3);
    expect(clampZoom(0.7000000001)).toBe(0.7);
  });
  it('zooms in on a wheel turn away and out towards the user', () => {
    expect(zoomForWheel(1, -100)).toBe(1.1);
    expect(zoomForWheel(1, 100)).toBe(0.9);
    expect(zoomForWheel(1, 0)).toBe(1);
  });
});

import { describe, expect, it } from 'vitest';
import { errorMessageOf } from '../app/UnexpectedErrorPage.tsx';
import { DIALOG_MAX_HEIGHT, DIALOG_MAX_WIDTH_PX, dialogStyle } from './dialogs/dialog-size.ts';
import { TOOLTIP_OPEN_DELAY_MS, TOOLTIP_SKIP_DELAY_MS, tooltipOpenDelay } from './AppTooltip.tsx';

describe('dialog sizes', () => {
  it('grow from sm to 7xl but never beyond 720px wide or 90vh high', () => {
    expect(dialogStyle('sm').width).toBe('384px');
    expect(dialogStyle('md').width).toBe('448px');
    expect(dialogStyle('lg').width).toBe('512px');
    expect(dialogStyle('2xl').width).toBe('672px');
    for (const size of ['3xl', '4xl', '5xl', '6xl', '7xl'] as const) expect(dialogStyle(size).width).toBe(`${DIALOG_MAX_WIDTH_PX}px`);
    expect(DIALOG_MAX_WIDTH_PX).toBe(720);
    expect(dialogStyle('7xl').maxHeight).toBe(DIALOG_MAX_HEIGHT);
    expect(DIALOG_MAX_HEIGHT).toBe('90vh');
  });
});

describe('tooltip timing', () => {
  it('opens after 700 ms, or at once within 300 ms of the previous tooltip closing', () => {
    expect(TOOLTIP_OPEN_DELAY_MS).toBe(700);
    expect(TOOLTIP_SKIP_DELAY_MS).toBe(300);
    expect(tooltipOpenDelay(10_000, Number.NEGATIVE_INFINITY)).toBe(700);
    expect(tooltipOpenDelay(10_000, 9_800)).toBe(0);
    expect(tooltipOpenDelay(10_000, 9_700)).toBe(700);
  });
});

describe('unexpected error screen', () => {
  it('describes any thrown value', () => {
    expect(errorMessageOf(new Error('Cannot read properties of undefined'))).toBe('Cannot read properties of undefined');
    expect(errorMessageOf('plain text')).toBe('plain text');
    expect(errorMessageOf({})).toBe('Unknown error');
  });
});

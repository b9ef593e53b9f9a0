/** Keyboard resizing of the compare panels: arrows move the divider by 10 % within 16-40 %. */
export const PANEL_LIMITS = { defaultPercent: 28, minPercent: 16, maxPercent: 40, rightMinPercent: 40, keyboardStepPercent: 10 } as const;

/** The next layout for an arrow key on the divider, or null for keys the library handles itself. */
export function nextPanelLayout(layout: Record<string, number>, key: string, leftId: string, rightId: string): Record<string, number> | null {
  const left = layout[leftId];
  if (left === undefined) return null;
  let next: number;
  if (key === 'ArrowLeft') next = left - PANEL_LIMITS.keyboardStepPercent;
  else if (key === 'ArrowRight') next = left + PANEL_LIMITS.keyboardStepPercent;
  else return null;
  const upper = Math.min(PANEL_LIMITS.maxPercent, 100 - PANEL_LIMITS.rightMinPercent);
  next = Math.max(PANEL_LIMITS.minPercent, Math.min(upper, next));
  return { [leftId]: next, [rightId]: 100 - next };
}

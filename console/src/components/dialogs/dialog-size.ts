/** Dialog sizes sm..7xl, never wider than 720px nor taller than 90vh. */
export const DIALOG_MAX_WIDTH_PX = 720;
export const DIALOG_MAX_HEIGHT = '90vh';

export const DIALOG_WIDTHS = {
  sm: 384,
  md: 448,
  lg: 512,
  xl: 576,
  '2xl': 672,
  '3xl': 768,
  '4xl': 896,
  '5xl': 1024,
  '6xl': 1152,
  '7xl': 1280,
} as const;

export type DialogSize = keyof typeof DIALOG_WIDTHS;

export function dialogStyle(size: DialogSize): { width: string; maxWidth: string; maxHeight: string } {
  return {
    width: `${Math.min(DIALOG_WIDTHS[size], DIALOG_MAX_WIDTH_PX)}px`,
    maxWidth: 'calc(100vw - 32px)',
    maxHeight: DIALOG_MAX_HEIGHT,
  };
}

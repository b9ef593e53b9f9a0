/** The run-detail flow zoom: 30 % to 200 % in steps of 10 %, starting at 100 %. */
export const ZOOM_MIN = 0.3;
export const ZOOM_MAX = 2;
export const ZOOM_STEP = 0.1;
export const ZOOM_DEFAULT = 1;

/** Rounded to whole percent so repeated steps never drift (0.1 is not exact in binary). */
export function clampZoom(zoom: number): number {
  const rounded = Math.round(zoom * 100) / 100;
  return Math.min(ZOOM_MAX, Math.max(ZOOM_MIN, rounded));
}

export const zoomIn = (zoom: number) => clampZoom(zoom + ZOOM_STEP);
export const zoomOut = (zoom: number) => clampZoom(zoom - ZOOM_STEP);

/** A wheel turn away from the user (negative deltaY) zooms in, as in maps and editors. */
export function zoomForWheel(zoom: number, deltaY: number): number {
  if (deltaY === 0) return zoom;
  return deltaY < 0 ? zoomIn(zoom) : zoomOut(zoom);
}

export function formatZoom(zoom: number): string {
  return `${Math.round(zoom * 100)}%`;
}

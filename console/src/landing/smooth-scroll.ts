/** In-page anchors scroll smoothly and stop 80px above the section, below the fixed navigation bar. */
export const SCROLL_OFFSET_PX = 80;

export function scrollTargetTop(elementTop: number, currentScroll: number, offset = SCROLL_OFFSET_PX): number {
  return Math.max(0, elementTop + currentScroll - offset);
}

export function scrollToSection(id: string): boolean {
  const element = document.getElementById(id);
  if (!element) return false;
  window.scrollTo({ top: scrollTargetTop(element.getBoundingClientRect().top, window.scrollY), behavior: 'smooth' });
  return true;
}

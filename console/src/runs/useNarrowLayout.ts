/** True below the narrow-layout breakpoint (spec/02 §9: 1200 px), following window resizes. */
import { useSyncExternalStore } from 'react';

export const NARROW_LAYOUT_BREAKPOINT_PX = 1200;
const QUERY = `(max-width: ${NARROW_LAYOUT_BREAKPOINT_PX - 1}px)`;

function subscribe(onChange: () => void): () => void {
  const media = window.matchMedia(QUERY);
  media.addEventListener('change', onChange);
  return () => media.removeEventListener('change', onChange);
}

export function useNarrowLayout(): boolean {
  return useSyncExternalStore(subscribe, () => window.matchMedia(QUERY).matches, () => false);
}

/** True below the width where the sidebar gives way to a menu button and a drawer, following resizes. */
import { useSyncExternalStore } from 'react';

export const COMPACT_SHELL_BREAKPOINT_PX = 768;
const QUERY = `(max-width: ${COMPACT_SHELL_BREAKPOINT_PX - 1}px)`;

function subscribe(onChange: () => void): () => void {
  const media = window.matchMedia(QUERY);
  media.addEventListener('change', onChange);
  return () => media.removeEventListener('change', onChange);
}

export function useCompactShell(): boolean {
  return useSyncExternalStore(subscribe, () => window.matchMedia(QUERY).matches, () => false);
}

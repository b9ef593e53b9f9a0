/** Whether the window is narrower than a breakpoint, following resizes (one subscription per query). */
import { useCallback, useSyncExternalStore } from 'react';

export function useNarrowerThan(breakpointPx: number): boolean {
  const query = `(max-width: ${breakpointPx - 1}px)`;
  const subscribe = useCallback((onChange: () => void) => {
    const media = window.matchMedia(query);
    media.addEventListener('change', onChange);
    return () => media.removeEventListener('change', onChange);
  }, [query]);
  return useSyncExternalStore(subscribe, () => window.matchMedia(query).matches, () => false);
}

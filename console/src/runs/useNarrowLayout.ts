/** True below the width where the runs overview stacks its panels (1200 px). */
import { useNarrowerThan } from '../components/useMediaQuery.ts';

export const NARROW_LAYOUT_BREAKPOINT_PX = 1200;

export function useNarrowLayout(): boolean {
  return useNarrowerThan(NARROW_LAYOUT_BREAKPOINT_PX);
}

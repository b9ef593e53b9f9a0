/** True below the width where the sidebar gives way to a menu button and a drawer. */
import { useNarrowerThan } from '../components/useMediaQuery.ts';

export const COMPACT_SHELL_BREAKPOINT_PX = 768;

export function useCompactShell(): boolean {
  return useNarrowerThan(COMPACT_SHELL_BREAKPOINT_PX);
}

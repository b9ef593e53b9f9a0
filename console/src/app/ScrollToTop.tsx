/** Legal pages open at the top, wherever the previous page was scrolled to. */
import { useEffect } from 'react';
import { useLocation } from 'react-router-dom';

export function useScrollToTopOnOpen(): void {
  const { pathname } = useLocation();
  useEffect(() => {
    window.scrollTo({ top: 0, left: 0, behavior: 'instant' });
  }, [pathname]);
}

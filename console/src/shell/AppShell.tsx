/**
 * The signed-in layout: the sidebar on the left and the page on the right; on narrow screens (below
 * 768 px) a top bar with a menu button, and the same sidebar in a drawer that closes on navigation.
 */
import { useEffect, useState, type ReactNode } from 'react';
import { Link, useLocation } from 'react-router-dom';
import { Button, Drawer, Position } from '@blueprintjs/core';
import { BrandMark } from '../components/BrandMark.tsx';
import { Sidebar } from './Sidebar.tsx';
import { useCompactShell } from './useCompactShell.ts';
import { useDisplayTimeZone } from '../dates/use-display-time-zone.ts';

export function AppShell({ children }: { children: ReactNode }) {
  const compact = useCompactShell();
  const { pathname } = useLocation();
  const [menuOpen, setMenuOpen] = useState(false);
  const timeZone = useDisplayTimeZone();
  useEffect(() => setMenuOpen(false), [pathname, compact]);

  // One tree for both widths, with the page at the same place: crossing the breakpoint (a window
  // resized, a tablet turned) swaps the navigation only and never remounts the page and its state.
  return (
    <div className={compact ? 'app-shell app-shell-compact' : 'app-shell'}>
      {compact ? (
        <header className="app-topbar">
          <Button icon="menu" variant="minimal" size="large" aria-label="Open navigation" aria-expanded={menuOpen}
            onClick={() => setMenuOpen(true)} data-testid="navigation-menu-button" />
          <Link to="/dashboard" className="app-topbar-brand"><BrandMark /></Link>
        </header>
      ) : <Sidebar />}
      {compact ? (
        <Drawer isOpen={menuOpen} onClose={() => setMenuOpen(false)} position={Position.LEFT} size="288px"
          className="app-navigation-drawer">
          <Sidebar inDrawer />
        </Drawer>
      ) : null}
      {/* A new display zone (read at sign-in, or changed in the settings) draws the page again in it. */}
      <main className="app-main" id="main-content" key={timeZone} data-time-zone={timeZone}>{children}</main>
    </div>
  );
}

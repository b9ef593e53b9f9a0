/** The signed-in layout: the sidebar on the left, the page on the right. */
import type { ReactNode } from 'react';
import { Sidebar } from './Sidebar.tsx';

export function AppShell({ children }: { children: ReactNode }) {
  return (
    <div className="app-shell">
      <Sidebar />
      <main className="app-main" id="main-content">{children}</main>
    </div>
  );
}

/** Sidebar entries and the rule that picks the active one. */
import type { IconName } from '@blueprintjs/core';

export type SidebarEntryId = 'dashboard' | 'runs' | 'analyze' | 'alerts' | 'data' | 'integrations';

export interface SidebarEntry {
  id: SidebarEntryId;
  label: string;
  path: string;
  icon: IconName;
  /** Coming-soon entries open a modal with this text instead of navigating. */
  comingSoon?: { description: string };
  children?: { label: string; path: string; icon: IconName }[];
}

export const SIDEBAR_ENTRIES: readonly SidebarEntry[] = [
  { id: 'dashboard', label: 'Dashboard', path: '/dashboard', icon: 'dashboard' },
  {
    id: 'runs', label: 'Runs', path: '/runs', icon: 'lab-test',
    children: [
      { label: 'Overview', path: '/runs/overview', icon: 'th-list' },
      { label: 'Compare', path: '/runs/compare', icon: 'comparison' },
    ],
  },
  { id: 'analyze', label: 'Analyze', path: '/analyze', icon: 'chart' },
  { id: 'alerts', label: 'Alerts', path: '/alerts', icon: 'notifications' },
  { id: 'data', label: 'Data', path: '/data', icon: 'database' },
  { id: 'integrations', label: 'Integrations', path: '/integrations', icon: 'data-connection' },
];

function hasPrefix(pathname: string, prefix: string): boolean {
  return pathname === prefix || pathname.startsWith(`${prefix}/`);
}

/** Active by path prefix for /runs, /data, /analyze, /integrations (and /settings, which has no entry); /dashboard by exact match. */
export function isEntryActive(entry: Pick<SidebarEntry, 'id' | 'path'>, pathname: string): boolean {
  if (entry.id === 'dashboard') return pathname === entry.path;
  return hasPrefix(pathname, entry.path);
}

export function isSubLinkActive(path: string, pathname: string): boolean {
  return pathname === path;
}

export function isSettingsActive(pathname: string): boolean {
  return hasPrefix(pathname, '/settings');
}

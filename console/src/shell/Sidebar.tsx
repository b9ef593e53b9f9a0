/** The 16rem sidebar: brand, navigation entries (with coming-soon modals) and the user panel; fixed on wide screens, inside a drawer on narrow ones. */
import { Icon, Menu, MenuItem, Tag } from '@blueprintjs/core';
import { useState } from 'react';
import { Link, useLocation, useNavigate } from 'react-router-dom';
import { BrandMark } from '../components/BrandMark.tsx';
import { ComingSoonDialog } from './ComingSoonDialog.tsx';
import { isEntryActive, isSubLinkActive, SIDEBAR_ENTRIES, type SidebarEntry } from './navigation.ts';
import { UserPanel } from './UserPanel.tsx';
import { AlertCountTag } from '../alerts/AlertCountTag.tsx';

export function Sidebar({ inDrawer = false }: { inDrawer?: boolean }) {
  const { pathname } = useLocation();
  const navigate = useNavigate();
  const [comingSoon, setComingSoon] = useState<SidebarEntry | null>(null);

  return (
    <aside className={inDrawer ? 'app-sidebar app-sidebar-in-drawer' : 'app-sidebar'} aria-label="Main navigation">
      <Link to="/dashboard" className="app-sidebar-brand"><BrandMark /></Link>
      <nav className="app-sidebar-nav">
        <Menu className="app-sidebar-menu" large>
          {SIDEBAR_ENTRIES.map((entry) => {
            const active = isEntryActive(entry, pathname);
            return (
              <div key={entry.id} className="app-sidebar-group">
                <MenuItem
                  icon={entry.icon}
                  text={entry.label}
                  active={active}
                  href={entry.comingSoon ? undefined : entry.path}
                  data-testid={`sidebar-${entry.id}`}
                  labelElement={entry.comingSoon ? <Tag minimal round className="app-soon-tag">Soon</Tag> : entry.id === 'alerts' ? <AlertCountTag /> : undefined}
                  onClick={(event) => {
                    event.preventDefault();
                    if (entry.comingSoon) setComingSoon(entry);
                    else navigate(entry.id === 'runs' ? '/runs/overview' : entry.path);
                  }}
                />
                {entry.children && active ? (
                  <div className="app-sidebar-sublinks">
                    {entry.children.map((child) => (
                      <MenuItem key={child.path} text={child.label} icon={<Icon icon={child.icon} size={14} />}
                        href={child.path} active={isSubLinkActive(child.path, pathname)}
                        data-testid={`sidebar-${entry.id}-${child.label.toLowerCase()}`}
                        onClick={(event) => {
                          event.preventDefault();
                          navigate(child.path);
                        }} />
                    ))}
                  </div>
                ) : null}
              </div>
            );
          })}
        </Menu>
      </nav>
      <UserPanel />
      <ComingSoonDialog
        isOpen={comingSoon !== null}
        title={comingSoon?.label ?? ''}
        description={comingSoon?.comingSoon?.description ?? ''}
        icon={comingSoon?.icon ?? 'time'}
        onClose={() => setComingSoon(null)}
      />
    </aside>
  );
}

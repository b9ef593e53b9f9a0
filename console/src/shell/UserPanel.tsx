/** The current-user panel at the bottom of the sidebar, with the role, Settings and Sign Out menu. */
import { Button, Intent, Menu, MenuDivider, MenuItem, PopoverNext } from '@blueprintjs/core';
import { useLocation, useNavigate } from 'react-router-dom';
import { useAuth } from '../auth/useAuth.ts';
import { initialsOf } from '../auth/user.ts';
import { isSettingsActive } from './navigation.ts';

export function UserPanel() {
  const { user, organizationName, logout } = useAuth();
  const navigate = useNavigate();
  const { pathname } = useLocation();

  if (!user) {
    return (
      <div className="app-user-panel">
        <Button fill intent={Intent.PRIMARY} icon="log-in" text="Sign In" onClick={() => navigate('/login')} />
      </div>
    );
  }

  const firstRole = user.roles[0];
  const menu = (
    <Menu aria-label="User menu">
      <MenuItem icon="id-number" text={firstRole ? `Role: ${firstRole}` : 'No role assigned'} disabled className="app-user-role" />
      <MenuDivider />
      <MenuItem icon="cog" text="Settings" active={isSettingsActive(pathname)} onClick={() => navigate('/settings')} />
      <MenuItem icon="log-out" text="Sign Out" intent={Intent.DANGER} onClick={() => {
        void logout().then(() => navigate('/login'));
      }} />
    </Menu>
  );

  return (
    <div className="app-user-panel">
      <PopoverNext content={menu} placement="top-start" arrow={false} fill>
        <button type="button" className="app-user-button" aria-label="Open user menu" data-testid="user-panel">
          <span className="app-avatar" aria-hidden="true">{initialsOf(user)}</span>
          <span className="app-user-text">
            <span className="app-user-name" title={user.name || user.email}>{user.name || user.email}</span>
            <span className="app-user-email" title={user.email}>{user.email}</span>
            <span className="app-user-organization" data-testid="organization-name" title={organizationName}>{organizationName}</span>
          </span>
          <span className="app-user-caret bp6-icon-standard bp6-icon-chevron-up" aria-hidden="true" />
        </button>
      </PopoverNext>
    </div>
  );
}

/** Guarded pages: the shell with the role guard around the page. */
import { Outlet } from 'react-router-dom';
import { RequireRoles } from '../components/RequireRoles.tsx';
import { AppShell } from '../shell/AppShell.tsx';

export function ProtectedLayout() {
  return (
    <AppShell>
      <RequireRoles>
        <Outlet />
      </RequireRoles>
    </AppShell>
  );
}

/**
 * Settings (/settings): Account and the organisation's instrument types and units (Instruments) for everyone, User Management and API Keys for users
 * who manage users, Audit Logs for users who view them, Organisations for superusers.
 */
import { Callout, Card, Elevation, Intent, Tab, Tabs } from '@blueprintjs/core';
import { useSearchParams } from 'react-router-dom';
import { useAuth } from '../auth/useAuth.ts';
import { PageHeader } from '../components/PageHeader.tsx';
import { AccountTab } from './AccountTab.tsx';
import { ApiKeysTab } from './ApiKeysTab.tsx';
import { AuditLogsTab } from './AuditLogsTab.tsx';
import { InstrumentCatalogueTab } from './InstrumentCatalogueTab.tsx';
import { OrganizationsTab } from './OrganizationsTab.tsx';
import { UserManagementTab } from './UserManagementTab.tsx';
import './settings.css';

export const NOT_LOGGED_IN_MESSAGE = 'Access Denied - You need to be logged in to access the settings page.';

const TAB_IDS = ['account', 'users', 'api-keys', 'instruments', 'audit', 'organizations'] as const;
type TabId = typeof TAB_IDS[number];

function isTabId(value: string | null): value is TabId {
  return (TAB_IDS as readonly string[]).includes(value ?? '');
}

export function SettingsPage() {
  const { user, permissions } = useAuth();
  // The open tab lives in the address (?tab=audit): a reload, a shared link or the back button keep it.
  const [searchParams, setSearchParams] = useSearchParams();
  const requested = searchParams.get('tab');
  const allowed: Record<TabId, boolean> = {
    account: true,
    users: permissions.canManageUsers,
    'api-keys': permissions.canManageUsers,
    instruments: true,
    audit: permissions.canViewAuditLogs,
    organizations: permissions.isSuperuser,
  };
  const selected: TabId = isTabId(requested) && allowed[requested] ? requested : 'account';
  const select = (id: TabId) => setSearchParams(id === 'account' ? {} : { tab: id }, { replace: true });

  if (!user) {
    return (
      <div className="app-page">
        <Callout intent={Intent.DANGER} icon="lock" data-testid="settings-access-denied">{NOT_LOGGED_IN_MESSAGE}</Callout>
      </div>
    );
  }

  return (
    <div className="app-page">
      <PageHeader title="Settings" subtitle="Your account, your organisation's users and its audit trail." />
      <Card elevation={Elevation.ONE} className="app-settings-card">
        <Tabs id="settings-tabs" selectedTabId={selected} onChange={(id) => select(id as TabId)} large renderActiveTabPanelOnly>
          <Tab id="account" title="Account" icon="user" panel={<AccountTab />} />
          {allowed.users ? <Tab id="users" title="User Management" icon="people" panel={<UserManagementTab />} /> : null}
          {allowed['api-keys'] ? <Tab id="api-keys" title="API Keys" icon="key" panel={<ApiKeysTab />} /> : null}
          <Tab id="instruments" title="Instruments" icon="dashboard" panel={<InstrumentCatalogueTab />} />
          {allowed.audit ? <Tab id="audit" title="Audit Logs" icon="history" panel={<AuditLogsTab />} /> : null}
          {allowed.organizations ? <Tab id="organizations" title="Organisations" icon="office" panel={<OrganizationsTab />} /> : null}
        </Tabs>
      </Card>
    </div>
  );
}

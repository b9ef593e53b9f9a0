/**
 * Settings (/settings): Account for everyone, User Management and API Keys for users
 * who manage users, Audit Logs for users who view them, Organisations for superusers.
 */
import { Callout, Card, Elevation, Intent, Tab, Tabs } from '@blueprintjs/core';
import { useState } from 'react';
import { useAuth } from '../auth/useAuth.ts';
import { PageHeader } from '../components/PageHeader.tsx';
import { AccountTab } from './AccountTab.tsx';
import { ApiKeysTab } from './ApiKeysTab.tsx';
import { AuditLogsTab } from './AuditLogsTab.tsx';
import { OrganizationsTab } from './OrganizationsTab.tsx';
import { UserManagementTab } from './UserManagementTab.tsx';
import './settings.css';

export const NOT_LOGGED_IN_MESSAGE = 'Access Denied - You need to be logged in to access the settings page.';

type TabId = 'account' | 'users' | 'api-keys' | 'audit' | 'organizations';

export function SettingsPage() {
  const { user, permissions } = useAuth();
  const [selected, setSelected] = useState<TabId>('account');

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
        <Tabs id="settings-tabs" selectedTabId={selected} onChange={(id) => setSelected(id as TabId)} large renderActiveTabPanelOnly>
          <Tab id="account" title="Account" icon="user" panel={<AccountTab />} />
          {permissions.canManageUsers ? <Tab id="users" title="User Management" icon="people" panel={<UserManagementTab />} /> : null}
          {permissions.canManageUsers ? <Tab id="api-keys" title="API Keys" icon="key" panel={<ApiKeysTab />} /> : null}
          {permissions.canViewAuditLogs ? <Tab id="audit" title="Audit Logs" icon="history" panel={<AuditLogsTab />} /> : null}
          {permissions.isSuperuser ? <Tab id="organizations" title="Organisations" icon="office" panel={<OrganizationsTab />} /> : null}
        </Tabs>
      </Card>
    </div>
  );
}

/** The Account tab: the user's details, the name update, their sessions, the organisation's settings and, for superusers, the organisation switch. */
import { Button, FormGroup, H5, HTMLSelect, InputGroup, Intent, Tag } from '@blueprintjs/core';
import { useEffect, useState } from 'react';
import { useSWRConfig } from 'swr';
import { apiRequest } from '../api/client.ts';
import { useApi } from '../api/hooks.ts';
import { useAuth } from '../auth/useAuth.ts';
import { organizationListSchema, type Organization } from '../entities/types.ts';
import { OrganizationTimeZoneSection } from './OrganizationTimeZoneSection.tsx';
import { useSettingsAction } from './use-settings-action.ts';
import { OrganizationArchiveSection } from './OrganizationArchiveSection.tsx';
import { AccountSessionsSection } from './AccountSessionsSection.tsx';
import { SessionPolicySection } from './SessionPolicySection.tsx';
import { ChangeReasonSection } from './ChangeReasonSection.tsx';
import { AlertAcknowledgementSection } from './AlertAcknowledgementSection.tsx';

export function AccountTab() {
  const { user, permissions, organizationName, refreshProfile, setOrganizationId } = useAuth();
  const [name, setName] = useState(user?.name ?? '');
  const { busy: savingName, run: runNameUpdate } = useSettingsAction();
  const [targetOrganization, setTargetOrganization] = useState('');
  const { busy: switching, run: runSwitch } = useSettingsAction();
  const { mutate } = useSWRConfig();
  const organizations = useApi<Organization[]>(permissions.isSuperuser ? '/api/v1/organizations' : null, organizationListSchema);

  useEffect(() => setName(user?.name ?? ''), [user?.name]);
  useEffect(() => setTargetOrganization(user ? String(user.organizationId) : ''), [user]);

  if (!user) return null;
  const trimmed = name.trim();
  const nameUnchanged = trimmed === '' || trimmed === user.name;

  const updateName = () => runNameUpdate(async () => {
    await apiRequest('PUT', '/api/v1/auth/profile', { name: trimmed });
    await refreshProfile();
  }, { success: 'Name updated successfully', failure: 'Failed to update name' });

  const switchOrganization = () => runSwitch(async () => {
    await apiRequest('POST', '/api/v1/auth/switch-organization', { organizationId: targetOrganization });
    setOrganizationId(Number(targetOrganization));
    await refreshProfile();
    // Everything cached belongs to the previous organisation.
    await mutate(() => true);
  }, { success: 'Organization switched successfully', failure: 'Failed to switch organization' });

  return (
    <div className="app-settings-panel">
      <section className="app-settings-section">
        <H5>Profile</H5>
        <dl className="app-settings-facts">
          <dt>Email</dt><dd>{user.email}</dd>
          <dt>Role</dt><dd>{user.roles.length > 0 ? user.roles.map((role) => <Tag key={role} minimal round className="app-role-tag">{role}</Tag>) : 'No role assigned'}
            {user.superuser ? <Tag intent={Intent.WARNING} minimal round className="app-role-tag">superuser</Tag> : null}</dd>
          <dt>Organisation</dt><dd>{organizationName || '-'}</dd>
        </dl>
        <form className="app-settings-inline-form" onSubmit={(event) => { event.preventDefault(); if (!nameUnchanged) void updateName(); }}>
          <FormGroup label="Name" labelFor="account-name" className="app-settings-grow">
            <InputGroup id="account-name" value={name} onChange={(event) => setName(event.target.value)} />
          </FormGroup>
          <Button type="submit" intent={Intent.PRIMARY} text="Update Name" disabled={nameUnchanged || savingName} loading={savingName} />
        </form>
      </section>
      <AccountSessionsSection />
      <OrganizationTimeZoneSection />
      <SessionPolicySection />
      <AlertAcknowledgementSection />
      <ChangeReasonSection />
      <OrganizationArchiveSection />
      {permissions.isSuperuser ? (
        <section className="app-settings-section">
          <H5>Switch organisation</H5>
          <p className="bp6-text-muted">As a superuser you can work in any organisation. Data, users and audit logs follow the organisation you switch to.</p>
          <form className="app-settings-inline-form" onSubmit={(event) => { event.preventDefault(); void switchOrganization(); }}>
            <FormGroup label="Organisation" labelFor="account-organization" className="app-settings-grow">
              <HTMLSelect id="account-organization" fill value={targetOrganization} onChange={(event) => setTargetOrganization(event.target.value)}>
                {(organizations.data ?? []).map((organization) => <option key={organization.id} value={String(organization.id)}>{organization.name}</option>)}
              </HTMLSelect>
            </FormGroup>
            <Button type="submit" text="Switch Organisation" icon="swap-horizontal" loading={switching}
              disabled={!targetOrganization || targetOrganization === String(user.organizationId) || switching} />
          </form>
        </section>
      ) : null}
    </div>
  );
}

/**
 * User Management: list users, change role, delete, and for superusers make or demote superuser;
 * invite an address with a role, and see, resend or revoke the invitations not accepted yet.
 */
import { Button, ButtonGroup, Callout, FormGroup, HTMLSelect, HTMLTable, InputGroup, Intent, Tag } from '@blueprintjs/core';
import { ROLES } from '@bioprocess/shared/enums';
import { invitationSchema } from '@bioprocess/shared/auth-contracts';
import { z } from 'zod';
import { useState } from 'react';
import { apiRequest } from '../api/client.ts';
import { useApi } from '../api/hooks.ts';
import { useAuth } from '../auth/useAuth.ts';
import { AppTooltip } from '../components/AppTooltip.tsx';
import { ConfirmDialog } from '../components/dialogs/ConfirmDialog.tsx';
import { FormDialog } from '../components/dialogs/FormDialog.tsx';
import { formatDate } from '../entities/format.ts';
import { userListSchema, type User } from '../entities/types.ts';
import type { Camelize } from '../entities/types.ts';
import { useSettingsAction } from './use-settings-action.ts';
import { SettingsList, SettingsPanel } from './SettingsPanel.tsx';

const USERS_PATH = '/api/v1/auth/users';
const INVITATIONS_PATH = '/api/v1/auth/invitations';
const EMPTY_INVITE = { email: '', role: 'viewer' };
const invitationListSchema = z.array(invitationSchema);
type Invitation = Camelize<z.infer<typeof invitationSchema>>;

export function UserManagementTab() {
  const { user: me, permissions } = useAuth();
  const users = useApi<User[]>(USERS_PATH, userListSchema);
  const invitations = useApi<Invitation[]>(INVITATIONS_PATH, invitationListSchema);
  const [inviteOpen, setInviteOpen] = useState(false);
  const [invite, setInvite] = useState(EMPTY_INVITE);
  const [inviteError, setInviteError] = useState<string | null>(null);
  const { busy, run } = useSettingsAction();
  const [deleting, setDeleting] = useState<User | null>(null);
  const [revoking, setRevoking] = useState<Invitation | null>(null);

  const reload = () => users.mutate();
  const reloadInvitations = () => invitations.mutate();

  const sendInvite = async () => {
    if (!invite.email.trim() || !invite.role) {
      setInviteError('Email and role are required.');
      return;
    }
    setInviteError(null);
    await run(() => apiRequest('POST', `${USERS_PATH}/invite`, { email: invite.email.trim(), roleName: invite.role }), {
      success: { title: 'Invitation sent', message: `An invitation was sent to ${invite.email.trim()}. They join once they accept it.` },
      failure: (message) => setInviteError(message ?? 'Failed to invite user'),
      then: async () => {
        setInviteOpen(false);
        setInvite(EMPTY_INVITE);
        await reloadInvitations();
      },
    });
  };

  const resendInvitation = async (invitation: Invitation) => {
    await run(() => apiRequest('POST', `${INVITATIONS_PATH}/${invitation.id}/resend`), {
      success: { title: 'Invitation sent again', message: `A new link was sent to ${invitation.email}; the previous one no longer works.` },
      failure: 'Failed to resend invitation',
    });
    await reloadInvitations();
  };

  const confirmRevoke = async () => {
    if (!revoking) return;
    await run(() => apiRequest('DELETE', `${INVITATIONS_PATH}/${revoking.id}`), {
      success: 'Invitation revoked',
      failure: 'Failed to revoke invitation',
      then: async () => {
        setRevoking(null);
        await reloadInvitations();
      },
    });
  };

  const changeRole = async (user: User, role: string) => {
    await run(() => apiRequest('POST', `${USERS_PATH}/${user.id}/roles`, { roleName: role }), {
      success: 'Role updated successfully',
      failure: 'Failed to update role',
    });
    await reload();
  };

  const toggleSuperuser = async (user: User) => {
    const promote = !user.superuser;
    await run(() => apiRequest('PUT', `${USERS_PATH}/${user.id}/superuser`, { superuser: promote }), {
      success: promote ? 'User promoted to superuser' : 'User demoted from superuser',
      failure: 'Failed to promoting or demoting user',
    });
    await reload();
  };

  const confirmDelete = async () => {
    if (!deleting) return;
    await run(() => apiRequest('DELETE', `${USERS_PATH}/${deleting.id}`), {
      success: 'User deleted successfully',
      failure: 'Failed to delete user',
      then: async () => {
        setDeleting(null);
        await reload();
      },
    });
  };

  return (
    <SettingsPanel title="Users" description="Invite colleagues and decide what they may do: viewers look, editors add and change data, admins also manage users."
      actions={<Button icon="new-person" intent={Intent.PRIMARY} text="Invite User" onClick={() => { setInviteError(null); setInviteOpen(true); }} />}>
      <SettingsList list={users} noun="users" emptyIcon="people" emptyTitle="No users">
        {(rows) => (
          <HTMLTable striped className="app-settings-table" data-testid="users-table">
            <thead>
              <tr>
                <th>Name</th><th>Email</th>{permissions.isSuperuser ? <th>Organisation</th> : null}<th>Role</th><th>Created</th><th className="app-actions-cell">Actions</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((user) => {
                const isMe = String(user.id) === String(me?.id);
                return (
                  <tr key={user.id} data-testid={`user-row-${user.email}`}>
                    <td>
                      <span className="app-cell-strong">{user.name || '-'}</span>
                      {user.superuser ? <Tag intent={Intent.WARNING} minimal round className="app-role-tag">superuser</Tag> : null}
                      {!user.hasPassword ? <Tag minimal round className="app-role-tag">no password yet</Tag> : null}
                      {isMe ? <Tag minimal round intent={Intent.PRIMARY} className="app-role-tag">you</Tag> : null}
                    </td>
                    <td>{user.email}</td>
                    {permissions.isSuperuser ? <td>{user.organizationName ?? '-'}</td> : null}
                    <td>
                      <HTMLSelect aria-label={`Role of ${user.email}`} value={user.roles[0] ?? 'viewer'} disabled={isMe}
                        onChange={(event) => void changeRole(user, event.target.value)}>
                        {ROLES.map((role) => <option key={role} value={role}>{role}</option>)}
                      </HTMLSelect>
                    </td>
                    <td>{formatDate(user.createdAt, 'date')}</td>
                    <td className="app-actions-cell">
                      <ButtonGroup variant="minimal">
                        {permissions.isSuperuser ? (
                          <AppTooltip content={user.superuser ? 'Demote from superuser' : 'Make superuser'}>
                            <Button icon={user.superuser ? 'arrow-down' : 'crown'} size="small" disabled={isMe}
                              aria-label={user.superuser ? `Demote ${user.email}` : `Make ${user.email} superuser`}
                              text={user.superuser ? 'Demote' : 'Make superuser'} onClick={() => void toggleSuperuser(user)} />
                          </AppTooltip>
                        ) : null}
                        <AppTooltip content="Delete user">
                          <Button icon="trash" size="small" intent={Intent.DANGER} disabled={isMe} aria-label={`Delete ${user.email}`} onClick={() => setDeleting(user)} />
                        </AppTooltip>
                      </ButtonGroup>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </HTMLTable>
        )}
      </SettingsList>
      <h4 className="app-settings-subheading">Pending invitations</h4>
      <SettingsList list={invitations} noun="invitations" emptyIcon="envelope" emptyTitle="No pending invitations">
        {(rows) => (
          <HTMLTable striped className="app-settings-table" data-testid="invitations-table">
            <thead>
              <tr><th>Email</th><th>Role</th><th>Status</th><th>Last sent</th><th>Expires</th><th className="app-actions-cell">Actions</th></tr>
            </thead>
            <tbody>
              {rows.map((invitation) => (
                <tr key={invitation.id} data-testid={`invitation-row-${invitation.email}`}>
                  <td>{invitation.email}</td>
                  <td>{invitation.role}</td>
                  <td><Tag minimal round intent={invitation.status === 'expired' ? Intent.WARNING : Intent.NONE}>{invitation.status}</Tag></td>
                  <td>{formatDate(invitation.lastSentAt, 'dateTime')}</td>
                  <td>{formatDate(invitation.expiresAt, 'dateTime')}</td>
                  <td className="app-actions-cell">
                    <ButtonGroup variant="minimal">
                      <AppTooltip content="Send a new link (the previous one stops working)">
                        <Button icon="envelope" size="small" text="Resend" aria-label={`Resend the invitation of ${invitation.email}`} disabled={busy}
                          onClick={() => void resendInvitation(invitation)} />
                      </AppTooltip>
                      <AppTooltip content="Revoke invitation">
                        <Button icon="disable" size="small" intent={Intent.DANGER} aria-label={`Revoke the invitation of ${invitation.email}`}
                          onClick={() => setRevoking(invitation)} />
                      </AppTooltip>
                    </ButtonGroup>
                  </td>
                </tr>
              ))}
            </tbody>
          </HTMLTable>
        )}
      </SettingsList>
      <FormDialog title="Invite User" description="The invitee receives an email with the organisation's name, the role and a link: they choose their name and password when they accept." isOpen={inviteOpen}
        onClose={() => setInviteOpen(false)} onSubmit={sendInvite} busy={busy} submitLabel="Send Invite" icon="new-person">
        <FormGroup label="Email" labelFor="invite-email" labelInfo="(required)">
          <InputGroup id="invite-email" type="email" value={invite.email} onChange={(event) => setInvite({ ...invite, email: event.target.value })} />
        </FormGroup>
        <FormGroup label="Role" labelFor="invite-role" labelInfo="(required)">
          <HTMLSelect id="invite-role" fill value={invite.role} onChange={(event) => setInvite({ ...invite, role: event.target.value })}>
            {ROLES.map((role) => <option key={role} value={role}>{role}</option>)}
          </HTMLSelect>
        </FormGroup>
        {inviteError ? <Callout intent={Intent.DANGER} compact>{inviteError}</Callout> : null}
      </FormDialog>
      <ConfirmDialog isOpen={deleting !== null} title="Delete user" destructive busy={busy} confirmLabel="Delete" onClose={() => setDeleting(null)}
        onConfirm={confirmDelete} description={deleting ? `Delete ${deleting.name || deleting.email} (${deleting.email})? They can no longer sign in. This action cannot be undone.` : undefined} />
      <ConfirmDialog isOpen={revoking !== null} title="Revoke invitation" destructive busy={busy} confirmLabel="Revoke" onClose={() => setRevoking(null)}
        onConfirm={confirmRevoke} description={revoking ? `Revoke the invitation of ${revoking.email}? Its link stops working.` : undefined} />
    </SettingsPanel>
  );
}

/** Organisations (superusers): list, create, edit and delete. */
import { Button, ButtonGroup, Callout, FormGroup, HTMLTable, InputGroup, Intent, TextArea } from '@blueprintjs/core';
import { useState } from 'react';
import { apiRequest } from '../api/client.ts';
import { useApi } from '../api/hooks.ts';
import { useAuth } from '../auth/useAuth.ts';
import { AppTooltip } from '../components/AppTooltip.tsx';
import { ConfirmDialog } from '../components/dialogs/ConfirmDialog.tsx';
import { FormDialog } from '../components/dialogs/FormDialog.tsx';
import { formatDate } from '../entities/format.ts';
import { organizationListSchema, type Organization } from '../entities/types.ts';
import { useSettingsAction } from './use-settings-action.ts';
import { SettingsList, SettingsPanel } from './SettingsPanel.tsx';

const ORGANIZATIONS_PATH = '/api/v1/organizations';

export function OrganizationsTab() {
  const { user } = useAuth();
  const organizations = useApi<Organization[]>(ORGANIZATIONS_PATH, organizationListSchema);
  const [editing, setEditing] = useState<Organization | 'new' | null>(null);
  const [form, setForm] = useState({ name: '', description: '' });
  const [formError, setFormError] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<Organization | null>(null);
  const { busy, run } = useSettingsAction();

  const open = (organization: Organization | 'new') => {
    setEditing(organization);
    setFormError(null);
    setForm(organization === 'new' ? { name: '', description: '' } : { name: organization.name, description: organization.description ?? '' });
  };

  const save = async () => {
    if (!form.name.trim()) {
      setFormError('Name is required.');
      return;
    }
    const body = { name: form.name.trim(), description: form.description.trim() || null };
    const creating = editing === 'new';
    await run(async () => {
      if (creating) await apiRequest('POST', ORGANIZATIONS_PATH, body);
      else if (editing) await apiRequest('PUT', `${ORGANIZATIONS_PATH}/${editing.id}`, body);
    }, {
      success: creating ? 'Organization created successfully' : 'Organization updated successfully',
      failure: creating ? 'Failed to create organization' : 'Failed to update organization',
      then: async () => {
        setEditing(null);
        await organizations.mutate();
      },
    });
  };

  const confirmDelete = async () => {
    if (!deleting) return;
    await run(() => apiRequest('DELETE', `${ORGANIZATIONS_PATH}/${deleting.id}`), {
      success: 'Organization deleted successfully',
      failure: 'Failed to delete organization',
      then: async () => {
        setDeleting(null);
        await organizations.mutate();
      },
    });
  };

  return (
    <SettingsPanel title="Organisations" description="Every customer organisation on this installation. Only superusers see this tab."
      actions={<Button icon="add" intent={Intent.PRIMARY} text="Create Organization" onClick={() => open('new')} />}>
      <SettingsList list={organizations} noun="organisations" emptyIcon="office" emptyTitle="No organisations">
        {(rows) => (
          <HTMLTable striped className="app-settings-table" data-testid="organizations-table">
            <thead><tr><th>Name</th><th>Description</th><th>Users</th><th>Created</th><th className="app-actions-cell">Actions</th></tr></thead>
            <tbody>
              {rows.map((organization) => {
                const isCurrent = organization.id === user?.organizationId;
                return (
                  <tr key={organization.id}>
                    <td><span className="app-cell-strong">{organization.name}</span>{isCurrent ? <span className="bp6-text-muted"> (current)</span> : null}</td>
                    <td>{organization.description || '-'}</td>
                    <td>{organization.userCount}</td>
                    <td>{formatDate(organization.createdAt, 'date')}</td>
                    <td className="app-actions-cell">
                      <ButtonGroup variant="minimal">
                        <AppTooltip content="Edit organisation"><Button icon="edit" size="small" aria-label={`Edit ${organization.name}`} onClick={() => open(organization)} /></AppTooltip>
                        <AppTooltip content="Delete organisation">
                          <Button icon="trash" size="small" intent={Intent.DANGER} disabled={isCurrent} aria-label={`Delete ${organization.name}`} onClick={() => setDeleting(organization)} />
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
      <FormDialog title={editing === 'new' ? 'Create Organization' : 'Edit Organization'} isOpen={editing !== null} onClose={() => setEditing(null)}
        onSubmit={save} busy={busy} submitLabel={editing === 'new' ? 'Create' : 'Save'} icon="office">
        <FormGroup label="Name" labelFor="organization-name" labelInfo="(required)">
          <InputGroup id="organization-name" value={form.name} onChange={(event) => setForm({ ...form, name: event.target.value })} />
        </FormGroup>
        <FormGroup label="Description" labelFor="organization-description" labelInfo="(optional)">
          <TextArea id="organization-description" fill rows={3} value={form.description} onChange={(event) => setForm({ ...form, description: event.target.value })} />
        </FormGroup>
        {formError ? <Callout intent={Intent.DANGER} compact>{formError}</Callout> : null}
      </FormDialog>
      <ConfirmDialog isOpen={deleting !== null} title="Delete organisation" destructive busy={busy} confirmLabel="Delete" onClose={() => setDeleting(null)}
        onConfirm={confirmDelete}
        description={deleting ? `Delete '${deleting.name}' with all its users, runs and data? This action cannot be undone.` : undefined} />
    </SettingsPanel>
  );
}

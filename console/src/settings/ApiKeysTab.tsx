/**
 * API Keys: the organisation's keys for instrument feeds. Admins create a key (name, role viewer or
 * editor, optional expiry), see it once, and revoke keys. Keys never get the admin role: they post and
 * read data, administration needs a signed-in person.
 */
import { Button, Callout, FormGroup, HTMLSelect, HTMLTable, InputGroup, Intent, Tag } from '@blueprintjs/core';
import { API_KEY_ROLES, apiKeySchema } from '@bioprocess/shared/auth-contracts';
import { useState } from 'react';
import { z } from 'zod';
import { apiRequest } from '../api/client.ts';
import { wallTimeToIso } from '../dates/date-time-format.ts';
import { useApi } from '../api/hooks.ts';
import { AppTooltip } from '../components/AppTooltip.tsx';
import { ConfirmDialog } from '../components/dialogs/ConfirmDialog.tsx';
import { FormDialog } from '../components/dialogs/FormDialog.tsx';
import { showToast } from '../components/toaster.ts';
import { formatDate } from '../entities/format.ts';
import type { Camelize } from '../entities/types.ts';
import { useSettingsAction } from './use-settings-action.ts';
import { SettingsList, SettingsPanel } from './SettingsPanel.tsx';
import { DateField } from '../dates/DateField.tsx';
import { isDateText } from '../dates/date-time-format.ts';

const API_KEYS_PATH = '/api/v1/api-keys';
const apiKeyListSchema = z.array(apiKeySchema);
type ApiKey = Camelize<z.infer<typeof apiKeySchema>>;

const EMPTY_KEY = { name: '', role: 'editor', expiresOn: '' };

/** The end of the chosen day in the display zone, as the server expects it (ISO 8601). */
function endOfDay(date: string): string {
  return wallTimeToIso(`${date}T23:59:59`) ?? date;
}

function today(): string {
  const now = new Date();
  return `${now.getFullYear()}-${String(now.getMonth() + 1).padStart(2, '0')}-${String(now.getDate()).padStart(2, '0')}`;
}

/** The one-time secret to the clipboard; a refusal (no permission, no secure context) says to copy by hand. */
async function copyKey(key: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(key);
    showToast({ title: 'Copied', message: 'The key is on the clipboard.', intent: 'success' });
  } catch {
    showToast({ title: 'Could not copy the key', message: 'Select it and copy it by hand: it is not shown again.', intent: 'warning' });
  }
}

function keyState(key: ApiKey): { label: string; intent: Intent } {
  if (key.revokedAt) return { label: 'revoked', intent: Intent.NONE };
  if (key.expiresAt && Date.parse(key.expiresAt) <= Date.now()) return { label: 'expired', intent: Intent.WARNING };
  return { label: 'active', intent: Intent.SUCCESS };
}

export function ApiKeysTab() {
  const keys = useApi<ApiKey[]>(API_KEYS_PATH, apiKeyListSchema);
  const [createOpen, setCreateOpen] = useState(false);
  const [draft, setDraft] = useState(EMPTY_KEY);
  const [createError, setCreateError] = useState<string | null>(null);
  const [createdKey, setCreatedKey] = useState<string | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const { busy, run } = useSettingsAction();

  const reload = () => keys.mutate();

  const create = async () => {
    if (!draft.name.trim()) {
      setCreateError('Key name is required.');
      return;
    }
    const expiresOn = draft.expiresOn.trim();
    if (expiresOn && !isDateText(expiresOn)) {
      setCreateError('Expires on must be a day written yyyy-MM-dd, or empty.');
      return;
    }
    if (expiresOn && expiresOn < today()) {
      setCreateError('Expires on must be today or later.');
      return;
    }
    setCreateError(null);
    await run(() => apiRequest<{ key: string }>('POST', API_KEYS_PATH, {
      name: draft.name.trim(), role: draft.role, expires_at: expiresOn ? endOfDay(expiresOn) : null,
    }), {
      failure: (message) => setCreateError(message ?? 'Failed to create the key.'),
      then: async (created) => {
        setCreateOpen(false);
        setDraft(EMPTY_KEY);
        setCreatedKey(created.key);
        await reload();
      },
    });
  };

  const revoke = async () => {
    if (!revoking) return;
    await run(() => apiRequest('DELETE', `${API_KEYS_PATH}/${revoking.id}`), {
      success: 'API key revoked',
      failure: 'Failed to revoke API key',
      then: async () => {
        setRevoking(null);
        await reload();
      },
    });
  };

  return (
    <SettingsPanel title="API Keys" description="Keys let instrument feeds post and read data. They cannot manage users, keys or the audit log."
      actions={<Button icon="key" intent={Intent.PRIMARY} text="Create API Key" onClick={() => { setCreateError(null); setCreateOpen(true); }} />}>
      {createdKey ? (
        <Callout intent={Intent.SUCCESS} icon="key" title="Copy the new key now: it is not shown again" data-testid="created-api-key">
          <code className="app-api-key-value">{createdKey}</code>
          <Button size="small" icon="duplicate" text="Copy" aria-label="Copy the key" onClick={() => void copyKey(createdKey)} />
          <Button variant="minimal" size="small" icon="cross" aria-label="Hide the key" onClick={() => setCreatedKey(null)} />
        </Callout>
      ) : null}
      <SettingsList list={keys} noun="API keys" emptyIcon="key" emptyTitle="No API keys">
        {(rows) => (
          <HTMLTable striped className="app-settings-table" data-testid="api-keys-table">
            <thead>
              <tr><th>Name</th><th>Key</th><th>Role</th><th>Expires</th><th>Last used</th><th className="app-actions-cell">Actions</th></tr>
            </thead>
            <tbody>
              {rows.map((key) => {
                const state = keyState(key);
                return (
                  <tr key={key.id} data-testid={`api-key-row-${key.name}`}>
                    <td>
                      <span className="app-cell-strong">{key.name}</span>
                      <Tag minimal round intent={state.intent} className="app-role-tag">{state.label}</Tag>
                    </td>
                    <td><code>{key.keyPrefix}…</code></td>
                    <td>{key.role}</td>
                    <td>{key.expiresAt ? formatDate(key.expiresAt, 'date') : 'never'}</td>
                    <td>{key.lastUsedAt ? formatDate(key.lastUsedAt, 'date') : '-'}</td>
                    <td className="app-actions-cell">
                      {key.revokedAt ? null : (
                        <AppTooltip content="Revoke key">
                          <Button icon="disable" size="small" variant="minimal" intent={Intent.DANGER} aria-label={`Revoke ${key.name}`} onClick={() => setRevoking(key)} />
                        </AppTooltip>
                      )}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </HTMLTable>
        )}
      </SettingsList>
      <FormDialog title="Create API Key" description="The key is shown once, right after it is created." isOpen={createOpen}
        onClose={() => setCreateOpen(false)} onSubmit={create} busy={busy} submitLabel="Create Key" icon="key">
        <FormGroup label="Name" labelFor="api-key-name" labelInfo="(required)">
          <InputGroup id="api-key-name" value={draft.name} onChange={(event) => setDraft({ ...draft, name: event.target.value })} />
        </FormGroup>
        <FormGroup label="Role" labelFor="api-key-role" helperText="Editor keys post data; viewer keys only read it.">
          <HTMLSelect id="api-key-role" fill value={draft.role} onChange={(event) => setDraft({ ...draft, role: event.target.value })}>
            {API_KEY_ROLES.map((role) => <option key={role} value={role}>{role}</option>)}
          </HTMLSelect>
        </FormGroup>
        <FormGroup label="Expires on" labelFor="api-key-expiry" labelInfo="(optional)" helperText="The key stops working at the end of this day; leave empty to keep it until revoked.">
          <DateField id="api-key-expiry" value={draft.expiresOn} onChange={(expiresOn) => setDraft({ ...draft, expiresOn })} />
        </FormGroup>
        {createError ? <Callout intent={Intent.DANGER} compact>{createError}</Callout> : null}
      </FormDialog>
      <ConfirmDialog isOpen={revoking !== null} title="Revoke API key" destructive busy={busy} confirmLabel="Revoke" onClose={() => setRevoking(null)}
        onConfirm={revoke} description={revoking ? `Revoke ${revoking.name}? Feeds using it are refused at once. This cannot be undone.` : undefined} />
    </SettingsPanel>
  );
}

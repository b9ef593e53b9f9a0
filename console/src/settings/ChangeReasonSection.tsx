/**
 * Reason for change in Settings: per record kind whether an edit or deletion asks for a reason (off,
 * optional, required), and the organisation's pick-list of reasons. Every member sees it; admins change it.
 */
import { Button, FormGroup, H5, HTMLSelect, HTMLTable, Intent, TagInput } from '@blueprintjs/core';
import { useEffect, useMemo, useState } from 'react';
import {
  CHANGE_REASON_CODE_MAX_LENGTH, CHANGE_REASON_KINDS, CHANGE_REASON_KIND_LABELS, CHANGE_REASON_PICK_LIST_MAX, CHANGE_REASON_POLICIES,
  changeReasonSettingsSchema, type ChangeReasonPolicy, type ChangeReasonSettings,
} from '@bioprocess/shared/change-reasons';
import { apiRequest } from '../api/client.ts';
import { useApi } from '../api/hooks.ts';
import { CHANGE_REASON_SETTINGS_PATH } from '../api/change-reason.ts';
import { useAuth } from '../auth/useAuth.ts';
import { useSettingsAction } from './use-settings-action.ts';

/** The client gives keys in camelCase (unit_operations -> unitOperations): back to the kinds' own names. */
function asSettings(data: unknown): ChangeReasonSettings | null {
  if (!data) return null;
  const { policies, reasons } = data as { policies: Record<string, ChangeReasonPolicy>; reasons: string[] };
  const camel = (kind: string) => kind.replace(/_([a-z])/g, (_match, letter: string) => letter.toUpperCase());
  return {
    policies: Object.fromEntries(CHANGE_REASON_KINDS.map((kind) => [kind, policies[kind] ?? policies[camel(kind)] ?? 'off'])) as ChangeReasonSettings['policies'],
    reasons: [...reasons],
  };
}

const POLICY_LABELS: Record<ChangeReasonPolicy, string> = { off: 'Off', optional: 'Optional', required: 'Required' };

export function ChangeReasonSection() {
  const { permissions } = useAuth();
  const settings = useApi<ChangeReasonSettings>(CHANGE_REASON_SETTINGS_PATH, changeReasonSettingsSchema);
  const stored = useMemo(() => asSettings(settings.data), [settings.data]);
  const [draft, setDraft] = useState<ChangeReasonSettings | null>(null);
  const { busy: saving, run } = useSettingsAction();
  useEffect(() => setDraft(stored), [stored]);
  const canEdit = permissions.canManageUsers;
  const changed = draft !== null && stored !== null && JSON.stringify(draft) !== JSON.stringify(stored);

  const save = () => run(async () => {
    if (!draft) return;
    await apiRequest('PUT', CHANGE_REASON_SETTINGS_PATH, draft, { schema: changeReasonSettingsSchema });
    await settings.mutate();
  }, { success: 'Reason for change settings saved', failure: 'Failed to save the reason for change settings' });

  const addReasons = (values: string[]) => {
    if (!draft) return;
    const next = [...draft.reasons];
    for (const value of values.map((entry) => entry.trim().slice(0, CHANGE_REASON_CODE_MAX_LENGTH))) {
      if (value && !next.includes(value) && next.length < CHANGE_REASON_PICK_LIST_MAX) next.push(value);
    }
    setDraft({ ...draft, reasons: next });
  };

  return (
    <section className="app-settings-section" data-testid="change-reason-settings">
      <H5>Reason for change</H5>
      <p className="bp6-text-muted">
        When a kind of record asks for a reason, editing or deleting one opens a dialog for it, and the reason is kept in the audit trail.
        With Required, the change is refused without one.
      </p>
      {draft ? (
        // Not a form: Enter in the pick-list adds a reason, it must not save.
        <div>
          <HTMLTable compact className="app-change-reason-table">
            <thead><tr><th>Records</th><th>Reason</th></tr></thead>
            <tbody>
              {CHANGE_REASON_KINDS.map((kind) => (
                <tr key={kind}>
                  <td><label htmlFor={`change-reason-${kind}`}>{CHANGE_REASON_KIND_LABELS[kind]}</label></td>
                  <td>
                    <HTMLSelect id={`change-reason-${kind}`} value={draft.policies[kind]} disabled={!canEdit}
                      onChange={(event) => setDraft({ ...draft, policies: { ...draft.policies, [kind]: event.target.value as ChangeReasonPolicy } })}>
                      {CHANGE_REASON_POLICIES.map((policy) => <option key={policy} value={policy}>{POLICY_LABELS[policy]}</option>)}
                    </HTMLSelect>
                  </td>
                </tr>
              ))}
            </tbody>
          </HTMLTable>
          <FormGroup label="Reasons to pick from" labelFor="change-reason-pick-list" className="app-change-reason-pick-list"
            helperText={canEdit ? `Press Enter after each reason (at most ${CHANGE_REASON_PICK_LIST_MAX}). People can also write their own.` : undefined}>
            <TagInput inputProps={{ id: 'change-reason-pick-list' }} values={draft.reasons} disabled={!canEdit} addOnBlur
              placeholder={canEdit ? 'e.g. Transcription error' : 'No reasons'} onAdd={addReasons}
              onRemove={(_value, index) => setDraft({ ...draft, reasons: draft.reasons.filter((_, position) => position !== index) })} />
          </FormGroup>
          {canEdit ? <Button intent={Intent.PRIMARY} text="Save Reason Settings" loading={saving} disabled={saving || !changed} onClick={() => void save()} /> : null}
        </div>
      ) : null}
    </section>
  );
}

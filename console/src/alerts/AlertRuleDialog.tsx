/**
 * Creating or editing an alert rule: a name, the scope (instrument type, unit-operation type, run),
 * the condition and its figures, and who is told (an email to oneself, a signed webhook). The server
 * checks everything again and its message shows in the dialog when it refuses.
 */
import { useEffect, useState } from 'react';
import { Button, Callout, Checkbox, Dialog, DialogBody, DialogFooter, FormGroup, HTMLSelect, InputGroup, NumericInput, Switch } from '@blueprintjs/core';
import { UNIT_OPERATION_TYPES } from '@bioprocess/shared/enums';
import type { AlertConditionKind } from '@bioprocess/shared/alerts';
import { apiRequest } from '../api/client.ts';
import { useApi } from '../api/hooks.ts';
import { useAuth } from '../auth/useAuth.ts';
import { useRuns } from '../entities/queries.ts';
import { useInstrumentCatalogue } from '../settings/use-instrument-catalogue.ts';
import { ALERT_RULES_PATH, type AlertRuleView } from './alert-queries.ts';

interface Form {
  name: string;
  enabled: boolean;
  instrumentType: string;
  unitOperationType: string;
  runId: string;
  kind: AlertConditionKind;
  direction: string;
  value: number;
  perMinute: number;
  windowSeconds: number;
  periodSeconds: number;
  goldenBatchId: string;
  holdSeconds: number;
  emailMe: boolean;
  webhookUrl: string;
  webhookSecret: string;
  groupWindowMinutes: number;
}

const ANY = '';

function formOf(rule: AlertRuleView | null, userId: number | null): Form {
  const condition = rule?.condition;
  return {
    name: rule?.name ?? '',
    enabled: rule?.enabled ?? true,
    instrumentType: rule?.instrumentType ?? 'temperature',
    unitOperationType: rule?.unitOperationType ?? ANY,
    runId: rule?.runId ? String(rule.runId) : ANY,
    kind: condition?.kind ?? 'threshold',
    direction: condition && 'direction' in condition ? condition.direction : 'above',
    value: condition?.kind === 'threshold' ? condition.value : 0,
    perMinute: condition?.kind === 'rate_of_change' ? condition.perMinute : 1,
    windowSeconds: condition?.kind === 'rate_of_change' ? condition.windowSeconds : 300,
    periodSeconds: condition?.kind === 'no_data' ? condition.periodSeconds : 600,
    goldenBatchId: condition?.kind === 'golden_band' ? String(condition.goldenBatchId) : ANY,
    holdSeconds: condition && 'holdSeconds' in condition ? condition.holdSeconds : 0,
    emailMe: userId !== null && (rule === null || rule.emailUserIds.includes(userId)),
    webhookUrl: rule?.webhookUrl ?? '',
    webhookSecret: '',
    groupWindowMinutes: Math.round((rule?.groupWindowSeconds ?? 900) / 60),
  };
}

function conditionOf(form: Form): Record<string, unknown> {
  switch (form.kind) {
    case 'threshold':
      return { kind: 'threshold', direction: form.direction === 'below' ? 'below' : 'above', value: form.value, hold_seconds: form.holdSeconds };
    case 'rate_of_change':
      return { kind: 'rate_of_change', direction: ['rising', 'falling'].includes(form.direction) ? form.direction : 'either', per_minute: form.perMinute, window_seconds: form.windowSeconds, hold_seconds: form.holdSeconds };
    case 'no_data':
      return { kind: 'no_data', period_seconds: form.periodSeconds };
    case 'golden_band':
      return { kind: 'golden_band', golden_batch_id: Number(form.goldenBatchId), hold_seconds: form.holdSeconds };
  }
}

export function AlertRuleDialog({ isOpen, rule, onClose, onSaved }: { isOpen: boolean; rule: AlertRuleView | null; onClose: () => void; onSaved: () => void }) {
  const { user } = useAuth();
  const userId = user ? Number(user.id) : null;
  const [form, setForm] = useState<Form>(() => formOf(rule, userId));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const catalogue = useInstrumentCatalogue();
  const runs = useRuns();
  const goldenBatches = useApi<Array<{ id: number; name: string }>>(isOpen ? '/api/v1/golden-batches' : null);
  useEffect(() => {
    if (isOpen) {
      setForm(formOf(rule, userId));
      setError(null);
    }
  }, [isOpen, rule, userId]);
  const set = <K extends keyof Form>(key: K, value: Form[K]) => setForm((current) => ({ ...current, [key]: value }));
  const types = [...(catalogue.data?.builtInTypes ?? []), ...(catalogue.data?.types.map((type) => type.name) ?? [])];

  const save = async () => {
    setBusy(true);
    setError(null);
    const others = (rule?.emailUserIds ?? []).filter((id) => id !== userId);
    const body = {
      name: form.name,
      enabled: form.enabled,
      instrument_type: form.instrumentType || null,
      unit_operation_type: form.unitOperationType || null,
      run_id: form.runId ? Number(form.runId) : null,
      condition: conditionOf(form),
      email_user_ids: form.emailMe && userId !== null ? [...others, userId] : others,
      webhook_url: form.webhookUrl.trim() || null,
      webhook_secret: form.webhookSecret || null,
      group_window_seconds: form.groupWindowMinutes * 60,
    };
    try {
      if (rule) await apiRequest('PUT', `${ALERT_RULES_PATH}/${rule.id}`, body);
      else await apiRequest('POST', ALERT_RULES_PATH, body);
      onSaved();
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : 'The rule could not be saved.');
    } finally {
      setBusy(false);
    }
  };

  const number = (label: string, key: 'value' | 'perMinute' | 'windowSeconds' | 'periodSeconds' | 'holdSeconds' | 'groupWindowMinutes', helper?: string, min?: number) => (
    <FormGroup label={label} labelFor={`alert-rule-${key}`} helperText={helper}>
      <NumericInput id={`alert-rule-${key}`} fill value={form[key]} min={min} allowNumericCharactersOnly={false}
        onValueChange={(value) => set(key, Number.isFinite(value) ? value : 0)} />
    </FormGroup>
  );

  return (
    <Dialog isOpen={isOpen} onClose={onClose} title={rule ? 'Edit alert rule' : 'New alert rule'} icon="notifications" style={{ width: 560 }}>
      <DialogBody>
        <FormGroup label="Name" labelFor="alert-rule-name">
          <InputGroup id="alert-rule-name" value={form.name} maxLength={100} onChange={(change) => set('name', change.target.value)} />
        </FormGroup>
        <FormGroup label="Instrument type" labelFor="alert-rule-instrument-type" helperText="Every instrument of this type is watched.">
          <HTMLSelect id="alert-rule-instrument-type" fill value={form.instrumentType} onChange={(change) => set('instrumentType', change.target.value)}
            options={[{ value: ANY, label: 'Any type' }, ...types.map((type) => ({ value: type, label: type }))]} />
        </FormGroup>
        <FormGroup label="Unit-operation type" labelFor="alert-rule-uo-type">
          <HTMLSelect id="alert-rule-uo-type" fill value={form.unitOperationType} onChange={(change) => set('unitOperationType', change.target.value)}
            options={[{ value: ANY, label: 'Any unit operation (or none)' }, ...UNIT_OPERATION_TYPES.map((type) => ({ value: type, label: type }))]} />
        </FormGroup>
        <FormGroup label="Run" labelFor="alert-rule-run">
          <HTMLSelect id="alert-rule-run" fill value={form.runId} onChange={(change) => set('runId', change.target.value)}
            options={[{ value: ANY, label: 'Any run' }, ...(runs.data ?? []).map((run) => ({ value: String(run.id), label: run.name }))]} />
        </FormGroup>
        <FormGroup label="Condition" labelFor="alert-rule-kind">
          <HTMLSelect id="alert-rule-kind" fill value={form.kind} onChange={(change) => {
            const kind = change.target.value as AlertConditionKind;
            setForm((current) => ({ ...current, kind, direction: kind === 'rate_of_change' ? 'either' : 'above' }));
          }} options={[
            { value: 'threshold', label: 'Threshold' }, { value: 'rate_of_change', label: 'Rate of change' },
            { value: 'no_data', label: 'No data for a period' }, { value: 'golden_band', label: 'Outside the golden-batch band' },
          ]} />
        </FormGroup>
        {form.kind === 'threshold' ? (
          <>
            <FormGroup label="Fires when the reading is" labelFor="alert-rule-direction">
              <HTMLSelect id="alert-rule-direction" fill value={form.direction} onChange={(change) => set('direction', change.target.value)}
                options={[{ value: 'above', label: 'Above' }, { value: 'below', label: 'Below' }]} />
            </FormGroup>
            {number('Threshold', 'value')}
          </>
        ) : null}
        {form.kind === 'rate_of_change' ? (
          <>
            <FormGroup label="Fires when the reading is" labelFor="alert-rule-direction">
              <HTMLSelect id="alert-rule-direction" fill value={form.direction} onChange={(change) => set('direction', change.target.value)}
                options={[{ value: 'either', label: 'Changing' }, { value: 'rising', label: 'Rising' }, { value: 'falling', label: 'Falling' }]} />
            </FormGroup>
            {number('Faster than (per minute)', 'perMinute', undefined, 0)}
            {number('Over a window of (seconds)', 'windowSeconds', undefined, 1)}
          </>
        ) : null}
        {form.kind === 'no_data' ? number('No reading for (seconds)', 'periodSeconds', 'Series of running unit operations only.', 1) : null}
        {form.kind === 'golden_band' ? (
          <FormGroup label="Golden batch" labelFor="alert-rule-golden-batch" helperText="Readings are compared with its band on aligned time.">
            <HTMLSelect id="alert-rule-golden-batch" fill value={form.goldenBatchId} onChange={(change) => set('goldenBatchId', change.target.value)}
              options={[{ value: ANY, label: 'Choose a golden batch' }, ...(goldenBatches.data ?? []).map((batch) => ({ value: String(batch.id), label: batch.name }))]} />
          </FormGroup>
        ) : null}
        {form.kind !== 'no_data' ? number('Hold for (seconds)', 'holdSeconds', 'How long the condition must last before the alert fires.', 0) : null}
        <Checkbox label="Email me when it fires" checked={form.emailMe} onChange={() => set('emailMe', !form.emailMe)} disabled={userId === null} />
        <FormGroup label="Webhook URL" labelFor="alert-rule-webhook" helperText="Optional: each notification is posted there as JSON, signed with the secret (X-Alert-Signature).">
          <InputGroup id="alert-rule-webhook" value={form.webhookUrl} placeholder="https://" onChange={(change) => set('webhookUrl', change.target.value)} />
        </FormGroup>
        {form.webhookUrl.trim() ? (
          <FormGroup label="Webhook secret" labelFor="alert-rule-secret" helperText={rule?.hasWebhookSecret ? 'Left empty, the stored secret stays.' : 'At least 16 characters.'}>
            <InputGroup id="alert-rule-secret" type="password" value={form.webhookSecret} onChange={(change) => set('webhookSecret', change.target.value)} />
          </FormGroup>
        ) : null}
        {number('Group notifications over (minutes)', 'groupWindowMinutes', 'Later firings of this rule in the same run within this time join the first notification.', 0)}
        <Switch label="Enabled" checked={form.enabled} onChange={() => set('enabled', !form.enabled)} />
        {error ? <Callout intent="danger">{error}</Callout> : null}
      </DialogBody>
      <DialogFooter actions={(
        <>
          <Button text="Cancel" onClick={onClose} disabled={busy} />
          <Button intent="primary" text={rule ? 'Save' : 'Create rule'} loading={busy} onClick={() => void save()} />
        </>
      )} />
    </Dialog>
  );
}

/**
 * The organisation's session policy in Settings > Account: minutes of inactivity after which a session
 * ends, and how recent a sign-in must be for a signature to go without the password. Every member sees
 * it; admins change it.
 */
import { Button, FormGroup, H5, Intent, NumericInput } from '@blueprintjs/core';
import { useEffect, useState } from 'react';
import { sessionPolicySchema, type SessionPolicy } from '@bioprocess/shared/run-review';
import { apiRequest } from '../api/client.ts';
import { useApi } from '../api/hooks.ts';
import { useAuth } from '../auth/useAuth.ts';
import { useSettingsAction } from './use-settings-action.ts';

interface PolicyView { inactivityMinutes: number; signingReauthMinutes: number }

export function SessionPolicySection() {
  const { permissions } = useAuth();
  const policy = useApi<PolicyView>('/api/v1/session-policy', sessionPolicySchema);
  const [inactivity, setInactivity] = useState<number | null>(null);
  const [reauth, setReauth] = useState<number | null>(null);
  const { busy, run } = useSettingsAction();
  useEffect(() => {
    setInactivity(policy.data?.inactivityMinutes ?? null);
    setReauth(policy.data?.signingReauthMinutes ?? null);
  }, [policy.data]);
  const unchanged = inactivity === policy.data?.inactivityMinutes && reauth === policy.data?.signingReauthMinutes;

  const save = () => run(async () => {
    const body: SessionPolicy = { inactivity_minutes: inactivity ?? 0, signing_reauth_minutes: reauth ?? 0 };
    await apiRequest('PUT', '/api/v1/session-policy', body);
    await policy.mutate();
  }, { success: 'Session policy updated', failure: 'Failed to update the session policy' });

  const editable = permissions.canManageUsers && Boolean(policy.data);
  return (
    <section className="app-settings-section" data-testid="session-policy">
      <H5>Sessions and signatures</H5>
      <p className="bp6-text-muted">
        A session unused for longer than the inactivity limit is signed out. Signing a record asks for the password again unless
        the signer signed in within the re-authentication window (0: always).
      </p>
      <form className="app-settings-inline-form" onSubmit={(event) => { event.preventDefault(); if (!unchanged) void save(); }}>
        <FormGroup label="Inactivity limit (minutes)" labelFor="policy-inactivity">
          <NumericInput id="policy-inactivity" min={1} max={10080} value={inactivity ?? ''} disabled={!editable}
            onValueChange={(value) => setInactivity(Number.isFinite(value) ? value : null)} />
        </FormGroup>
        <FormGroup label="Re-authentication window for signing (minutes)" labelFor="policy-reauth">
          <NumericInput id="policy-reauth" min={0} max={60} value={reauth ?? ''} disabled={!editable}
            onValueChange={(value) => setReauth(Number.isFinite(value) ? value : null)} />
        </FormGroup>
        {permissions.canManageUsers ? (
          <Button type="submit" intent={Intent.PRIMARY} text="Save Policy" loading={busy} disabled={busy || unchanged || inactivity === null || reauth === null} />
        ) : null}
      </form>
    </section>
  );
}

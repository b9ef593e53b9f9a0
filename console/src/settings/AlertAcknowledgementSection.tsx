/**
 * Signed acknowledgements in Settings > Account: whether acknowledging an alert requires an electronic
 * signature (the acknowledger's password, and a signature bound to the firing). Every member sees it;
 * admins change it, audited.
 */
import { H5, Switch } from '@blueprintjs/core';
import { alertAcknowledgementSettingsSchema } from '@bioprocess/shared/alerts';
import { apiRequest } from '../api/client.ts';
import { useAuth } from '../auth/useAuth.ts';
import { ALERT_ACKNOWLEDGEMENT_SETTINGS_PATH, useAlertAcknowledgementSettings } from '../alerts/alert-queries.ts';
import { useSettingsAction } from './use-settings-action.ts';

export function AlertAcknowledgementSection() {
  const { permissions } = useAuth();
  const settings = useAlertAcknowledgementSettings();
  const { busy, run } = useSettingsAction();

  const change = (requiresSignature: boolean) => run(async () => {
    await apiRequest('PUT', ALERT_ACKNOWLEDGEMENT_SETTINGS_PATH, { requires_signature: requiresSignature }, { schema: alertAcknowledgementSettingsSchema });
    await settings.mutate();
  }, {
    success: requiresSignature ? 'Alert acknowledgements now require a signature' : 'Alert acknowledgements no longer require a signature',
    failure: 'Failed to change the alert acknowledgement setting',
  });

  return (
    <section className="app-settings-section" data-testid="alert-acknowledgement-settings">
      <H5>Alert acknowledgements</H5>
      <p className="bp6-text-muted">
        When on, acknowledging an alert asks for the password every time and records an electronic signature (meaning Reviewed) with
        the acknowledgement, shown with the alert. Acknowledgements already recorded keep theirs.
      </p>
      <Switch id="alert-acknowledgement-signature" label="Acknowledging an alert requires an electronic signature"
        checked={settings.data?.requiresSignature ?? false} disabled={!permissions.canManageUsers || !settings.data || busy}
        onChange={(event) => void change(event.currentTarget.checked)} />
    </section>
  );
}

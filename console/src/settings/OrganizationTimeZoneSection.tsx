/**
 * The organisation's time zone in Settings: the zone CSV uploads read timestamps without an offset in,
 * unless the upload names another. Every member sees it; admins change it.
 */
import { Button, FormGroup, H5, HTMLSelect, Intent } from '@blueprintjs/core';
import { useEffect, useMemo, useState } from 'react';
import { organizationSettingsSchema, type OrganizationSettings } from '@bioprocess/shared/organization-settings';
import { apiRequest } from '../api/client.ts';
import { useApi } from '../api/hooks.ts';
import { useAuth } from '../auth/useAuth.ts';
import { showToast } from '../components/toaster.ts';
import { timeZoneOptions } from '../csv-upload/reading-options.ts';

export function OrganizationTimeZoneSection() {
  const { permissions } = useAuth();
  const settings = useApi<OrganizationSettings>('/api/v1/organization-settings', organizationSettingsSchema);
  const stored = settings.data?.time_zone ?? '';
  const [zone, setZone] = useState(stored);
  const [saving, setSaving] = useState(false);
  useEffect(() => setZone(stored), [stored]);
  const options = useMemo(() => timeZoneOptions([stored]), [stored]);

  const save = async () => {
    setSaving(true);
    try {
      const saved = await apiRequest<OrganizationSettings>('PUT', '/api/v1/organization-settings', { time_zone: zone }, { schema: organizationSettingsSchema });
      await settings.mutate(saved, { revalidate: false });
      showToast({ title: 'Time zone updated successfully', intent: 'success' });
    } catch (cause) {
      console.error('Failed to update the time zone', cause);
      showToast({ title: 'Failed to update time zone', message: cause instanceof Error ? cause.message : undefined, intent: 'danger' });
    } finally {
      setSaving(false);
    }
  };

  return (
    <section className="app-settings-section" data-testid="organization-time-zone">
      <H5>Organisation time zone</H5>
      <p className="bp6-text-muted">
        CSV timestamps written without a UTC offset are read in this zone, unless the upload chooses another or the file states its own.
      </p>
      <form className="app-settings-inline-form" onSubmit={(event) => { event.preventDefault(); void save(); }}>
        <FormGroup label="Time zone" labelFor="organization-time-zone" className="app-settings-grow">
          <HTMLSelect id="organization-time-zone" fill value={zone} disabled={!permissions.canManageUsers || !settings.data}
            onChange={(event) => setZone(event.target.value)}>
            {options.map((option) => <option key={option} value={option}>{option}</option>)}
          </HTMLSelect>
        </FormGroup>
        {permissions.canManageUsers ? (
          <Button type="submit" intent={Intent.PRIMARY} text="Save Time Zone" loading={saving} disabled={saving || zone === stored || !zone} />
        ) : null}
      </form>
    </section>
  );
}

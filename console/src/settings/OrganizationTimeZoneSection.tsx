/**
 * The organisation's time zone in Settings: the zone the console shows dates and times in, and the one
 * CSV uploads read timestamps without an offset in, unless the upload names another. Every member sees
 * it; admins change it.
 */
import { Button, FormGroup, H5, HTMLSelect, Intent } from '@blueprintjs/core';
import { useEffect, useMemo, useState } from 'react';
import { organizationSettingsSchema } from '@bioprocess/shared/organization-settings';
import { apiRequest } from '../api/client.ts';
import { useAuth } from '../auth/useAuth.ts';
import { timeZoneOptions } from '../csv-upload/reading-options.ts';
import { useSettingsAction } from './use-settings-action.ts';
import { ORGANIZATION_SETTINGS_PATH, useOrganizationSettings, type OrganizationSettingsView } from './use-organization-settings.ts';

export function OrganizationTimeZoneSection() {
  const { permissions } = useAuth();
  const settings = useOrganizationSettings();
  const stored = settings.data?.timeZone ?? '';
  const [zone, setZone] = useState(stored);
  const { busy: saving, run } = useSettingsAction();
  useEffect(() => setZone(stored), [stored]);
  const options = useMemo(() => timeZoneOptions([stored]), [stored]);

  const save = () => run(async () => {
    const saved = await apiRequest<OrganizationSettingsView>('PUT', ORGANIZATION_SETTINGS_PATH, { time_zone: zone }, { schema: organizationSettingsSchema });
    await settings.mutate(saved, { revalidate: false });
  }, { success: 'Time zone updated successfully', failure: 'Failed to update time zone' });

  return (
    <section className="app-settings-section" data-testid="organization-time-zone">
      <H5>Organisation time zone</H5>
      <p className="bp6-text-muted">
        Dates and times are shown in this zone for every member. CSV timestamps written without a UTC offset are read in it, unless the
        upload chooses another or the file states its own.
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

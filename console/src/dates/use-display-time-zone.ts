import { organizationSettingsSchema, type OrganizationSettings } from '@bioprocess/shared/organization-settings';
import { useApi } from '../api/hooks.ts';
import { setDisplayTimeZone, timeZoneName } from './date-time-format.ts';

/**
 * Shows dates in the organisation's time zone once its settings are read, and returns the zone in
 * use. The zone is set while rendering, not in an effect, so the pages rendered below read it already.
 */
export function useDisplayTimeZone(): string {
  const settings = useApi<OrganizationSettings>('/api/v1/organization-settings', organizationSettingsSchema);
  setDisplayTimeZone(settings.data?.time_zone ?? null);
  return timeZoneName();
}

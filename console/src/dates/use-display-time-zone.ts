import { useOrganizationSettings } from '../settings/use-organization-settings.ts';
import { setDisplayTimeZone, timeZoneName } from './date-time-format.ts';

/**
 * Shows dates in the organisation's time zone once its settings are read, and returns the zone in
 * use. The zone is set while rendering, not in an effect, so the pages rendered below read it already.
 */
export function useDisplayTimeZone(): string {
  const settings = useOrganizationSettings();
  setDisplayTimeZone(settings.data?.timeZone ?? null);
  return timeZoneName();
}

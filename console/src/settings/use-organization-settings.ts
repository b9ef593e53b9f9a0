import { organizationSettingsSchema, type OrganizationSettings } from '@bioprocess/shared/organization-settings';
import { useApi } from '../api/hooks.ts';
import type { Camelize } from '../entities/types.ts';

/** The caller's organisation's settings, as the console reads every answer: keys in camelCase (`timeZone`). */
export type OrganizationSettingsView = Camelize<OrganizationSettings>;

export const ORGANIZATION_SETTINGS_PATH = '/api/v1/organization-settings';

export function useOrganizationSettings() {
  return useApi<OrganizationSettingsView>(ORGANIZATION_SETTINGS_PATH, organizationSettingsSchema);
}

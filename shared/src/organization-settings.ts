/**
 * Settings an organisation keeps for all its members: for now the time zone its instruments write
 * zone-less timestamps in (CSV uploads read such timestamps in it unless the upload names another).
 */
import { z } from 'zod';
import { isValidTimeZone, parseTimeZone, TIME_ZONE_MESSAGE } from './csv/time-zones.ts';

export const DEFAULT_ORGANIZATION_TIME_ZONE = 'UTC';

export const organizationSettingsSchema = z.object({
  organization_id: z.number().int(),
  time_zone: z.string().describe('IANA zone name or fixed offset, e.g. Europe/Amsterdam or +02:00'),
});
export type OrganizationSettings = z.infer<typeof organizationSettingsSchema>;

export const organizationSettingsUpdateSchema = z.object({
  time_zone: z
    .string({ error: 'time_zone is required' })
    .trim()
    .max(64)
    .refine(isValidTimeZone, { error: (issue) => TIME_ZONE_MESSAGE(String(issue.input)) })
    // Stored as the runtime spells it ('europe/amsterdam' -> 'Europe/Amsterdam', '+2' -> '+02:00').
    .transform((zone) => parseTimeZone(zone)!.name),
});
export type OrganizationSettingsUpdate = z.infer<typeof organizationSettingsUpdateSchema>;

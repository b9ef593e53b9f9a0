/**
 * GET/PUT /api/v1/organization-settings: the settings of the caller's current organisation. Every
 * member reads them (the CSV wizard shows the default zone); admins change them.
 */
import type { Pool, PoolClient } from 'pg';
import {
  DEFAULT_ORGANIZATION_TIME_ZONE, organizationSettingsSchema, organizationSettingsUpdateSchema, type OrganizationSettings,
} from '@bioprocess/shared/organization-settings';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { notFound } from '../platform/http-error.ts';
import { withTransaction } from '@bioprocess/shared/server/postgres';
import { recordAudit } from '../audit/record.ts';
import { principalOf } from '../auth/authenticate.ts';
import { ORGANIZATION_MESSAGES } from './routes.ts';

/** The zone zone-less CSV timestamps of the organisation are read in when an upload names none. */
export async function organizationTimeZone(pg: Pool | PoolClient, organizationId: number): Promise<string> {
  const { rows } = await pg.query<{ time_zone: string }>('SELECT time_zone FROM organizations WHERE id = $1', [organizationId]);
  return rows[0]?.time_zone ?? DEFAULT_ORGANIZATION_TIME_ZONE;
}

async function readSettings(pg: Pool | PoolClient, organizationId: number, forUpdate = false): Promise<OrganizationSettings> {
  const { rows } = await pg.query<{ id: number; time_zone: string }>(
    `SELECT id, time_zone FROM organizations WHERE id = $1${forUpdate ? ' FOR NO KEY UPDATE' : ''}`, [organizationId]);
  if (!rows[0]) throw notFound(ORGANIZATION_MESSAGES.notFound);
  return { organization_id: Number(rows[0].id), time_zone: rows[0].time_zone };
}

export async function organizationSettingsRoutes(app: App, deps: AppDeps): Promise<void> {
  app.get('/api/v1/organization-settings', {
    config: { access: 'read' },
    schema: { tags: ['organizations'], summary: "Your current organisation's settings", response: { 200: organizationSettingsSchema } },
  }, async (request) => readSettings(deps.pg, principalOf(request).organizationId));

  app.put('/api/v1/organization-settings', {
    config: { access: 'manage_users' },
    schema: {
      tags: ['organizations'], summary: "Change your current organisation's settings (admins)",
      body: organizationSettingsUpdateSchema, response: { 200: organizationSettingsSchema },
    },
  }, async (request) => {
    const organizationId = principalOf(request).organizationId;
    return withTransaction(deps.pg, async (client) => {
      const before = await readSettings(client, organizationId, true);
      await client.query('UPDATE organizations SET time_zone = $2, updated_at = now() WHERE id = $1', [organizationId, request.body.time_zone]);
      const after = await readSettings(client, organizationId);
      await recordAudit(client, request, {
        event_type: 'organization.settings_updated', action: 'update', resource_type: 'organization', resource_id: organizationId,
        changes: { before: { time_zone: before.time_zone }, after: { time_zone: after.time_zone } },
      });
      return after;
    });
  });
}

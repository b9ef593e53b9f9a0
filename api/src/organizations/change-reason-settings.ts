/**
 * GET/PUT /api/v1/organization-settings/change-reasons: per record kind whether an edit or deletion needs
 * a reason, and the pick-list of reasons. Every member reads them (the console asks for a reason when
 * they say so); admins change them, audited like every setting.
 */
import {
  CHANGE_REASON_KINDS, changeReasonSettingsSchema, changeReasonSettingsUpdateSchema,
} from '@bioprocess/shared/change-reasons';
import { withTransaction } from '@bioprocess/shared/server/postgres';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { readChangeReasonSettings } from '../platform/change-reason.ts';
import { recordAudit } from '../audit/record.ts';
import { principalOf } from '../auth/authenticate.ts';

export async function changeReasonSettingsRoutes(app: App, deps: AppDeps): Promise<void> {
  app.get('/api/v1/organization-settings/change-reasons', {
    config: { access: 'read' },
    schema: {
      tags: ['organizations'],
      summary: 'Which record kinds need a reason for change (off, optional, required) and the reasons to pick from',
      response: { 200: changeReasonSettingsSchema },
    },
  }, async (request) => readChangeReasonSettings(deps.pg, principalOf(request).organizationId));

  app.put('/api/v1/organization-settings/change-reasons', {
    config: { access: 'manage_users' },
    schema: {
      tags: ['organizations'],
      summary: 'Change which record kinds need a reason and the pick-list (admins); kinds left out keep their setting',
      body: changeReasonSettingsUpdateSchema,
      response: { 200: changeReasonSettingsSchema },
    },
  }, async (request) => {
    const organizationId = principalOf(request).organizationId;
    return withTransaction(deps.pg, async (client) => {
      // The row lock orders concurrent edits, so neither loses the other's kinds.
      await client.query('INSERT INTO organization_change_reasons (organization_id) VALUES ($1) ON CONFLICT DO NOTHING', [organizationId]);
      await client.query('SELECT 1 FROM organization_change_reasons WHERE organization_id = $1 FOR UPDATE', [organizationId]);
      const before = await readChangeReasonSettings(client, organizationId);
      const policies = { ...before.policies, ...request.body.policies };
      const reasons = request.body.reasons ?? before.reasons;
      await client.query(
        'UPDATE organization_change_reasons SET policies = $2, reasons = $3, updated_at = now() WHERE organization_id = $1',
        [organizationId, JSON.stringify(Object.fromEntries(CHANGE_REASON_KINDS.map((kind) => [kind, policies[kind]]))), JSON.stringify(reasons)],
      );
      const after = { policies, reasons };
      await recordAudit(client, request, {
        event_type: 'organization.change_reasons_updated', action: 'update', resource_type: 'organization', resource_id: organizationId,
        changes: { before, after },
      });
      return after;
    });
  });
}

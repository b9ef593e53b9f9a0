/**
 * The organisation's session policy: minutes a session may stay unused before it is refused
 * (inactivity sign-out), and how recent a sign-in must be for a signature to go without the password.
 * Admins change it through PUT /api/v1/session-policy; an organisation without a row has the defaults.
 */
import type { Queryable } from '@bioprocess/shared/server/postgres';
import { DEFAULT_SESSION_POLICY, sessionPolicySchema, type SessionPolicy } from '@bioprocess/shared/run-review';
import { withTransaction } from '@bioprocess/shared/server/postgres';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { recordAudit } from '../audit/record.ts';
import { principalOf } from './authenticate.ts';

export async function readSessionPolicy(db: Queryable, organizationId: number): Promise<SessionPolicy> {
  const { rows } = await db.query<SessionPolicy>(
    'SELECT inactivity_minutes, signing_reauth_minutes FROM session_policies WHERE organization_id = $1', [organizationId]);
  return rows[0] ?? DEFAULT_SESSION_POLICY;
}

export async function sessionPolicyRoutes(app: App, deps: AppDeps): Promise<void> {
  const tags = ['auth'];
  app.get('/api/v1/session-policy', {
    config: { access: 'read' },
    schema: {
      tags, summary: "Your organisation's session policy",
      description: 'inactivity_minutes: a session unused for longer is refused (401); signing_reauth_minutes: signing asks for the password unless the signer signed in within this many minutes (0: always).',
      response: { 200: sessionPolicySchema },
    },
  }, async (request) => readSessionPolicy(deps.pg, principalOf(request).organizationId));

  app.put('/api/v1/session-policy', {
    config: { access: 'manage_users' },
    schema: { tags, summary: "Change your organisation's session policy (admins)", body: sessionPolicySchema, response: { 200: sessionPolicySchema } },
  }, async (request) => {
    const { organizationId } = principalOf(request);
    return withTransaction(deps.pg, async (client) => {
      await client.query('SELECT id FROM organizations WHERE id = $1 FOR NO KEY UPDATE', [organizationId]);
      const before = await readSessionPolicy(client, organizationId);
      const after = request.body;
      await client.query(
        `INSERT INTO session_policies (organization_id, inactivity_minutes, signing_reauth_minutes) VALUES ($1, $2, $3)
         ON CONFLICT (organization_id) DO UPDATE SET inactivity_minutes = EXCLUDED.inactivity_minutes, signing_reauth_minutes = EXCLUDED.signing_reauth_minutes`,
        [organizationId, after.inactivity_minutes, after.signing_reauth_minutes],
      );
      await recordAudit(client, request, {
        event_type: 'organization.session_policy_updated', action: 'update', resource_type: 'organization', resource_id: organizationId,
        changes: { before, after },
      });
      return after;
    });
  });
}

/** The signature meanings an organisation signs with: the built-in ones and its own, which admins maintain. */
import { z } from 'zod';
import { BUILT_IN_SIGNATURE_MEANINGS, signatureMeaningSchema, signatureMeaningsUpdateSchema } from '@bioprocess/shared/run-review';
import { withTransaction } from '@bioprocess/shared/server/postgres';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { badRequest } from '../platform/http-error.ts';
import { principalOf } from '../auth/authenticate.ts';
import { recordAudit } from '../audit/record.ts';
import { listSignatureMeanings, replaceOrganizationMeanings } from './repository.ts';

const tags = ['Run review'];

export async function signatureMeaningRoutes(app: App, deps: AppDeps): Promise<void> {
  app.get('/api/v1/signature-meanings', {
    config: { access: 'read' },
    schema: { tags, summary: 'The meanings a signature can have', response: { 200: z.array(signatureMeaningSchema) } },
  }, async (request) => listSignatureMeanings(deps.pg, principalOf(request).organizationId));

  app.put('/api/v1/signature-meanings', {
    config: { access: 'manage_users' },
    schema: {
      tags, summary: "Replace the organisation's own signature meanings (admins)",
      description: 'The built-in meanings (authored, reviewed, approved, released) always exist and cannot be redefined. Signatures keep '
        + 'the label they were given with.',
      body: signatureMeaningsUpdateSchema, response: { 200: z.array(signatureMeaningSchema) },
    },
  }, async (request) => {
    const { organizationId } = principalOf(request);
    const builtIn = new Set<string>(BUILT_IN_SIGNATURE_MEANINGS.map((meaning) => meaning.code));
    const codes = new Set<string>();
    request.body.meanings.forEach((meaning, index) => {
      if (builtIn.has(meaning.code)) throw badRequest(`meanings.${index}.code: '${meaning.code}' is a built-in meaning`);
      if (codes.has(meaning.code)) throw badRequest(`meanings.${index}.code: '${meaning.code}' is listed twice`);
      codes.add(meaning.code);
    });
    return withTransaction(deps.pg, async (client) => {
      await client.query('SELECT id FROM organizations WHERE id = $1 FOR NO KEY UPDATE', [organizationId]);
      const before = await listSignatureMeanings(client, organizationId);
      await replaceOrganizationMeanings(client, organizationId, request.body.meanings);
      const after = await listSignatureMeanings(client, organizationId);
      await recordAudit(client, request, {
        event_type: 'organization.signature_meanings_updated', action: 'update', resource_type: 'organization', resource_id: organizationId,
        changes: { before: before.filter((meaning) => !meaning.built_in), after: after.filter((meaning) => !meaning.built_in) },
      });
      return after;
    });
  });
}

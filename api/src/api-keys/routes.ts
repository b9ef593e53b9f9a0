/**
 * Organisation API keys for machines (instrument feeds): signed-in admins list, create and revoke
 * them (a key itself never may). The key (`bpk_...`) is shown once at creation and stored only as its
 * sha256 hash; it acts with its role (viewer or editor) in the organisation it was created for, until
 * it is revoked or its optional expiry passes. Its creator is recorded.
 */
import { z } from 'zod';
import { apiKeySchema, createApiKeyRequestSchema, createdApiKeySchema, idParamsSchema } from '@bioprocess/shared/auth-contracts';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { withTransaction } from '@bioprocess/shared/server/postgres';
import { notFound } from '../platform/http-error.ts';
import { recordAudit } from '../audit/record.ts';
import { principalOf } from '../auth/authenticate.ts';
import { sessionUserId } from '../auth/routes.ts';
import { API_KEY_PREFIX } from '../auth/principal.ts';
import { issueToken } from '../auth/tokens.ts';
import { insertApiKey, listApiKeys, revokeApiKey, toApiKey } from './repository.ts';

export const API_KEY_NOT_FOUND = 'API key not found';

/** How much of a key is kept readable to recognise it in lists. */
const VISIBLE_PREFIX_LENGTH = API_KEY_PREFIX.length + 6;

export async function apiKeyRoutes(app: App, deps: AppDeps): Promise<void> {
  app.get('/api/v1/api-keys', {
    config: { access: 'manage_users' },
    schema: { tags: ['api-keys'], summary: 'API keys of the current organisation, revoked ones included', response: { 200: z.array(apiKeySchema) } },
  }, async (request) => {
    return (await listApiKeys(deps.pg, principalOf(request).organizationId)).map(toApiKey);
  });

  app.post('/api/v1/api-keys', {
    config: { access: 'manage_users' },
    schema: { tags: ['api-keys'], summary: 'Create a key; the answer carries the key, shown this once', body: createApiKeyRequestSchema, response: { 201: createdApiKeySchema } },
  }, async (request, reply) => {
    const creatorId = sessionUserId(request);
    const principal = principalOf(request);
    const { token, tokenHash } = issueToken(API_KEY_PREFIX);
    const created = await withTransaction(deps.pg, async (client) => {
      const apiKey = toApiKey(await insertApiKey(client, {
        organizationId: principal.organizationId, name: request.body.name, keyHash: tokenHash,
        keyPrefix: token.slice(0, VISIBLE_PREFIX_LENGTH), role: request.body.role, createdBy: creatorId,
        expiresAt: request.body.expires_at ?? null,
      }));
      await recordAudit(client, request, {
        event_type: 'api_key.created', action: 'create', resource_type: 'api_key', resource_id: apiKey.id,
        changes: { after: { name: apiKey.name, role: apiKey.role, key_prefix: apiKey.key_prefix, expires_at: apiKey.expires_at, created_by: apiKey.created_by } },
      });
      return apiKey;
    });
    return reply.status(201).send({ ...created, key: token });
  });

  app.delete('/api/v1/api-keys/:id', {
    config: { access: 'manage_users' },
    schema: { tags: ['api-keys'], summary: 'Revoke a key; it stops working at once', params: idParamsSchema },
  }, async (request, reply) => {
    const principal = principalOf(request);
    await withTransaction(deps.pg, async (client) => {
      const revoked = await revokeApiKey(client, principal.organizationId, request.params.id);
      if (!revoked) throw notFound(API_KEY_NOT_FOUND);
      await recordAudit(client, request, {
        event_type: 'api_key.revoked', action: 'delete', resource_type: 'api_key', resource_id: revoked.id,
        changes: { before: { name: revoked.name, role: revoked.role, revoked: false }, after: { revoked: true } },
      });
    });
    // Before the answer: the next request with the key must not race the change's notification.
    deps.accessCaches.forgetAll();
    return reply.status(204).send();
  });
}

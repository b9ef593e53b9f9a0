/**
 * Organisation routes: superusers list, create, update and delete them; any member may read their own
 * (the sidebar shows its name). Another organisation answers 404 to a non-superuser.
 */
import { z } from 'zod';
import { idParamsSchema, organizationRequestSchema, organizationSchema } from '@bioprocess/shared/auth-contracts';
import { withTransaction } from '@bioprocess/shared/server/postgres';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { conflict, notFound } from '../platform/http-error.ts';
import { recordAudit } from '../audit/record.ts';
import { principalOf } from '../auth/authenticate.ts';
import {
  deleteOrganization, findOrganization, insertOrganization, listOrganizations, toOrganization, updateOrganization, type OrganizationRow,
} from './repository.ts';

export const ORGANIZATION_MESSAGES = {
  notFound: 'Organization not found',
  deleteCurrent: 'You cannot delete the organization you are currently working in: switch to another organization first',
  stillInUse: 'This organization still has data that prevents its deletion',
} as const;

function auditFields(row: OrganizationRow): Record<string, unknown> {
  return { name: row.name, description: row.description };
}

export async function organizationRoutes(app: App, deps: AppDeps): Promise<void> {
  app.get('/api/v1/organizations', {
    config: { access: 'superuser' },
    schema: { tags: ['organizations'], summary: 'All organisations with their user counts', response: { 200: z.array(organizationSchema) } },
  }, async () => {
    return (await listOrganizations(deps.pg)).map(toOrganization);
  });

  app.get('/api/v1/organizations/:id', {
    config: { access: 'read' },
    schema: { tags: ['organizations'], summary: 'One organisation (members: their own; superusers: any)', params: idParamsSchema, response: { 200: organizationSchema } },
  }, async (request) => {
    const principal = principalOf(request);
    if (!principal.superuser && request.params.id !== principal.organizationId) throw notFound(ORGANIZATION_MESSAGES.notFound);
    const row = await findOrganization(deps.pg, request.params.id);
    if (!row) throw notFound(ORGANIZATION_MESSAGES.notFound);
    return toOrganization(row);
  });

  app.post('/api/v1/organizations', {
    config: { access: 'superuser' },
    schema: { tags: ['organizations'], summary: 'Create an organisation', body: organizationRequestSchema, response: { 201: organizationSchema } },
  }, async (request, reply) => {
    const created = await withTransaction(deps.pg, async (client) => {
      const id = await insertOrganization(client, { name: request.body.name, description: request.body.description ?? null });
      const organization = (await findOrganization(client, id))!;
      await recordAudit(client, request, {
        event_type: 'organization.created', action: 'create', resource_type: 'organization', resource_id: organization.id,
        changes: { after: auditFields(organization) },
      });
      return organization;
    });
    return reply.status(201).send(toOrganization(created));
  });

  app.put('/api/v1/organizations/:id', {
    config: { access: 'superuser' },
    schema: { tags: ['organizations'], summary: 'Rename or describe an organisation', params: idParamsSchema, body: organizationRequestSchema, response: { 200: organizationSchema } },
  }, async (request) => {
    const after = await withTransaction(deps.pg, async (client) => {
      const before = await findOrganization(client, request.params.id, 'change');
      if (!before) throw notFound(ORGANIZATION_MESSAGES.notFound);
      await updateOrganization(client, before.id, { name: request.body.name, description: request.body.description ?? null });
      const updated = (await findOrganization(client, before.id))!;
      await recordAudit(client, request, {
        event_type: 'organization.updated', action: 'update', resource_type: 'organization', resource_id: updated.id,
        changes: { before: auditFields(before), after: auditFields(updated) },
      });
      return updated;
    });
    return toOrganization(after);
  });

  app.delete('/api/v1/organizations/:id', {
    config: { access: 'superuser' },
    schema: { tags: ['organizations'], summary: 'Delete an organisation with its users and data', params: idParamsSchema },
  }, async (request, reply) => {
    const principal = principalOf(request);
    if (request.params.id === principal.organizationId) throw conflict(ORGANIZATION_MESSAGES.deleteCurrent);
    await withTransaction(deps.pg, async (client) => {
      const row = await findOrganization(client, request.params.id, 'delete');
      if (!row) throw notFound(ORGANIZATION_MESSAGES.notFound);
      await deleteOrganization(client, row.id);
      await recordAudit(client, request, {
        event_type: 'organization.deleted', action: 'delete', resource_type: 'organization', resource_id: row.id,
        changes: { before: { ...auditFields(row), user_count: row.user_count } },
      });
    }).catch((error: unknown) => {
      // Foreign keys declared RESTRICT between the organisation's own rows can refuse a cascade.
      if ((error as { code?: string }).code === '23503') throw conflict(ORGANIZATION_MESSAGES.stillInUse);
      throw error;
    });
    // Its keys and instruments are refused from the answer on, not from their changes' notifications.
    deps.accessCaches.forgetAll();
    return reply.status(204).send();
  });
}

/**
 * Integration routes: connections to MQTT brokers and OPC UA servers, their mappings to instruments,
 * their status and browsing. Admins write; editors and viewers read. A connection's secret is written
 * encrypted and never answered (`has_secret`); each connection owns an organisation API key, made here
 * and stored encrypted, that its connector posts readings with (revoked with the connection).
 */
import { z } from 'zod';
import type { FastifyRequest } from 'fastify';
import type { PoolClient } from 'pg';
import { errorResponseSchema } from '@bioprocess/shared/entities';
import {
  browseRequestSchema, browseResponseSchema, connectionCreateSchema, connectionIdParamsSchema, connectionStatusSchema,
  connectionUpdateSchema, endpointProblem, INTEGRATION_MESSAGES, integrationConnectionSchema, integrationMappingSchema,
  mappingBulkSchema, mappingCreateSchema, mappingIdParamsSchema, mappingProblem, mappingUpdateSchema, mqttSettingsSchema,
  opcuaSettingsSchema, type ConnectionCreate, type IntegrationConnection, type IntegrationKind, type MappingCreate, type OpcuaSettings,
} from '@bioprocess/shared/integrations';
import { decryptSecret, encryptSecret, IntegrationSecretError, parseSecretKey, secretContext } from '@bioprocess/shared/server/integration-secrets';
import { userCertificatePairProblem, userCertificateProblem } from '@bioprocess/shared/server/opcua-user-certificate';
import { withTransaction } from '@bioprocess/shared/server/postgres';
import { insertInstrument, listInstrumentsById } from '@bioprocess/shared/server/instruments-repository';
import { shareLockUnitOperationEquipment } from '@bioprocess/shared/server/unit-operations-repository';
import { CATALOGUE_MESSAGES } from '@bioprocess/shared/instruments/catalogue';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { badRequest, HttpError } from '../platform/http-error.ts';
import { principalOf } from '../auth/authenticate.ts';
import { sessionUserId } from '../auth/routes.ts';
import { API_KEY_PREFIX } from '../auth/principal.ts';
import { issueToken } from '../auth/tokens.ts';
import { recordAudit } from '../audit/record.ts';
import { insertApiKey, revokeApiKey } from '../api-keys/repository.ts';
import { assertInstrumentNameFree, rethrowDuplicateName, toInstrument } from '../instruments/repository.ts';
import { resolveInstrumentType } from '../instrument-catalogue/repository.ts';
import { createBrowseRequests } from './browse.ts';
import { readConnectionStatus } from './status.ts';
import {
  deleteConnection, deleteMapping, insertConnection, insertMapping, listConnections, listMappings, nextConnectionId,
  readSecretCiphertext, requireConnection, requireMapping, updateConnection, updateMapping, type MappingValues,
} from './repository.ts';

const tags = ['Integrations'];
const errors = { 400: errorResponseSchema, 404: errorResponseSchema };
const BASE = '/api/v1/integrations/connections';

function settingsOf(kind: IntegrationKind, settings: unknown): unknown {
  const parsed = (kind === 'mqtt' ? mqttSettingsSchema : opcuaSettingsSchema).safeParse(settings);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw badRequest(`settings.${issue.path.join('.')}: ${issue.message}`.replace(/\.: /, ': '));
  }
  return parsed.data;
}

/**
 * A certificate sign-in's pair checked together: the certificate (and, when it is new, its validity
 * now) and the private key that must sign for it. The key is named, never quoted.
 */
function assertUserCertificatePair(certificatePem: string, privateKeyPem: string | null, checkValidity: boolean): void {
  const certificateProblem = userCertificateProblem(certificatePem, { checkValidity });
  if (certificateProblem) throw badRequest(`settings.user_certificate_pem: ${certificateProblem}`);
  if (!privateKeyPem) throw badRequest(`secret: ${INTEGRATION_MESSAGES.privateKeyRequired}`);
  const pairProblem = userCertificatePairProblem(certificatePem, privateKeyPem, { checkValidity });
  if (pairProblem) throw badRequest(`secret: ${pairProblem}`);
}

/** The connection as it appears in the audit trail: never its secret. */
function audited(connection: IntegrationConnection) {
  return { name: connection.name, kind: connection.kind, endpoint_url: connection.endpoint_url, settings: connection.settings,
    has_secret: connection.has_secret, enabled: connection.enabled, buffer_limit_bytes: connection.buffer_limit_bytes };
}

export async function integrationRoutes(app: App, deps: AppDeps): Promise<void> {
  const browseRequests = createBrowseRequests(deps.env, deps.logger);
  app.addHook('onClose', async () => browseRequests.close());

  const secretKey = (): Buffer => {
    if (!deps.env.INTEGRATIONS_SECRET_KEY) throw new HttpError(503, INTEGRATION_MESSAGES.secretKeyMissing);
    return parseSecretKey(deps.env.INTEGRATIONS_SECRET_KEY);
  };

  /** The stored private key, decrypted only to be checked against a new certificate. */
  async function storedSourceSecret(client: PoolClient, organizationId: number, id: number): Promise<string | null> {
    const stored = await readSecretCiphertext(client, organizationId, id);
    if (!stored) return null;
    try {
      return decryptSecret(secretKey(), stored, secretContext.source(id));
    } catch (error) {
      if (error instanceof IntegrationSecretError) throw badRequest(`secret: ${INTEGRATION_MESSAGES.storedPrivateKeyUnreadable}`);
      throw error;
    }
  }

  /** The mapping's stored values: its instrument checked (or created) in the organisation, its fields checked for the kind. */
  async function mappingValues(client: PoolClient, request: FastifyRequest, organizationId: number, kind: IntegrationKind, body: MappingCreate, label: string): Promise<MappingValues> {
    const problem = mappingProblem(kind, body);
    if (problem) throw badRequest(`${label}${problem}`);
    let instrumentId: number;
    if (body.instrument) {
      const unitOperation = await shareLockUnitOperationEquipment(client, organizationId, body.instrument.unit_operation_id);
      if (!unitOperation) throw badRequest(`${label}${INTEGRATION_MESSAGES.unitOperationNotFound}`);
      const equipmentId = unitOperation.equipment_id;
      if (equipmentId === null) throw badRequest(`${label}${INTEGRATION_MESSAGES.unitOperationWithoutEquipment}`);
      await assertInstrumentNameFree(client, organizationId, equipmentId, body.instrument.name, null);
      const type = await resolveInstrumentType(client, organizationId, body.instrument.type ?? 'other');
      if (type === null) throw badRequest(`${label}${CATALOGUE_MESSAGES.unknownType(body.instrument.type ?? 'other')}`);
      const created = toInstrument(await insertInstrument(client, organizationId, {
        equipment_id: equipmentId, name: body.instrument.name, type, unit: body.instrument.unit ?? body.unit ?? null, alias: null,
      }));
      await recordAudit(client, request, {
        event_type: 'data', action: 'create', resource_type: 'instrument', resource_id: created.id, changes: { before: null, after: created },
      });
      instrumentId = created.id;
    } else {
      if ((await listInstrumentsById(client, organizationId, [body.instrument_id!])).length === 0) throw badRequest(`${label}${INTEGRATION_MESSAGES.instrumentNotFound}`);
      instrumentId = body.instrument_id!;
    }
    return {
      source: body.source, payloadFormat: body.payload_format, valuePath: body.value_path, timestampPath: body.timestamp_path,
      instrumentId, unit: body.unit, badQuality: body.bad_quality,
    };
  }

  app.get(BASE, {
    config: { access: 'read' },
    schema: { tags, summary: 'List integration connections', description: 'In creation order. Secrets are never answered: `has_secret` says whether one is stored.', response: { 200: z.array(integrationConnectionSchema) } },
  }, async (request) => listConnections(deps.pg, principalOf(request).organizationId));

  app.post(BASE, {
    config: { access: 'manage_users' },
    schema: {
      tags, summary: 'Create an integration connection',
      description: 'An MQTT broker (mqtt://, mqtts://) or an OPC UA server (opc.tcp://). The secret (password or private key) is stored encrypted and never answered. '
        + 'The connection gets an organisation API key of its own, which its connector posts readings with. A name already used answers 409.',
      body: connectionCreateSchema, response: { 201: integrationConnectionSchema, 409: errorResponseSchema, 503: errorResponseSchema, ...errors },
    },
  }, async (request, reply) => {
    const userId = sessionUserId(request);
    const { organizationId } = principalOf(request);
    const body: ConnectionCreate = request.body;
    const key = secretKey();
    if (body.kind === 'opcua' && body.settings.user_identity === 'certificate') {
      assertUserCertificatePair(body.settings.user_certificate_pem!, body.secret || null, true);
    }
    const connection = await withTransaction(deps.pg, async (client) => {
      const id = await nextConnectionId(client);
      const { token, tokenHash } = issueToken(API_KEY_PREFIX);
      const apiKey = await insertApiKey(client, {
        organizationId, name: `Integration: ${body.name}`.slice(0, 200), keyHash: tokenHash, keyPrefix: token.slice(0, API_KEY_PREFIX.length + 6),
        role: 'editor', createdBy: userId, expiresAt: null,
      });
      const created = await insertConnection(client, organizationId, id, {
        name: body.name, kind: body.kind, endpointUrl: body.endpoint_url, settings: body.settings, enabled: body.enabled, bufferLimitBytes: body.buffer_limit_bytes,
      }, {
        secret: body.secret ? encryptSecret(key, body.secret, secretContext.source(id)) : null,
        apiKeyId: apiKey.id, apiKey: encryptSecret(key, token, secretContext.apiKey(id)),
      });
      await recordAudit(client, request, {
        event_type: 'data', action: 'create', resource_type: 'integration_connection', resource_id: created.id, changes: { before: null, after: audited(created) },
      });
      return created;
    });
    return reply.status(201).send(connection);
  });

  app.get(`${BASE}/:id`, {
    config: { access: 'read' },
    schema: { tags, summary: 'Get an integration connection', params: connectionIdParamsSchema, response: { 200: integrationConnectionSchema, ...errors } },
  }, async (request) => (await requireConnection(deps.pg, principalOf(request).organizationId, request.params.id)).connection);

  app.patch(`${BASE}/:id`, {
    config: { access: 'manage_users' },
    schema: {
      tags, summary: 'Update an integration connection',
      description: 'Fields left out keep their value; `settings` is replaced whole; `secret: null` removes the stored secret. The kind cannot change. The connector applies the change within seconds.',
      params: connectionIdParamsSchema, body: connectionUpdateSchema, response: { 200: integrationConnectionSchema, 409: errorResponseSchema, 503: errorResponseSchema, ...errors },
    },
  }, async (request) => {
    const { organizationId } = principalOf(request);
    const body = request.body;
    const newSecret = typeof body.secret === 'string' && body.secret !== '' ? body.secret : null;
    const key = newSecret ? secretKey() : null;
    return withTransaction(deps.pg, async (client) => {
      const { connection: before } = await requireConnection(client, organizationId, request.params.id, { lock: true });
      if (body.kind !== undefined && body.kind !== before.kind) throw badRequest(INTEGRATION_MESSAGES.kindChange);
      const endpointUrl = body.endpoint_url ?? before.endpoint_url;
      const problem = endpointProblem(before.kind, endpointUrl);
      if (problem) throw badRequest(`endpoint_url: ${problem}`);
      // Re-read through the input schema: what is stored never carries the answer's derived fields.
      const settings = settingsOf(before.kind, body.settings !== undefined ? body.settings : before.settings);
      let secret: Buffer | null | undefined = body.secret === undefined ? undefined : newSecret === null ? null : encryptSecret(key!, newSecret, secretContext.source(before.id));
      if (before.kind === 'opcua') {
        const next = settings as OpcuaSettings;
        const wasCertificate = before.settings.user_identity === 'certificate';
        if (next.user_identity === 'certificate') {
          if (body.secret !== undefined && newSecret === null) throw badRequest(`secret: ${INTEGRATION_MESSAGES.privateKeyRequired}`);
          const certificateChanged = !wasCertificate || next.user_certificate_pem !== before.settings.user_certificate_pem;
          // A renewed certificate may keep its key: the stored one is checked against it.
          if (certificateChanged || newSecret) {
            const privateKey = newSecret ?? (wasCertificate ? await storedSourceSecret(client, organizationId, before.id) : null);
            assertUserCertificatePair(next.user_certificate_pem!, privateKey, certificateChanged);
          }
        } else if (wasCertificate && body.secret === undefined) {
          // A private key is no password: leaving certificate sign-in removes it rather than keeping it unused.
          secret = null;
        }
      }
      const after = await updateConnection(client, organizationId, before.id, {
        name: body.name ?? before.name, endpointUrl, settings,
        enabled: body.enabled ?? before.enabled, bufferLimitBytes: body.buffer_limit_bytes ?? before.buffer_limit_bytes,
      }, secret);
      await recordAudit(client, request, {
        event_type: 'data', action: 'update', resource_type: 'integration_connection', resource_id: after.id,
        changes: { before: audited(before), after: { ...audited(after), ...(secret !== undefined ? { secret_changed: true } : {}) } },
      });
      return after;
    });
  });

  app.delete(`${BASE}/:id`, {
    config: { access: 'manage_users' },
    schema: { tags, summary: 'Delete an integration connection', description: 'Removes its mappings and revokes its API key; the instruments and their data stay.', params: connectionIdParamsSchema, response: { 204: z.null(), ...errors } },
  }, async (request, reply) => {
    const { organizationId } = principalOf(request);
    await withTransaction(deps.pg, async (client) => {
      const { connection, apiKeyId } = await requireConnection(client, organizationId, request.params.id, { lock: true });
      await deleteConnection(client, organizationId, connection.id);
      if (apiKeyId !== null) await revokeApiKey(client, organizationId, apiKeyId);
      await recordAudit(client, request, {
        event_type: 'data', action: 'delete', resource_type: 'integration_connection', resource_id: connection.id, changes: { before: audited(connection), after: null },
      });
    });
    deps.accessCaches.forgetAll();
    return reply.status(204).send(null);
  });

  app.get(`${BASE}/:id/status`, {
    config: { access: 'read' },
    schema: {
      tags, summary: "A connection's live status",
      description: 'What the connector holding the connection last published (every few seconds): its state, last message, rates over the last minute, recent errors and its store-and-forward buffer. '
        + "'disconnected' with nothing else when no connector runs it.",
      params: connectionIdParamsSchema, response: { 200: connectionStatusSchema, ...errors },
    },
  }, async (request) => {
    const { connection } = await requireConnection(deps.pg, principalOf(request).organizationId, request.params.id);
    return readConnectionStatus(deps.redis, deps.env.QUEUE_PREFIX, connection, deps.logger);
  });

  app.post(`${BASE}/:id/browse`, {
    config: { access: 'read' },
    schema: {
      tags, summary: "Browse a connection's source",
      description: 'OPC UA: the children of `node_id` (the Objects folder when null), with units where the server says them. MQTT: the topics the connector saw in the last 10 minutes, with a sample payload. '
        + 'Answered by the connector running the connection: 503 when none answers within 10 s, 502 when the source refused.',
      params: connectionIdParamsSchema, body: browseRequestSchema,
      response: { 200: browseResponseSchema, 502: errorResponseSchema, 503: errorResponseSchema, ...errors },
    },
  }, async (request) => {
    const { organizationId } = principalOf(request);
    const { connection } = await requireConnection(deps.pg, organizationId, request.params.id);
    const result = await browseRequests.browse({ connection_id: connection.id, organization_id: organizationId, node_id: request.body.node_id });
    if (result === null) throw new HttpError(503, INTEGRATION_MESSAGES.noConnector);
    if ('error' in result) throw new HttpError(502, INTEGRATION_MESSAGES.browseFailed(result.error));
    return result;
  });

  app.get(`${BASE}/:id/mappings`, {
    config: { access: 'read' },
    schema: { tags, summary: "A connection's mappings", description: 'In creation order.', params: connectionIdParamsSchema, response: { 200: z.array(integrationMappingSchema), ...errors } },
  }, async (request) => {
    const { organizationId } = principalOf(request);
    const { connection } = await requireConnection(deps.pg, organizationId, request.params.id);
    return listMappings(deps.pg, organizationId, connection.id);
  });

  const mappingNote = 'A mapping names its instrument (`instrument_id`) or creates one (`instrument`: on the unit operation\'s equipment, type \'other\' unless given). '
    + 'MQTT mappings need `payload_format` (and `value_path` for json and sparkplug); OPC UA mappings have neither. The same source mapped twice to one instrument answers 409.';

  app.post(`${BASE}/:id/mappings`, {
    config: { access: 'manage_users' },
    schema: { tags, summary: 'Add a mapping', description: mappingNote, params: connectionIdParamsSchema, body: mappingCreateSchema, response: { 201: integrationMappingSchema, 409: errorResponseSchema, ...errors } },
  }, async (request, reply) => {
    const { organizationId } = principalOf(request);
    const mapping = await withTransaction(deps.pg, async (client) => {
      const { connection } = await requireConnection(client, organizationId, request.params.id, { lock: true });
      const created = await insertMapping(client, organizationId, connection.id, await mappingValues(client, request, organizationId, connection.kind, request.body, ''));
      await recordAudit(client, request, {
        event_type: 'data', action: 'create', resource_type: 'integration_mapping', resource_id: created.id, changes: { before: null, after: created },
      });
      return created;
    }).catch(rethrowDuplicateName);
    return reply.status(201).send(mapping);
  });

  app.post(`${BASE}/:id/mappings/bulk`, {
    config: { access: 'manage_users' },
    schema: {
      tags, summary: 'Add many mappings at once', description: `All or nothing: a bad mapping answers 400 naming its index and none is added. ${mappingNote}`,
      params: connectionIdParamsSchema, body: mappingBulkSchema, response: { 201: z.array(integrationMappingSchema), 409: errorResponseSchema, ...errors },
    },
  }, async (request, reply) => {
    const { organizationId } = principalOf(request);
    const mappings = await withTransaction(deps.pg, async (client) => {
      const { connection } = await requireConnection(client, organizationId, request.params.id, { lock: true });
      const created = [];
      for (const [index, body] of request.body.mappings.entries()) {
        const values = await mappingValues(client, request, organizationId, connection.kind, body, `mappings.${index}: `);
        created.push(await insertMapping(client, organizationId, connection.id, values).catch((error: unknown) => {
          if (error instanceof HttpError) throw new HttpError(error.statusCode, `mappings.${index}: ${error.message}`);
          throw error;
        }));
      }
      await recordAudit(client, request, {
        event_type: 'data', action: 'create', resource_type: 'integration_connection', resource_id: connection.id,
        changes: { before: null, after: { name: connection.name, mappings_added: created.length } },
      });
      return created;
    }).catch(rethrowDuplicateName);
    return reply.status(201).send(mappings);
  });

  app.patch(`${BASE}/:id/mappings/:mappingId`, {
    config: { access: 'manage_users' },
    schema: { tags, summary: 'Update a mapping', description: 'Fields left out keep their value.', params: mappingIdParamsSchema, body: mappingUpdateSchema, response: { 200: integrationMappingSchema, 409: errorResponseSchema, ...errors } },
  }, async (request) => {
    const { organizationId } = principalOf(request);
    const body = request.body;
    return withTransaction(deps.pg, async (client) => {
      const { connection } = await requireConnection(client, organizationId, request.params.id, { lock: true });
      const before = await requireMapping(client, organizationId, connection.id, request.params.mappingId, { lock: true });
      const merged: MappingCreate = {
        source: body.source ?? before.source,
        payload_format: body.payload_format !== undefined ? body.payload_format : before.payload_format,
        value_path: body.value_path !== undefined ? body.value_path || null : before.value_path,
        timestamp_path: body.timestamp_path !== undefined ? body.timestamp_path || null : before.timestamp_path,
        unit: body.unit !== undefined ? body.unit || null : before.unit,
        bad_quality: body.bad_quality ?? before.bad_quality,
        instrument_id: body.instrument_id ?? before.instrument_id,
      };
      const after = await updateMapping(client, organizationId, before.id, await mappingValues(client, request, organizationId, connection.kind, merged, ''));
      await recordAudit(client, request, {
        event_type: 'data', action: 'update', resource_type: 'integration_mapping', resource_id: after.id, changes: { before, after },
      });
      return after;
    });
  });

  app.delete(`${BASE}/:id/mappings/:mappingId`, {
    config: { access: 'manage_users' },
    schema: { tags, summary: 'Delete a mapping', description: 'The instrument and its data stay.', params: mappingIdParamsSchema, response: { 204: z.null(), ...errors } },
  }, async (request, reply) => {
    const { organizationId } = principalOf(request);
    await withTransaction(deps.pg, async (client) => {
      const { connection } = await requireConnection(client, organizationId, request.params.id, { lock: true });
      const before = await requireMapping(client, organizationId, connection.id, request.params.mappingId, { lock: true });
      await deleteMapping(client, organizationId, before.id);
      await recordAudit(client, request, {
        event_type: 'data', action: 'delete', resource_type: 'integration_mapping', resource_id: before.id, changes: { before, after: null },
      });
    });
    return reply.status(204).send(null);
  });
}

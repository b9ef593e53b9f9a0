/**
 * The api's statements on integration connections and mappings (reads shared with the connector are
 * in shared/src/server/integrations-repository.ts). Every statement is scoped to the organisation.
 */
import type { PoolClient } from 'pg';
import type { Queryable } from '@bioprocess/shared/server/postgres';
import {
  CONNECTION_COLUMNS, MAPPING_COLUMNS, toConnection, toMapping, type ConnectionRow, type MappingRow,
} from '@bioprocess/shared/server/integrations-repository';
import { INTEGRATION_MESSAGES, type IntegrationConnection, type IntegrationMapping, type PayloadFormat, type BadQualityPolicy } from '@bioprocess/shared/integrations';
import { conflict, notFound } from '../platform/http-error.ts';

export async function listConnections(db: Queryable, organizationId: number): Promise<IntegrationConnection[]> {
  const { rows } = await db.query<ConnectionRow>(
    `SELECT ${CONNECTION_COLUMNS} FROM integration_connections WHERE organization_id = $1 ORDER BY id`,
    [organizationId],
  );
  return rows.map(toConnection);
}

export interface StoredConnection {
  connection: IntegrationConnection;
  apiKeyId: number | null;
}

/** The organisation's connection, or a 404; `lock` takes it for update (a write follows). */
export async function requireConnection(db: Queryable, organizationId: number, id: number, options: { lock?: boolean } = {}): Promise<StoredConnection> {
  const { rows } = await db.query<ConnectionRow & { api_key_id: number | null }>(
    `SELECT ${CONNECTION_COLUMNS}, api_key_id FROM integration_connections
      WHERE id = $1 AND organization_id = $2${options.lock ? ' FOR UPDATE' : ''}`,
    [id, organizationId],
  );
  const row = rows[0];
  if (!row) throw notFound(INTEGRATION_MESSAGES.notFound);
  const { api_key_id: apiKeyId, ...rest } = row;
  return { connection: toConnection(rest), apiKeyId };
}

/** The stored source secret, still encrypted (the api decrypts it only to check a new certificate against its key). */
export async function readSecretCiphertext(db: Queryable, organizationId: number, id: number): Promise<Buffer | null> {
  const { rows } = await db.query<{ secret_ciphertext: Buffer | null }>(
    'SELECT secret_ciphertext FROM integration_connections WHERE id = $1 AND organization_id = $2', [id, organizationId],
  );
  return rows[0]?.secret_ciphertext ?? null;
}

export interface ConnectionValues {
  name: string;
  kind: string;
  endpointUrl: string;
  settings: unknown;
  enabled: boolean;
  bufferLimitBytes: number;
}

/** The id a new connection will have: its secrets are encrypted bound to it before the row exists. */
export async function nextConnectionId(db: PoolClient): Promise<number> {
  const { rows } = await db.query<{ id: number }>(`SELECT nextval(pg_get_serial_sequence('integration_connections', 'id')) AS id`);
  return Number(rows[0]!.id);
}

export async function insertConnection(
  db: PoolClient, organizationId: number, id: number, values: ConnectionValues,
  secrets: { secret: Buffer | null; apiKeyId: number; apiKey: Buffer },
): Promise<IntegrationConnection> {
  const { rows } = await db.query<ConnectionRow>(
    `INSERT INTO integration_connections
       (id, organization_id, name, kind, endpoint_url, settings, secret_ciphertext, api_key_id, api_key_ciphertext, enabled, buffer_limit_bytes)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING ${CONNECTION_COLUMNS}`,
    [id, organizationId, values.name, values.kind, values.endpointUrl, JSON.stringify(values.settings), secrets.secret,
      secrets.apiKeyId, secrets.apiKey, values.enabled, values.bufferLimitBytes],
  ).catch(rethrowDuplicateConnectionName);
  return toConnection(rows[0]!);
}

/** `secret`: undefined keeps the stored one, null removes it. */
export async function updateConnection(
  db: PoolClient, organizationId: number, id: number, values: Omit<ConnectionValues, 'kind'>, secret: Buffer | null | undefined,
): Promise<IntegrationConnection> {
  const { rows } = await db.query<ConnectionRow>(
    `UPDATE integration_connections
        SET name = $3, endpoint_url = $4, settings = $5, enabled = $6, buffer_limit_bytes = $7,
            secret_ciphertext = CASE WHEN $8 THEN $9::bytea ELSE secret_ciphertext END, updated_at = now()
      WHERE id = $1 AND organization_id = $2 RETURNING ${CONNECTION_COLUMNS}`,
    [id, organizationId, values.name, values.endpointUrl, JSON.stringify(values.settings), values.enabled, values.bufferLimitBytes,
      secret !== undefined, secret ?? null],
  ).catch(rethrowDuplicateConnectionName);
  return toConnection(rows[0]!);
}

/** Deletes the connection and, by cascade, its mappings. */
export async function deleteConnection(db: PoolClient, organizationId: number, id: number): Promise<void> {
  await db.query('DELETE FROM integration_connections WHERE id = $1 AND organization_id = $2', [id, organizationId]);
}

function rethrowDuplicateConnectionName(error: unknown): never {
  if ((error as { code?: string }).code === '23505') throw conflict(INTEGRATION_MESSAGES.duplicateName);
  throw error;
}

function rethrowDuplicateMapping(error: unknown): never {
  if ((error as { code?: string }).code === '23505') throw conflict(INTEGRATION_MESSAGES.duplicateMapping);
  throw error;
}

export async function listMappings(db: Queryable, organizationId: number, connectionId: number): Promise<IntegrationMapping[]> {
  const { rows } = await db.query<MappingRow>(
    `SELECT ${MAPPING_COLUMNS} FROM integration_mappings WHERE connection_id = $1 AND organization_id = $2 ORDER BY id`,
    [connectionId, organizationId],
  );
  return rows.map(toMapping);
}

export async function requireMapping(db: Queryable, organizationId: number, connectionId: number, id: number, options: { lock?: boolean } = {}): Promise<IntegrationMapping> {
  const { rows } = await db.query<MappingRow>(
    `SELECT ${MAPPING_COLUMNS} FROM integration_mappings WHERE id = $1 AND connection_id = $2 AND organization_id = $3${options.lock ? ' FOR UPDATE' : ''}`,
    [id, connectionId, organizationId],
  );
  if (!rows[0]) throw notFound(INTEGRATION_MESSAGES.mappingNotFound);
  return toMapping(rows[0]);
}

export interface MappingValues {
  source: string;
  payloadFormat: PayloadFormat | null;
  valuePath: string | null;
  timestampPath: string | null;
  instrumentId: number;
  unit: string | null;
  badQuality: BadQualityPolicy;
}

export async function insertMapping(db: PoolClient, organizationId: number, connectionId: number, values: MappingValues): Promise<IntegrationMapping> {
  const { rows } = await db.query<MappingRow>(
    `INSERT INTO integration_mappings (connection_id, organization_id, source, payload_format, value_path, timestamp_path, instrument_id, unit, bad_quality)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING ${MAPPING_COLUMNS}`,
    [connectionId, organizationId, values.source, values.payloadFormat, values.valuePath, values.timestampPath, values.instrumentId, values.unit, values.badQuality],
  ).catch(rethrowDuplicateMapping);
  return toMapping(rows[0]!);
}

export async function updateMapping(db: PoolClient, organizationId: number, id: number, values: MappingValues): Promise<IntegrationMapping> {
  const { rows } = await db.query<MappingRow>(
    `UPDATE integration_mappings SET source = $3, payload_format = $4, value_path = $5, timestamp_path = $6, instrument_id = $7, unit = $8, bad_quality = $9
      WHERE id = $1 AND organization_id = $2 RETURNING ${MAPPING_COLUMNS}`,
    [id, organizationId, values.source, values.payloadFormat, values.valuePath, values.timestampPath, values.instrumentId, values.unit, values.badQuality],
  ).catch(rethrowDuplicateMapping);
  return toMapping(rows[0]!);
}

export async function deleteMapping(db: PoolClient, organizationId: number, id: number): Promise<void> {
  await db.query('DELETE FROM integration_mappings WHERE id = $1 AND organization_id = $2', [id, organizationId]);
}

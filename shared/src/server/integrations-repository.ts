/**
 * Integration rows in PostgreSQL as both the api and the connector read them: the columns, the wire
 * form (parsed with the shared schemas, never cast) and the connector's load of every
 * connection with its mappings. The api's writes are in api/src/integrations/repository.ts.
 */
import {
  integrationConnectionSchema, integrationMappingSchema, mqttSettingsSchema, opcuaSettingsSchema, type IntegrationConnection, type IntegrationMapping,
} from '../integrations.ts';
import type { Queryable } from './postgres.ts';
import { describeUserCertificate } from './opcua-user-certificate.ts';

export const CONNECTION_COLUMNS = `id, organization_id, name, kind, endpoint_url, settings, secret_ciphertext IS NOT NULL AS has_secret,
  enabled, buffer_limit_bytes, created_at, updated_at`;
export const MAPPING_COLUMNS = 'id, connection_id, organization_id, source, payload_format, value_path, timestamp_path, instrument_id, unit, bad_quality, created_at';

export interface ConnectionRow {
  id: number;
  organization_id: number;
  name: string;
  kind: string;
  endpoint_url: string;
  settings: unknown;
  has_secret: boolean;
  enabled: boolean;
  buffer_limit_bytes: string | number;
  created_at: Date;
  updated_at: Date;
}

export interface MappingRow {
  id: number;
  connection_id: number;
  organization_id: number;
  source: string;
  payload_format: string | null;
  value_path: string | null;
  timestamp_path: string | null;
  instrument_id: number;
  unit: string | null;
  bad_quality: string;
  created_at: Date;
}

/** Settings as answered: through the input schema (a row written before a setting existed reads with its default), plus what a user certificate says. */
function settingsOf(kind: string, stored: unknown): unknown {
  if (kind === 'mqtt') return mqttSettingsSchema.parse(stored ?? {});
  const settings = opcuaSettingsSchema.parse(stored ?? {});
  return { ...settings, user_certificate: settings.user_certificate_pem ? describeUserCertificate(settings.user_certificate_pem) : null };
}

export function toConnection(row: ConnectionRow): IntegrationConnection {
  return integrationConnectionSchema.parse({
    ...row,
    id: Number(row.id),
    organization_id: Number(row.organization_id),
    settings: settingsOf(row.kind, row.settings),
    buffer_limit_bytes: Number(row.buffer_limit_bytes),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  });
}

export function toMapping(row: MappingRow): IntegrationMapping {
  return integrationMappingSchema.parse({
    ...row,
    id: Number(row.id),
    connection_id: Number(row.connection_id),
    organization_id: Number(row.organization_id),
    instrument_id: Number(row.instrument_id),
    created_at: row.created_at.toISOString(),
  });
}

/** A connection as the connector runs it: with its secrets still encrypted. */
export interface RunnableConnection {
  connection: IntegrationConnection;
  secretCiphertext: Buffer | null;
  apiKeyCiphertext: Buffer | null;
  mappings: IntegrationMapping[];
}

/**
 * Every connection of every organisation (or the one asked for), with its mappings in id order. Disabled
 * ones too: their connector still delivers what their buffer holds.
 */
export async function loadConnections(db: Queryable, onlyId: number | null = null): Promise<RunnableConnection[]> {
  const { rows } = await db.query<ConnectionRow & { secret_ciphertext: Buffer | null; api_key_ciphertext: Buffer | null }>(
    `SELECT ${CONNECTION_COLUMNS}, secret_ciphertext, api_key_ciphertext FROM integration_connections
      WHERE $1::bigint IS NULL OR id = $1 ORDER BY id`,
    [onlyId],
  );
  if (rows.length === 0) return [];
  const mappings = await db.query<MappingRow>(
    `SELECT ${MAPPING_COLUMNS} FROM integration_mappings WHERE connection_id = ANY($1::bigint[]) ORDER BY id`,
    [rows.map((row) => row.id)],
  );
  const byConnection = new Map<number, IntegrationMapping[]>();
  for (const row of mappings.rows) {
    const mapping = toMapping(row);
    byConnection.set(mapping.connection_id, [...(byConnection.get(mapping.connection_id) ?? []), mapping]);
  }
  return rows.map((row) => {
    const { secret_ciphertext: secretCiphertext, api_key_ciphertext: apiKeyCiphertext, ...rest } = row;
    const connection = toConnection(rest);
    return { connection, secretCiphertext, apiKeyCiphertext, mappings: byConnection.get(connection.id) ?? [] };
  });
}

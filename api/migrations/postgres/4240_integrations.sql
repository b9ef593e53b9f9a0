-- Up Migration
-- Connections to plant and lab data sources (MQTT brokers, OPC UA servers) and the mappings that turn
-- a topic or node into an instrument's series. Secrets (the source's password or private key, and the
-- organisation API key the connector posts readings with) are AES-256-GCM ciphertext under a key from
-- the environment, never plain text: a database dump alone does not reveal them.
CREATE TABLE integration_connections (
  id BIGSERIAL PRIMARY KEY,
  organization_id BIGINT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  kind TEXT NOT NULL CHECK (kind IN ('mqtt', 'opcua')),
  endpoint_url TEXT NOT NULL CHECK (length(endpoint_url) BETWEEN 1 AND 2000),
  settings JSONB NOT NULL DEFAULT '{}'::jsonb,
  secret_ciphertext BYTEA,
  -- The key the connector writes with; revoked with the connection so it cannot outlive it.
  api_key_id BIGINT REFERENCES api_keys(id) ON DELETE SET NULL,
  api_key_ciphertext BYTEA,
  enabled BOOLEAN NOT NULL DEFAULT true,
  buffer_limit_bytes BIGINT NOT NULL DEFAULT 1073741824 CHECK (buffer_limit_bytes >= 1048576),
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX integration_connections_name ON integration_connections (organization_id, lower(name));

CREATE TABLE integration_mappings (
  id BIGSERIAL PRIMARY KEY,
  connection_id BIGINT NOT NULL REFERENCES integration_connections(id) ON DELETE CASCADE,
  organization_id BIGINT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  source TEXT NOT NULL CHECK (length(source) BETWEEN 1 AND 1000),
  payload_format TEXT CHECK (payload_format IN ('json', 'sparkplug', 'number')),
  value_path TEXT CHECK (length(value_path) BETWEEN 1 AND 500),
  timestamp_path TEXT CHECK (length(timestamp_path) BETWEEN 1 AND 500),
  instrument_id BIGINT NOT NULL REFERENCES instruments(id) ON DELETE CASCADE,
  unit TEXT CHECK (length(unit) BETWEEN 1 AND 50),
  bad_quality TEXT NOT NULL DEFAULT 'missing' CHECK (bad_quality IN ('missing', 'drop')),
  created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX integration_mappings_connection ON integration_mappings (connection_id, id);
CREATE INDEX integration_mappings_instrument ON integration_mappings (instrument_id);
-- One source value feeds an instrument once per connection: a second identical mapping would double points.
CREATE UNIQUE INDEX integration_mappings_unique ON integration_mappings
  (connection_id, source, COALESCE(value_path, ''), instrument_id);

-- Down Migration
DROP TABLE IF EXISTS integration_mappings, integration_connections;

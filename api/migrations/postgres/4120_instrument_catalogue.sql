-- Up Migration
-- An organisation's own instrument types and units, offered beside the spec's in every
-- instrument picker. Units are UCUM codes (the api checks them); a type's name is what its instruments
-- store in `instruments.type`, so removing a type leaves its instruments as they are.
CREATE TABLE instrument_catalogue_types (
  id BIGSERIAL PRIMARY KEY,
  organization_id BIGINT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 64),
  default_unit TEXT CHECK (length(default_unit) BETWEEN 1 AND 50),
  created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX instrument_catalogue_types_name ON instrument_catalogue_types (organization_id, lower(name));

CREATE TABLE instrument_catalogue_units (
  id BIGSERIAL PRIMARY KEY,
  organization_id BIGINT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  code TEXT NOT NULL CHECK (length(code) BETWEEN 1 AND 50),
  label TEXT NOT NULL CHECK (length(label) BETWEEN 1 AND 100),
  created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
-- UCUM codes are case-sensitive (mm is not Mm), so the code is unique as written.
CREATE UNIQUE INDEX instrument_catalogue_units_code ON instrument_catalogue_units (organization_id, code);

-- Down Migration
DROP TABLE IF EXISTS instrument_catalogue_units, instrument_catalogue_types;

-- Up Migration
-- Derived parameters: formulas over an equipment's instrument series, per organisation. Every edit
-- of name, unit, expression or description makes a new version; the versions are kept so the
-- version that drew a chart can always be shown again.
CREATE TABLE derived_parameters (
  id BIGSERIAL PRIMARY KEY,
  organization_id BIGINT NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  unit TEXT CHECK (unit IS NULL OR length(unit) <= 50),
  expression TEXT NOT NULL CHECK (length(expression) BETWEEN 1 AND 2000),
  description TEXT CHECK (description IS NULL OR length(description) <= 2000),
  -- The library formula this row started as a copy of (null for the organisation's own).
  library_key TEXT,
  version INTEGER NOT NULL DEFAULT 1,
  created_by BIGINT REFERENCES users (id) ON DELETE SET NULL,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX derived_parameters_name ON derived_parameters (organization_id, lower(name));
CREATE INDEX derived_parameters_organization ON derived_parameters (organization_id, id);

CREATE TABLE derived_parameter_versions (
  derived_parameter_id BIGINT NOT NULL REFERENCES derived_parameters (id) ON DELETE CASCADE,
  version INTEGER NOT NULL,
  name TEXT NOT NULL,
  unit TEXT,
  expression TEXT NOT NULL,
  description TEXT,
  created_by BIGINT REFERENCES users (id) ON DELETE SET NULL,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (derived_parameter_id, version)
);

-- Whether the organisation has received its copies of the built-in library (once: a deleted copy stays deleted).
ALTER TABLE organizations ADD COLUMN derived_library_seeded BOOLEAN NOT NULL DEFAULT false;

-- Named numeric properties of a unit operation that formulas refer to (working volume, feed concentration...).
ALTER TABLE unit_operations ADD COLUMN properties JSONB NOT NULL DEFAULT '{}'::jsonb;

-- Down Migration
ALTER TABLE unit_operations DROP COLUMN IF EXISTS properties;
ALTER TABLE organizations DROP COLUMN IF EXISTS derived_library_seeded;
DROP TABLE IF EXISTS derived_parameter_versions;
DROP TABLE IF EXISTS derived_parameters;

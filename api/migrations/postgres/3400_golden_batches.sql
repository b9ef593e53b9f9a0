-- Up Migration
-- A golden batch: a saved envelope definition (references, parameters, alignment, band) that targets of
-- its unit-operation type are compared with. Reference ids are kept as a list rather than a link table:
-- a deleted reference simply stops contributing (it is left out when the envelope is built).
CREATE TABLE golden_batches (
  id BIGSERIAL PRIMARY KEY,
  organization_id BIGINT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
  unit_operation_type TEXT NOT NULL,
  reference_unit_operation_ids BIGINT[] NOT NULL,
  parameters TEXT[] NOT NULL,
  alignment JSONB NOT NULL,
  band JSONB NOT NULL,
  grid_step_seconds INTEGER,
  instrument_overrides JSONB NOT NULL DEFAULT '[]',
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX golden_batches_organization ON golden_batches (organization_id, unit_operation_type, id);

-- Down Migration
DROP TABLE IF EXISTS golden_batches;

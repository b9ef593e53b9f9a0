-- Up Migration
-- Samples drawn from a unit operation (off-line and at-line results beside its on-line series). The
-- sample id is what is written on the tube, unique within its unit operation; each result names an
-- analyte once. A flagged result keeps its quantitation limit in `value` ("< 0.5": below_limit, 0.5).
CREATE TABLE samples (
  id BIGSERIAL PRIMARY KEY,
  organization_id BIGINT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  unit_operation_id BIGINT NOT NULL REFERENCES unit_operations(id) ON DELETE CASCADE,
  sample_id TEXT NOT NULL CHECK (length(sample_id) BETWEEN 1 AND 100),
  drawn_at TIMESTAMPTZ NOT NULL,
  notes TEXT,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  -- Deferred, so one grid save may swap two tubes' ids.
  CONSTRAINT samples_sample_id_unique UNIQUE (unit_operation_id, sample_id) DEFERRABLE INITIALLY DEFERRED
);
CREATE INDEX samples_unit_operation_drawn ON samples (unit_operation_id, drawn_at, id);
CREATE INDEX samples_organization ON samples (organization_id, id);

CREATE TABLE sample_results (
  sample_row_id BIGINT NOT NULL REFERENCES samples(id) ON DELETE CASCADE,
  position INTEGER NOT NULL,
  analyte TEXT NOT NULL CHECK (length(analyte) BETWEEN 1 AND 100),
  value DOUBLE PRECISION NOT NULL,
  flag TEXT CHECK (flag IN ('below_limit', 'above_limit')),
  unit TEXT NOT NULL CHECK (length(unit) BETWEEN 1 AND 50),
  method TEXT,
  measured_at TIMESTAMPTZ,
  PRIMARY KEY (sample_row_id, position)
);
CREATE UNIQUE INDEX sample_results_analyte ON sample_results (sample_row_id, lower(analyte));

-- Down Migration
DROP TABLE IF EXISTS sample_results, samples;

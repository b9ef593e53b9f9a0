-- Up Migration
-- Bulk posts whose points are stored and whose jobs completed, but whose per-minute and per-hour
-- rollups are not recomputed yet. A row is written in the statement that completes the post and
-- deleted once its rollups are stored; reads of rollups wait for the rows recorded before them, and a
-- worker's periodic pass recomputes what a killed worker left.
CREATE TABLE rollup_backlog (
  id BIGSERIAL PRIMARY KEY,
  organization_id BIGINT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  job_id UUID NOT NULL,
  instrument_ids BIGINT[] NOT NULL,
  start_ms BIGINT NOT NULL,
  end_ms BIGINT NOT NULL,
  recorded_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX rollup_backlog_organization ON rollup_backlog (organization_id, id);
CREATE INDEX rollup_backlog_job ON rollup_backlog (job_id);

-- Down Migration
DROP TABLE IF EXISTS rollup_backlog;

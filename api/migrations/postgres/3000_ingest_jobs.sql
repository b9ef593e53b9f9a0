-- Up Migration
-- Every accepted time-series write, deletion or CSV upload gets a version from this sequence when the
-- api accepts it; ClickHouse rows carry it, so a later-accepted request wins whatever the job order.
CREATE SEQUENCE time_series_version_seq;
-- Versions of per-minute rollup recomputations (taken after the data they summarise was inserted).
CREATE SEQUENCE time_series_rollup_seq;

CREATE TABLE ingest_jobs (
  id UUID PRIMARY KEY,
  organization_id BIGINT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  kind TEXT NOT NULL CHECK (kind IN ('bulk', 'deletion', 'csv')),
  state TEXT NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'completed', 'failed')),
  version_seq BIGINT NOT NULL,
  created_by BIGINT REFERENCES users(id) ON DELETE SET NULL,
  api_key_id BIGINT REFERENCES api_keys(id) ON DELETE SET NULL,
  -- A client-chosen key: a retried request with the same key returns this job instead of a new one.
  idempotency_key TEXT,
  -- What the job works on (instrument ids, range, unit operation, mapping, file); never the points.
  request JSONB NOT NULL DEFAULT '{}',
  chunk_count INTEGER NOT NULL DEFAULT 0,
  chunks_done INTEGER[] NOT NULL DEFAULT '{}',
  -- Set when any part of the job ran more than once (its rows may then be stored twice).
  retried BOOLEAN NOT NULL DEFAULT false,
  progress JSONB NOT NULL DEFAULT '{"bytes_total":0,"bytes_read":0,"rows_read":0,"rows_skipped":0,"points_written":0}',
  -- Where a resumed CSV job continues: the validated summary of pass one and the committed offsets.
  checkpoint JSONB,
  result JSONB,
  error TEXT,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  finished_at TIMESTAMPTZ
);
CREATE UNIQUE INDEX ingest_jobs_idempotency ON ingest_jobs (organization_id, idempotency_key) WHERE idempotency_key IS NOT NULL;
CREATE INDEX ingest_jobs_organization ON ingest_jobs (organization_id, created_at DESC);

-- Range deletions (queued deletions and the range a replacing CSV upload clears). A write job whose
-- version is older re-applies the newer deletions overlapping it after its insert, so a deletion
-- accepted after a write wins even when the write's job runs last.
CREATE TABLE time_series_deletions (
  id BIGSERIAL PRIMARY KEY,
  organization_id BIGINT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  job_id UUID NOT NULL REFERENCES ingest_jobs(id) ON DELETE CASCADE,
  version_seq BIGINT NOT NULL,
  instrument_ids BIGINT[] NOT NULL,
  start_ms BIGINT NOT NULL,
  end_ms BIGINT NOT NULL,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  UNIQUE (job_id)
);
CREATE INDEX time_series_deletions_lookup ON time_series_deletions (organization_id, version_seq);
CREATE INDEX time_series_deletions_instruments ON time_series_deletions USING GIN (instrument_ids);

-- Down Migration
DROP TABLE IF EXISTS time_series_deletions, ingest_jobs;
DROP SEQUENCE IF EXISTS time_series_version_seq, time_series_rollup_seq;

-- Up Migration
-- On a ClickHouse cluster: ranges whose rollups were recomputed while a replica of their shard did not
-- answer, from the replicas that did. Points that replica alone held were left out; the ingest-worker's
-- recheck pass recomputes each range from every replica once all answer again, then deletes its row.
-- Reads do not wait for these rows: the rollups exist, and are exact again once the replica is back.
CREATE TABLE rollup_recheck (
  id BIGSERIAL PRIMARY KEY,
  organization_id BIGINT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  instrument_ids BIGINT[] NOT NULL,
  start_ms BIGINT NOT NULL,
  end_ms BIGINT NOT NULL,
  recorded_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Down Migration
DROP TABLE IF EXISTS rollup_recheck;

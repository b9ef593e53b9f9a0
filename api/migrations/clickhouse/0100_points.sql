-- Instrument readings. Works on ClickHouse 18.16 and current versions: Int64 epoch milliseconds, no
-- DateTime64/LowCardinality. Rows are versioned (see ingest-worker/src/versions.ts): a reading of a key
-- (organization, instrument, ts) is the row with the highest version, and a deletion is a row with
-- is_deleted = 1. Reads pick argMax(..., version) per key, so unmerged parts never show duplicates.
CREATE TABLE IF NOT EXISTS points (
  organization_id UInt64,
  instrument_id UInt64,
  ts Int64,
  value Nullable(Float64),
  version UInt64,
  is_deleted UInt8
) ENGINE = ReplacingMergeTree(version)
PARTITION BY intDiv(ts, 2592000000)
ORDER BY (organization_id, instrument_id, ts);

-- Per-minute rollups of the deduplicated readings, recomputed by the ingest-worker for the range each
-- job touched. A row's version comes from a counter taken after the job's insert, so the newest
-- recomputation has seen every write before it. Downsampled reads of long ranges read these.
CREATE TABLE IF NOT EXISTS points_rollup_1m (
  organization_id UInt64,
  instrument_id UInt64,
  minute Int64,
  points UInt64,
  value_count UInt64,
  value_sum Float64,
  value_min Nullable(Float64),
  value_max Nullable(Float64),
  version UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY (organization_id, instrument_id, minute);

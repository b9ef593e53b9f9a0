-- Per-hour rollups, recomputed from the per-minute rollups after them (same version rule). Long
-- downsampled reads take whole hours from here, so a read over months of 1 Hz data deduplicates a
-- few thousand rows instead of hundreds of thousands of minutes.
CREATE TABLE IF NOT EXISTS points_rollup_1h (
  organization_id UInt64,
  instrument_id UInt64,
  hour Int64,
  points UInt64,
  value_count UInt64,
  value_sum Float64,
  value_min Nullable(Float64),
  value_max Nullable(Float64),
  version UInt64
) ENGINE = ReplacingMergeTree(version)
ORDER BY (organization_id, instrument_id, hour);

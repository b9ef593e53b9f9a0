-- Clustered variant of migrations/clickhouse/0101_points_rollup_1h.sql (see 0100_points.sql here).
CREATE TABLE IF NOT EXISTS ${database}.points_rollup_1h_local ON CLUSTER ${cluster} (
  organization_id UInt64,
  instrument_id UInt64,
  hour Int64,
  points UInt64,
  value_count UInt64,
  value_sum Float64,
  value_min Nullable(Float64),
  value_max Nullable(Float64),
  version UInt64
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/${database}/points_rollup_1h', '{replica}', version)
ORDER BY (organization_id, instrument_id, hour);

CREATE TABLE IF NOT EXISTS ${database}.points_rollup_1h ON CLUSTER ${cluster} AS ${database}.points_rollup_1h_local
ENGINE = Distributed(${cluster}, ${database}, points_rollup_1h_local, cityHash64(organization_id, instrument_id));

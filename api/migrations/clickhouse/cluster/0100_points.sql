-- Clustered variant of migrations/clickhouse/0100_points.sql: the same columns and keys in replicated
-- local tables (one ZooKeeper path per shard, database and table; the replica from the server's
-- macros), each under a Distributed table of the single-node name that every read and write uses.
-- Sharded by series (organisation, instrument), so a series' versions meet on one shard. The version
-- column is unsigned, as the replacing engines require.
CREATE TABLE IF NOT EXISTS ${database}.points_local ON CLUSTER ${cluster} (
  organization_id UInt64,
  instrument_id UInt64,
  ts Int64,
  value Nullable(Float64),
  version UInt64,
  is_deleted UInt8
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/${database}/points', '{replica}', version)
PARTITION BY intDiv(ts, 2592000000)
ORDER BY (organization_id, instrument_id, ts);

CREATE TABLE IF NOT EXISTS ${database}.points ON CLUSTER ${cluster} AS ${database}.points_local
ENGINE = Distributed(${cluster}, ${database}, points_local, cityHash64(organization_id, instrument_id));

CREATE TABLE IF NOT EXISTS ${database}.points_rollup_1m_local ON CLUSTER ${cluster} (
  organization_id UInt64,
  instrument_id UInt64,
  minute Int64,
  points UInt64,
  value_count UInt64,
  value_sum Float64,
  value_min Nullable(Float64),
  value_max Nullable(Float64),
  version UInt64
) ENGINE = ReplicatedReplacingMergeTree('/clickhouse/tables/{shard}/${database}/points_rollup_1m', '{replica}', version)
ORDER BY (organization_id, instrument_id, minute);

CREATE TABLE IF NOT EXISTS ${database}.points_rollup_1m ON CLUSTER ${cluster} AS ${database}.points_rollup_1m_local
ENGINE = Distributed(${cluster}, ${database}, points_rollup_1m_local, cityHash64(organization_id, instrument_id));

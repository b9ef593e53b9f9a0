-- Clustered variant of migrations/clickhouse/0102_points_source_details.sql: the replicated local
-- tables first (a replicated ALTER reaches every replica of a shard through ZooKeeper), then the
-- Distributed table over them, which must name the same columns to read and write them. On ClickHouse
-- 18.16 the replicated ALTER runs ON CLUSTER ${cluster}_shards (one replica of each shard): with two
-- replicas of a shard both taking the task, one can run it after the other finished and its DDL
-- worker stops for good ("Node exists ... executed"), leaving every later ON CLUSTER statement
-- waiting. The Distributed table's runs on ${cluster}_replicas (every server a shard of its own):
-- 18.16 refuses an ALTER of a table that is not replicated on shards that replicate internally.
ALTER TABLE ${database}.points_local ON CLUSTER ${cluster}_shards ADD COLUMN ts_micros UInt16 DEFAULT 0;
ALTER TABLE ${database}.points_local ON CLUSTER ${cluster}_shards ADD COLUMN quality Nullable(UInt32);
ALTER TABLE ${database}.points_local ON CLUSTER ${cluster}_shards ADD COLUMN historical UInt8 DEFAULT 0;
ALTER TABLE ${database}.points ON CLUSTER ${cluster}_replicas ADD COLUMN ts_micros UInt16 DEFAULT 0;
ALTER TABLE ${database}.points ON CLUSTER ${cluster}_replicas ADD COLUMN quality Nullable(UInt32);
ALTER TABLE ${database}.points ON CLUSTER ${cluster}_replicas ADD COLUMN historical UInt8 DEFAULT 0;

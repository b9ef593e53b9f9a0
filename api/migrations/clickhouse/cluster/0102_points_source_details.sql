-- Clustered variant of migrations/clickhouse/0102_points_source_details.sql: the replicated local
-- tables first (a replicated ALTER reaches every replica of a shard through ZooKeeper), then the
-- Distributed table over them, which must name the same columns to read and write them. ClickHouse
-- 18.16 refuses an ALTER ON CLUSTER of a table that is not replicated on a cluster whose shards
-- replicate internally, so the Distributed table's runs on ${cluster}_replicas (every server a shard
-- of its own, docs/scale.md).
ALTER TABLE ${database}.points_local ON CLUSTER ${cluster} ADD COLUMN ts_micros UInt16 DEFAULT 0;
ALTER TABLE ${database}.points_local ON CLUSTER ${cluster} ADD COLUMN quality Nullable(UInt32);
ALTER TABLE ${database}.points_local ON CLUSTER ${cluster} ADD COLUMN historical UInt8 DEFAULT 0;
ALTER TABLE ${database}.points ON CLUSTER ${cluster}_replicas ADD COLUMN ts_micros UInt16 DEFAULT 0;
ALTER TABLE ${database}.points ON CLUSTER ${cluster}_replicas ADD COLUMN quality Nullable(UInt32);
ALTER TABLE ${database}.points ON CLUSTER ${cluster}_replicas ADD COLUMN historical UInt8 DEFAULT 0;

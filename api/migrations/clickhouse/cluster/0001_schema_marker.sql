-- Clustered variant (see migrations/clickhouse/0001_schema_marker.sql): each server keeps its own copy.
CREATE TABLE IF NOT EXISTS ${database}.platform_info ON CLUSTER ${cluster} (key String, value String) ENGINE = TinyLog

-- What the source said about each reading beyond its millisecond and value (docs/api.md, docs/csv.md):
--   ts_micros  the microseconds within the reading's millisecond (0-999); `ts` stays the key in epoch
--              milliseconds, so every read, rollup and the dedup rule per (series, ms) are unchanged.
--   quality    the source's quality code, verbatim (an OPC UA StatusCode, a Sparkplug/OPC DA quality),
--              NULL when the source gave none or called the reading good.
--   historical 1 when the source marked the reading as historical (Sparkplug's is_historical).
-- Rows written before these columns read as 0, NULL and 0. ClickHouse 18.16 has no ADD COLUMN IF NOT
-- EXISTS: one column per statement, and the migration runner takes "already exists" as done, so a run
-- cut short after some of them is completed by the next.
ALTER TABLE points ADD COLUMN ts_micros UInt16 DEFAULT 0;
ALTER TABLE points ADD COLUMN quality Nullable(UInt32);
ALTER TABLE points ADD COLUMN historical UInt8 DEFAULT 0;

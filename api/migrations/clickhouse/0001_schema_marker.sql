-- The time-series tables are added by the time-series migrations that follow.
CREATE TABLE IF NOT EXISTS platform_info (key String, value String) ENGINE = TinyLog

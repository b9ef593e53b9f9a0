-- Up Migration
-- The zone of an organisation's instruments: CSV timestamps written without an offset are read in it
-- unless the upload names another. The api checks the name against the runtime's zone data.
ALTER TABLE organizations ADD COLUMN time_zone TEXT NOT NULL DEFAULT 'UTC' CHECK (length(time_zone) BETWEEN 1 AND 64);

-- Down Migration
ALTER TABLE organizations DROP COLUMN IF EXISTS time_zone;

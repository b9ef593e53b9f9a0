-- Up Migration
-- Whether acknowledging an alert needs an electronic signature (the acknowledger's password, and a
-- signature bound to the acknowledged firing). Off by default: acknowledging stays a comment.
ALTER TABLE organizations ADD COLUMN alert_acknowledgement_requires_signature BOOLEAN NOT NULL DEFAULT false;

-- Signatures now sign alert firings too (their acknowledgement), beside runs.
ALTER TABLE signatures DROP CONSTRAINT signatures_record_type_check;
ALTER TABLE signatures ADD CONSTRAINT signatures_record_type_check CHECK (record_type IN ('run', 'alert_event'));
-- A firing is acknowledged once, so it carries at most one signature.
CREATE UNIQUE INDEX signatures_one_per_alert_event ON signatures (organization_id, record_id) WHERE record_type = 'alert_event';

-- Down Migration
DROP INDEX IF EXISTS signatures_one_per_alert_event;
DELETE FROM signatures WHERE record_type = 'alert_event';
ALTER TABLE signatures DROP CONSTRAINT signatures_record_type_check;
ALTER TABLE signatures ADD CONSTRAINT signatures_record_type_check CHECK (record_type IN ('run'));
ALTER TABLE organizations DROP COLUMN IF EXISTS alert_acknowledgement_requires_signature;

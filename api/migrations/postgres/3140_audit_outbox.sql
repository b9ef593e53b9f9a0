-- Up Migration
-- The transactional outbox of the audit trail. A change and its audit event are written in one
-- transaction, so neither commits without the other. The api relays rows to the audit queue; the
-- audit-worker stores each event in audit_logs and deletes its row in the same transaction, so a row
-- disappears only once its audit row exists. `id` is the order of the changes: audit_logs keeps it
-- as change_seq.
CREATE TABLE audit_outbox (
  id BIGSERIAL PRIMARY KEY,
  event_id UUID NOT NULL UNIQUE,
  -- The event as it will be queued, without created_at (taken from this row) and change_seq (its id).
  event JSONB NOT NULL,
  -- The database clock, one clock for every api process.
  created_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
  -- How often the row was handed to the queue, and when the relay hands it over again if it is still
  -- here (the queue lost it, or the job failed): backing off while the audit-worker is away.
  relay_attempts INTEGER NOT NULL DEFAULT 0,
  relay_due_at TIMESTAMPTZ NOT NULL DEFAULT '-infinity'
);
CREATE INDEX audit_outbox_due ON audit_outbox (relay_due_at);

-- One notification per inserting statement wakes the relays at commit (none for a rollback); the
-- channel name is AUDIT_OUTBOX_CHANNEL in shared/src/server/audit-outbox.ts.
CREATE FUNCTION notify_audit_outbox() RETURNS trigger AS $$
BEGIN
  PERFORM pg_notify('audit_outbox', '');
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER audit_outbox_inserted AFTER INSERT ON audit_outbox
  FOR EACH STATEMENT EXECUTE FUNCTION notify_audit_outbox();

-- The order of the changes: rows stored out of order by concurrent audit-workers (or written at the
-- same microsecond) still list in the order their changes were made.
ALTER TABLE audit_logs ADD COLUMN change_seq BIGINT;

-- Down Migration
ALTER TABLE audit_logs DROP COLUMN IF EXISTS change_seq;
DROP TRIGGER IF EXISTS audit_outbox_inserted ON audit_outbox;
DROP FUNCTION IF EXISTS notify_audit_outbox();
DROP TABLE IF EXISTS audit_outbox;

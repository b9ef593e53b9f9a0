-- Up Migration
-- Alert rules: one definition applied to every series in its scope (instrument type, unit-operation
-- type, run). The condition is a JSON object parsed with shared/src/alerts.ts on every read.
CREATE TABLE alert_rules (
  id BIGSERIAL PRIMARY KEY,
  organization_id BIGINT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  enabled BOOLEAN NOT NULL DEFAULT true,
  instrument_type TEXT CHECK (length(instrument_type) BETWEEN 1 AND 64),
  unit_operation_type TEXT CHECK (length(unit_operation_type) BETWEEN 1 AND 64),
  run_id BIGINT REFERENCES runs(id) ON DELETE CASCADE,
  condition JSONB NOT NULL,
  email_user_ids BIGINT[] NOT NULL DEFAULT '{}',
  webhook_url TEXT,
  webhook_secret TEXT,
  group_window_seconds INTEGER NOT NULL DEFAULT 900 CHECK (group_window_seconds BETWEEN 0 AND 86400),
  created_by BIGINT REFERENCES users(id) ON DELETE SET NULL,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX alert_rules_organization ON alert_rules (organization_id, id);

-- The state of a rule on one series (instrument). Every transition locks this row, so evaluators
-- sharing the stream take turns per series; `last_point_ms` is the newest reading applied (data time).
CREATE TABLE alert_states (
  rule_id BIGINT NOT NULL REFERENCES alert_rules(id) ON DELETE CASCADE,
  instrument_id BIGINT NOT NULL REFERENCES instruments(id) ON DELETE CASCADE,
  organization_id BIGINT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  state TEXT NOT NULL DEFAULT 'ok' CHECK (state IN ('ok', 'pending', 'firing')),
  since_ms BIGINT,
  last_point_ms BIGINT,
  updated_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  PRIMARY KEY (rule_id, instrument_id)
);

-- Each firing. At most one is open (not resolved) per rule and series: a second evaluator, or the
-- same announcement applied again, cannot open another.
CREATE TABLE alert_events (
  id BIGSERIAL PRIMARY KEY,
  organization_id BIGINT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  rule_id BIGINT NOT NULL REFERENCES alert_rules(id) ON DELETE CASCADE,
  instrument_id BIGINT NOT NULL REFERENCES instruments(id) ON DELETE CASCADE,
  unit_operation_id BIGINT REFERENCES unit_operations(id) ON DELETE SET NULL,
  run_id BIGINT REFERENCES runs(id) ON DELETE SET NULL,
  started_at TIMESTAMPTZ NOT NULL,
  fired_at TIMESTAMPTZ NOT NULL,
  resolved_at TIMESTAMPTZ,
  value DOUBLE PRECISION,
  message TEXT NOT NULL,
  acknowledged_at TIMESTAMPTZ,
  acknowledged_by BIGINT REFERENCES users(id) ON DELETE SET NULL,
  acknowledgement TEXT,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX alert_events_one_open ON alert_events (rule_id, instrument_id) WHERE resolved_at IS NULL;
CREATE INDEX alert_events_organization ON alert_events (organization_id, id DESC);
CREATE INDEX alert_events_run ON alert_events (run_id, id DESC);
CREATE INDEX alert_events_unit_operation ON alert_events (unit_operation_id);

-- Announcements of stored points already applied: written in the transaction of their transitions,
-- so an announcement delivered again (its evaluator died before acknowledging it) changes nothing.
CREATE TABLE alert_applied_announcements (
  entry_id TEXT PRIMARY KEY,
  applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX alert_applied_announcements_age ON alert_applied_announcements (applied_at);

-- One notification per rule and run per group window: firings within the window join it.
CREATE TABLE alert_notifications (
  id BIGSERIAL PRIMARY KEY,
  organization_id BIGINT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  rule_id BIGINT NOT NULL REFERENCES alert_rules(id) ON DELETE CASCADE,
  run_key BIGINT NOT NULL,
  first_event_id BIGINT NOT NULL REFERENCES alert_events(id) ON DELETE CASCADE,
  event_count INTEGER NOT NULL DEFAULT 1,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX alert_notifications_group ON alert_notifications (rule_id, run_key, created_at DESC);

-- The outbox of deliveries (an email to a user, a webhook call): the relay queues the due ones;
-- a delivery held by quiet hours is due when they end.
CREATE TABLE alert_deliveries (
  id BIGSERIAL PRIMARY KEY,
  organization_id BIGINT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  notification_id BIGINT NOT NULL REFERENCES alert_notifications(id) ON DELETE CASCADE,
  channel TEXT NOT NULL CHECK (channel IN ('email', 'webhook')),
  user_id BIGINT REFERENCES users(id) ON DELETE CASCADE,
  due_at TIMESTAMPTZ NOT NULL,
  queued_at TIMESTAMPTZ,
  delivered_at TIMESTAMPTZ,
  attempts INTEGER NOT NULL DEFAULT 0,
  last_error TEXT
);
CREATE INDEX alert_deliveries_due ON alert_deliveries (due_at) WHERE delivered_at IS NULL;

-- A user's quiet hours: notifications due inside them are held until they end (local time).
CREATE TABLE alert_quiet_hours (
  user_id BIGINT PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
  start_minute INTEGER NOT NULL CHECK (start_minute BETWEEN 0 AND 1439),
  end_minute INTEGER NOT NULL CHECK (end_minute BETWEEN 0 AND 1439),
  time_zone TEXT NOT NULL
);

-- Down Migration
DROP TABLE IF EXISTS alert_quiet_hours, alert_deliveries, alert_notifications, alert_applied_announcements, alert_events, alert_states, alert_rules;

-- Up Migration
-- Reason for change: per record kind whether an edit or deletion needs a reason (off, optional,
-- required), and the organisation's pick-list of reasons. A missing kind reads as off.
CREATE TABLE organization_change_reasons (
  organization_id BIGINT PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
  policies JSONB NOT NULL DEFAULT '{}',
  reasons JSONB NOT NULL DEFAULT '[]',
  updated_at TIMESTAMPTZ NOT NULL DEFAULT now()
);

-- Down Migration
DROP TABLE IF EXISTS organization_change_reasons;

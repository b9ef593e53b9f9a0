-- Up Migration

-- Single-use password reset and invitation tokens, stored only as a sha256 hash.
CREATE TABLE password_reset_tokens (
  id BIGSERIAL PRIMARY KEY,
  user_id BIGINT NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  token_hash TEXT NOT NULL UNIQUE,
  purpose TEXT NOT NULL CHECK (purpose IN ('reset', 'invite')),
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  expires_at TIMESTAMPTZ NOT NULL,
  used_at TIMESTAMPTZ
);
CREATE INDEX password_reset_tokens_user ON password_reset_tokens (user_id);

-- Failed logins per account (lower-cased email, whether or not the account exists, so the answer
-- never reveals it). Rows older than the window are ignored and pruned; a success deletes them.
CREATE TABLE login_failures (
  id BIGSERIAL PRIMARY KEY,
  email TEXT NOT NULL,
  failed_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX login_failures_email_time ON login_failures (email, failed_at DESC);

-- Development outbox: mail kept here when no SMTP server is configured, so reset and invitation
-- links can be followed locally and by end-to-end tests.
CREATE TABLE dev_outbox (
  id BIGSERIAL PRIMARY KEY,
  "to" TEXT NOT NULL,
  subject TEXT NOT NULL,
  body TEXT NOT NULL,
  link TEXT,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX dev_outbox_to ON dev_outbox (lower("to"), id DESC);

CREATE INDEX sessions_expiry ON sessions (expires_at);

-- Down Migration
DROP INDEX IF EXISTS sessions_expiry;
DROP TABLE IF EXISTS dev_outbox, login_failures, password_reset_tokens;

-- Up Migration

-- The review state of a run. A run without a row is a draft: rows appear on the first submission.
CREATE TABLE run_reviews (
  run_id BIGINT PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
  organization_id BIGINT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  state TEXT NOT NULL CHECK (state IN ('draft', 'in_review', 'approved', 'released')),
  changed_by BIGINT REFERENCES users(id) ON DELETE SET NULL,
  changed_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX run_reviews_organization ON run_reviews (organization_id);

-- Electronic signatures. The signer's printed name and the meaning's label are copied at signing, so
-- a later rename of the user or the meaning does not rewrite what was signed. content_sha256 is the
-- hash of the canonical form of the run as signed (api/src/signatures/run-content.ts); a signature is
-- never deleted: reopening the run marks it revoked.
CREATE TABLE signatures (
  id BIGSERIAL PRIMARY KEY,
  organization_id BIGINT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  record_type TEXT NOT NULL CHECK (record_type IN ('run')),
  record_id BIGINT NOT NULL,
  meaning TEXT NOT NULL CHECK (length(meaning) BETWEEN 1 AND 60),
  meaning_label TEXT NOT NULL CHECK (length(meaning_label) BETWEEN 1 AND 100),
  signer_id BIGINT REFERENCES users(id) ON DELETE SET NULL,
  signer_name TEXT NOT NULL,
  signer_email TEXT NOT NULL,
  signed_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
  time_zone TEXT NOT NULL,
  content_sha256 TEXT NOT NULL CHECK (content_sha256 ~ '^[0-9a-f]{64}$'),
  -- How the signer proved who they were: 'password' (asked again) or 'recent_sign_in'.
  authentication TEXT NOT NULL CHECK (authentication IN ('password', 'recent_sign_in')),
  revoked_at TIMESTAMPTZ,
  revoked_by BIGINT REFERENCES users(id) ON DELETE SET NULL,
  revoke_reason TEXT
);
CREATE INDEX signatures_record ON signatures (organization_id, record_type, record_id, id);

-- The organisation's own signature meanings, beside the built-in ones.
CREATE TABLE signature_meanings (
  organization_id BIGINT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  code TEXT NOT NULL CHECK (code ~ '^[a-z][a-z0-9_]{0,59}$'),
  label TEXT NOT NULL CHECK (length(label) BETWEEN 1 AND 100),
  PRIMARY KEY (organization_id, code)
);

-- Session policy of an organisation: how long a session may stay unused, and how recent a sign-in
-- must be for a signature to go without the password. No row: the defaults in
-- api/src/auth/session-policy.ts.
CREATE TABLE session_policies (
  organization_id BIGINT PRIMARY KEY REFERENCES organizations(id) ON DELETE CASCADE,
  inactivity_minutes INTEGER NOT NULL CHECK (inactivity_minutes BETWEEN 1 AND 10080),
  signing_reauth_minutes INTEGER NOT NULL CHECK (signing_reauth_minutes BETWEEN 0 AND 60)
);

-- What a user needs to recognise their sessions, and when each was last used (inactivity sign-out).
ALTER TABLE sessions ADD COLUMN last_used_at TIMESTAMPTZ NOT NULL DEFAULT now();
ALTER TABLE sessions ADD COLUMN user_agent TEXT;
ALTER TABLE sessions ADD COLUMN ip TEXT;

-- Down Migration
ALTER TABLE sessions DROP COLUMN IF EXISTS ip;
ALTER TABLE sessions DROP COLUMN IF EXISTS user_agent;
ALTER TABLE sessions DROP COLUMN IF EXISTS last_used_at;
DROP TABLE IF EXISTS session_policies, signature_meanings, signatures, run_reviews;

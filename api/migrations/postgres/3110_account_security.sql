-- Up Migration

-- API keys are for instrument feeds: at most the editor role. Keys minted with the admin role are
-- demoted, and the constraint keeps new ones from holding it.
UPDATE api_keys SET role = 'editor' WHERE role = 'admin';
ALTER TABLE api_keys DROP CONSTRAINT IF EXISTS api_keys_role_check;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_role_check CHECK (role IN ('viewer', 'editor'));
-- Optional end of a key's life; NULL keeps it until revoked.
ALTER TABLE api_keys ADD COLUMN expires_at TIMESTAMPTZ;

-- Login attempts are counted per account: the user's id when the email names one, else the
-- lower-cased email (lowered by PostgreSQL, as the user lookup is, so no Unicode case trick splits
-- an account's count in two).
ALTER TABLE login_failures ADD COLUMN user_id BIGINT REFERENCES users(id) ON DELETE CASCADE;
CREATE INDEX login_failures_user_time ON login_failures (user_id, failed_at DESC) WHERE user_id IS NOT NULL;

-- Reset links are counted per account and hour, so the recent ones are kept (revoked, not deleted).
CREATE INDEX password_reset_tokens_user_created ON password_reset_tokens (user_id, created_at DESC);

-- Down Migration
DROP INDEX IF EXISTS password_reset_tokens_user_created;
DROP INDEX IF EXISTS login_failures_user_time;
ALTER TABLE login_failures DROP COLUMN IF EXISTS user_id;
ALTER TABLE api_keys DROP COLUMN IF EXISTS expires_at;
ALTER TABLE api_keys DROP CONSTRAINT IF EXISTS api_keys_role_check;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_role_check CHECK (role IN ('viewer', 'editor', 'admin'));

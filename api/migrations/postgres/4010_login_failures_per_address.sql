-- Up Migration
-- Failed sign-ins are counted per account and client address: a few failures block only the address
-- that made them, so nobody can lock an owner out from elsewhere. All addresses together are still
-- counted for the account-wide progressive delay. Rows from before this migration have no address:
-- they count towards the account-wide total only.
ALTER TABLE login_failures ADD COLUMN client_address TEXT;
CREATE INDEX login_failures_user_address_time ON login_failures (user_id, client_address, failed_at DESC) WHERE user_id IS NOT NULL;
CREATE INDEX login_failures_email_address_time ON login_failures (email, client_address, failed_at DESC) WHERE user_id IS NULL;

-- Down Migration
DROP INDEX IF EXISTS login_failures_email_address_time;
DROP INDEX IF EXISTS login_failures_user_address_time;
ALTER TABLE login_failures DROP COLUMN IF EXISTS client_address;

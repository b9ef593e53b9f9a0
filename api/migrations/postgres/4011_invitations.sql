-- Up Migration
-- An invitation is an offer, not an account: no user row exists until the invitee accepts through the
-- mailed link, so an invitation never takes an address from its owner (their own signup and
-- forgot-password behave as if it did not exist). The link's token is stored only as its sha256 hash.
CREATE TABLE invitations (
  id BIGSERIAL PRIMARY KEY,
  organization_id BIGINT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  email TEXT NOT NULL,
  role TEXT NOT NULL CHECK (role IN ('viewer', 'editor', 'admin')),
  invited_by BIGINT REFERENCES users(id) ON DELETE SET NULL,
  token_hash TEXT NOT NULL UNIQUE,
  created_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  last_sent_at TIMESTAMPTZ NOT NULL DEFAULT now(),
  expires_at TIMESTAMPTZ NOT NULL,
  accepted_at TIMESTAMPTZ,
  accepted_user_id BIGINT REFERENCES users(id) ON DELETE SET NULL,
  revoked_at TIMESTAMPTZ,
  CHECK (accepted_at IS NULL OR revoked_at IS NULL)
);
-- One open invitation per organisation and address: inviting again renews it.
CREATE UNIQUE INDEX invitations_open_per_address ON invitations (organization_id, lower(email))
  WHERE accepted_at IS NULL AND revoked_at IS NULL;

-- Every invitation mail an organisation asked for (new or resent), kept for a day for the
-- per-organisation and per-address limits. Not tied to the invitation's row: revoking and inviting
-- again must not reset the count. `delivered` is false when the address had received its daily share
-- from all organisations together and the mail was held back.
CREATE TABLE invitation_mails (
  id BIGSERIAL PRIMARY KEY,
  organization_id BIGINT NOT NULL REFERENCES organizations(id) ON DELETE CASCADE,
  email TEXT NOT NULL,
  delivered BOOLEAN NOT NULL,
  sent_at TIMESTAMPTZ NOT NULL DEFAULT now()
);
CREATE INDEX invitation_mails_organization_time ON invitation_mails (organization_id, sent_at DESC);
CREATE INDEX invitation_mails_email_time ON invitation_mails (lower(email), sent_at DESC);

-- Down Migration
DROP TABLE IF EXISTS invitation_mails;
DROP TABLE IF EXISTS invitations;

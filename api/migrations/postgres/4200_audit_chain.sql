-- Up Migration
-- The tamper-evident audit trail: every audit row carries the SHA-256 of its own content and of the row
-- before it in its organisation's chain (docs/compliance.md gives the exact serialisation). The
-- audit-worker links a row in the transaction that inserts it, holding the row lock of its chain's head,
-- so concurrent workers (and a worker killed mid-way) never fork or skip a link.
ALTER TABLE audit_logs
  ADD COLUMN change_reason TEXT,
  ADD COLUMN change_reason_code TEXT,
  ADD COLUMN chain_seq BIGINT,
  ADD COLUMN prev_hash TEXT,
  ADD COLUMN entry_hash TEXT;

-- One chain per organisation; events of no organisation (a failed sign-in for an unknown address) form
-- chain 0.
CREATE UNIQUE INDEX audit_logs_chain_position ON audit_logs ((coalesce(organization_id, 0)), chain_seq)
  WHERE chain_seq IS NOT NULL;
-- Rows written before the chain existed, linked by the audit-worker in their original order.
CREATE INDEX audit_logs_unchained ON audit_logs ((coalesce(organization_id, 0)), id) WHERE chain_seq IS NULL;

CREATE TABLE audit_chain_heads (
  chain_key BIGINT PRIMARY KEY,
  last_seq BIGINT NOT NULL,
  last_hash TEXT NOT NULL,
  checkpointed_seq BIGINT NOT NULL DEFAULT 0
);

-- Rows up to this id predate the chain and are linked once, in order; a row after it without a link was
-- put there by hand, and verification reports it.
CREATE TABLE audit_chain_legacy (
  singleton BOOLEAN PRIMARY KEY DEFAULT true CHECK (singleton),
  max_id BIGINT NOT NULL
);
INSERT INTO audit_chain_legacy (max_id) SELECT coalesce(max(id), 0) FROM audit_logs;

-- Signed digests of a chain's state: (chain, last sequence, last hash, time), Ed25519 over the
-- serialisation in docs/compliance.md. Anyone with the public key can check them offline.
CREATE TABLE audit_checkpoints (
  id BIGSERIAL PRIMARY KEY,
  chain_key BIGINT NOT NULL,
  chain_seq BIGINT NOT NULL,
  entry_hash TEXT NOT NULL,
  created_at TEXT NOT NULL,
  algorithm TEXT NOT NULL,
  public_key TEXT NOT NULL,
  key_fingerprint TEXT NOT NULL,
  signature TEXT NOT NULL
);
CREATE INDEX audit_checkpoints_chain ON audit_checkpoints (chain_key, chain_seq DESC);

-- Append-only still, with one exception: a row written before the chain may be linked once (its link
-- columns go from empty to set, nothing else changes).
CREATE OR REPLACE FUNCTION audit_logs_append_only() RETURNS trigger AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND OLD.entry_hash IS NULL AND OLD.chain_seq IS NULL
     AND NEW.entry_hash IS NOT NULL AND NEW.chain_seq IS NOT NULL
     AND (to_jsonb(OLD) - 'chain_seq' - 'prev_hash' - 'entry_hash') = (to_jsonb(NEW) - 'chain_seq' - 'prev_hash' - 'entry_hash') THEN
    RETURN NEW;
  END IF;
  RAISE EXCEPTION 'audit_logs is append-only';
END;
$$ LANGUAGE plpgsql;

-- Down Migration
CREATE OR REPLACE FUNCTION audit_logs_append_only() RETURNS trigger AS $$
BEGIN
  RAISE EXCEPTION 'audit_logs is append-only';
END;
$$ LANGUAGE plpgsql;
DROP TABLE IF EXISTS audit_checkpoints, audit_chain_legacy, audit_chain_heads;
DROP INDEX IF EXISTS audit_logs_unchained;
DROP INDEX IF EXISTS audit_logs_chain_position;
ALTER TABLE audit_logs DROP COLUMN IF EXISTS entry_hash, DROP COLUMN IF EXISTS prev_hash, DROP COLUMN IF EXISTS chain_seq,
  DROP COLUMN IF EXISTS change_reason_code, DROP COLUMN IF EXISTS change_reason;

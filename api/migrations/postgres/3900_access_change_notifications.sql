-- Up Migration
-- The api keeps live API keys and instruments' organisations in memory (api/src/platform/access-caches.ts):
-- every change that could make such an entry wrong is announced, and the entry goes. Cascaded deletes
-- (an organisation's) fire these row triggers too; last_used_at, written once a minute, announces nothing.
CREATE FUNCTION notify_api_key_changed() RETURNS trigger AS $$
BEGIN
  PERFORM pg_notify('api_key_changed', OLD.key_hash);
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER api_key_changed AFTER UPDATE OF key_hash, organization_id, name, role, revoked_at, expires_at OR DELETE ON api_keys
  FOR EACH ROW EXECUTE FUNCTION notify_api_key_changed();

CREATE FUNCTION notify_instrument_changed() RETURNS trigger AS $$
BEGIN
  PERFORM pg_notify('instrument_changed', OLD.id::text);
  RETURN NULL;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER instrument_changed AFTER UPDATE OF organization_id OR DELETE ON instruments
  FOR EACH ROW EXECUTE FUNCTION notify_instrument_changed();

-- Down Migration
DROP TRIGGER IF EXISTS instrument_changed ON instruments;
DROP FUNCTION IF EXISTS notify_instrument_changed();
DROP TRIGGER IF EXISTS api_key_changed ON api_keys;
DROP FUNCTION IF EXISTS notify_api_key_changed();

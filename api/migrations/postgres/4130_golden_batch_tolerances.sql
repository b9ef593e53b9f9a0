-- Up Migration
-- A tolerance per parameter of a golden batch: the least half-width of its band, in the parameter's
-- unit ({ "<parameter>": number }). A parameter without one takes its default from the references' noise.
ALTER TABLE golden_batches ADD COLUMN tolerances JSONB NOT NULL DEFAULT '{}';

-- Down Migration
ALTER TABLE golden_batches DROP COLUMN IF EXISTS tolerances;

-- Up Migration
-- Whether the console draws an instrument's series as steps (values logged on change, setpoints):
-- a straight line between two logged values would show a ramp where the process stepped. Instruments
-- of the types that hold setpoints start drawn as steps; anyone can change it per instrument.
ALTER TABLE instruments ADD COLUMN draw_as_steps BOOLEAN NOT NULL DEFAULT false;
UPDATE instruments SET draw_as_steps = true WHERE type IN ('stir_rate', 'rotational_speed', 'nozzle_size');

-- Down Migration
ALTER TABLE instruments DROP COLUMN draw_as_steps;

-- Up Migration
-- How a derived parameter takes sample analytes between samples: linear interpolation between the
-- neighbouring samples, or the last sample's value. Chosen per formula and kept with each version,
-- like the expression it belongs to.
ALTER TABLE derived_parameters
  ADD COLUMN sample_values TEXT NOT NULL DEFAULT 'interpolate' CHECK (sample_values IN ('interpolate', 'last'));
ALTER TABLE derived_parameter_versions
  ADD COLUMN sample_values TEXT NOT NULL DEFAULT 'interpolate' CHECK (sample_values IN ('interpolate', 'last'));

-- Down Migration
ALTER TABLE derived_parameter_versions DROP COLUMN sample_values;
ALTER TABLE derived_parameters DROP COLUMN sample_values;

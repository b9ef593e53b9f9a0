/** The product's fixed lists: instrument types, units, unit-operation and facility types, roles, run statuses. */

export const INSTRUMENT_TYPES = [
  'atomization_pressure', 'column_pressure', 'conductivity', 'crossflow_rate', 'dissolved_co2',
  'dissolved_o2', 'exhaust_co2', 'exhaust_o2', 'feed_rate', 'flow_rate', 'foam_level', 'g_force',
  'gas_flow_rate', 'inlet_air_temperature', 'moisture_content', 'nozzle_size', 'optical_density',
  'outlet_air_temperature', 'pH', 'particle_size_distribution', 'rotational_speed', 'stir_rate',
  'temperature', 'titer', 'transmembrane_pressure', 'uv_absorbance_260', 'uv_absorbance_280',
  'vacuum_level', 'vessel_pressure', 'yield',
  // What plate readers, cell counters, analyzers and controllers write besides the spec's
  // types. Inlet gas has its own types so that off-gas formulas (OUR, CER: [exhaust_o2], [exhaust_co2])
  // never take an inlet column.
  'cell_density', 'fluorescence', 'heater_duty', 'inlet_co2', 'inlet_o2', 'metabolite_concentration',
  'redox_potential', 'viability', 'other',
] as const;
export type InstrumentType = (typeof INSTRUMENT_TYPES)[number];

export const UNITS = [
  'AU', 'G', 'L', 'L/h', 'L/min', 'OD600', 'bar', 'celsius', 'fahrenheit', 'g', 'g/L', 'g/g', 'g/h',
  'h', 'kg', 'kPa', 'mAU', 'mL', 'mL/min', 'mS/cm', 'mg', 'mg/L', 'min', 'mm', 'pH', 'psi', 'rpm',
  's', 'μg', 'μL', 'μm', '%',
  // UCUM codes: what analyzers and counters write, and '{a.u.}' for a header that states
  // arbitrary units ('[]'). The spec's names above stay as they are, whatever UCUM reads into them.
  'mmol/L', 'U/L', '10*6/mL', '/mL', '{cells}/mL', 'mV', '{a.u.}', '1',
] as const;
export type Unit = (typeof UNITS)[number];

/**
 * The spec's unit names that are not UCUM codes of the same unit, with the UCUM code they mean (null:
 * none, or UCUM reads the name as another unit: 'AU' is the astronomic unit there, 'G' the gauss).
 * Names left out are UCUM codes as they stand (g/L, mL/min, %).
 */
export const SPEC_UNIT_UCUM: Readonly<Partial<Record<Unit, string | null>>> = {
  AU: null, G: null, OD600: null, mAU: null, pH: '[pH]', celsius: 'Cel', fahrenheit: '[degF]', psi: '[psi]', rpm: '/min',
  'μg': 'ug', 'μL': 'uL', 'μm': 'um',
};

export const UNIT_OPERATION_TYPES = [
  'fermentation', 'centrifugation', 'filtration', 'chromatography', 'spray_drying', 'freeze_drying',
  'milling', 'alkali_extraction', 'isoelectric_precipitation', 'mixing', 'heating', 'cooling',
] as const;
export type UnitOperationType = (typeof UNIT_OPERATION_TYPES)[number];

export const FACILITY_TYPES = ['lab', 'pilot plant', 'demo plant', 'commercial plant', 'co-manufacturer'] as const;
export type FacilityType = (typeof FACILITY_TYPES)[number];

export const ROLES = ['viewer', 'editor', 'admin'] as const;
export type Role = (typeof ROLES)[number];

export const RUN_STATUSES = ['Pending', 'Active', 'Completed'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export const RUN_STATUS_DESCRIPTIONS: Record<RunStatus, string> = {
  Pending: 'not started yet',
  Active: 'ongoing',
  Completed: 'finished',
};

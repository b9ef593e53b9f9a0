/**
 * A first guess of a new instrument's type and unit from its CSV column name, so the wizard starts
 * filled in for the common cases ('od_reading' -> optical_density, 'T1.PV [°C]' -> temperature in
 * celsius). The scientist confirms or changes it.
 */
import { INSTRUMENT_TYPES, UNITS, type InstrumentType, type Unit } from '../enums.ts';

const TYPE_HINTS: [RegExp, InstrumentType][] = [
  [/\b(od|optical|od600|odau|absorbance)|od_/i, 'optical_density'],
  [/\bph\b|ph1|_ph|ph_/i, 'pH'],
  [/\b(do|dissolved.?o2|do1|o2_value|pO2)|dissolved_o/i, 'dissolved_o2'],
  [/\b(co2|xco2|exhaust.?co2)/i, 'exhaust_co2'],
  [/\b(xo2|exhaust.?o2)/i, 'exhaust_o2'],
  [/temp|thermo|\bt1\b/i, 'temperature'],
  [/stir|agitat|\bn1\b|rpm/i, 'stir_rate'],
  [/feed|pump/i, 'feed_rate'],
  [/flow|\bf1\b|fair|mfc|mfm/i, 'gas_flow_rate'],
  [/press/i, 'vessel_pressure'],
  [/conduct/i, 'conductivity'],
  [/titer|titre/i, 'titer'],
  [/foam/i, 'foam_level'],
  [/yield/i, 'yield'],
];

const UNIT_HINTS: [RegExp, Unit][] = [
  [/°c|degc|celsius/i, 'celsius'],
  [/°f|fahrenheit/i, 'fahrenheit'],
  [/rpm/i, 'rpm'],
  [/l\/min|slpm/i, 'L/min'],
  [/l\/h|sl\/h/i, 'L/h'],
  [/ms\/cm/i, 'mS/cm'],
  [/g\/l/i, 'g/L'],
  [/%/, '%'],
];

const DEFAULT_UNIT: Partial<Record<InstrumentType, Unit>> = {
  optical_density: 'OD600',
  pH: 'pH',
  dissolved_o2: '%',
  temperature: 'celsius',
  stir_rate: 'rpm',
  exhaust_co2: '%',
  exhaust_o2: '%',
};

export function suggestInstrument(columnName: string): { type: InstrumentType | ''; unit: Unit | '' } {
  const type = TYPE_HINTS.find(([pattern]) => pattern.test(columnName))?.[1] ?? '';
  const bracketed = /\[([^\]]*)\]/.exec(columnName)?.[1] ?? '';
  const exact = (UNITS as readonly string[]).find((unit) => unit === bracketed.trim()) as Unit | undefined;
  const hinted = UNIT_HINTS.find(([pattern]) => pattern.test(bracketed || columnName))?.[1];
  const unit = exact ?? hinted ?? (type ? DEFAULT_UNIT[type] : undefined) ?? '';
  return { type: (INSTRUMENT_TYPES as readonly string[]).includes(type) ? type : '', unit };
}

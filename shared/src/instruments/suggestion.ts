/**
 * A first guess of a new instrument's type and unit from its CSV column name, so the wizard starts
 * filled in ('od_reading' -> optical_density, 'T1.PV [°C]' -> temperature in celsius). The unit is the
 * header's own (header-unit.ts), never one guessed from the type; the scientist confirms or changes both.
 * Pure: the api's CSV preview and the console's wizard call the same functions.
 */
import { INSTRUMENT_TYPES, type InstrumentType } from '../enums.ts';
import { ARBITRARY_UNIT, headerUnit } from './header-unit.ts';

/** An organisation's own instrument type, as the suggestion needs it (camelCase: the api maps its rows, the console its answer). */
export interface CatalogueType {
  name: string;
  defaultUnit: string | null;
}

export interface InstrumentSuggestion {
  /** A built-in type, an organisation's own type's name, or '' when the name says too little. */
  type: string;
  /** The header's unit ('' when it names none that fits: the user picks). */
  unit: string;
  /** The unit part of the header as written, or null when it has none. */
  headerUnit: string | null;
  /** Why the header's unit was not taken as written, or null. */
  unitNote: string | null;
}

const EXHAUST = /exhaust|off.?gas|\bout(let)?\b|\bvent\b/i;
const INLET = /inlet|\bin\b|supply|sparg/i;
// DASware and other controllers call the O2 and CO2 fractions of the gas mix they feed XO2 and XCO2
// (their analyzer's readings, `.Out`, are taken first in LEADING_HINTS).
const GAS_MIX = /(^|[^a-z])xc?o2/i;

/**
 * O2 and CO2 in the gas: inlet and exhaust are different types, because OUR and CER read only
 * [exhaust_o2] and [exhaust_co2]; a gas column that names no side gets no type rather than a guess.
 */
function gasType(name: string): InstrumentType | '' | null {
  const co2 = /(^|[^a-z])x?co2/i.test(name);
  const o2 = !co2 && (/(^|[^a-z])x?o2(?![a-z])|oxygen/i.test(name));
  if (!co2 && !o2) return null;
  if (EXHAUST.test(name)) return co2 ? 'exhaust_co2' : 'exhaust_o2';
  if (INLET.test(name) || GAS_MIX.test(name)) return co2 ? 'inlet_co2' : 'inlet_o2';
  return '';
}

/** Checked in order, before the gas rule: the first that matches names the type. */
const LEADING_HINTS: [RegExp, InstrumentType][] = [
  // DASGIP's off-gas analyzer (GA4) hands its readings to the unit as `XO2 1.Out` and `XCO2 1.Out`
  // (GasAnalyzer.XO2.Out in the export's track list, beside the OTR, CTR and RQ it computes from them);
  // the gas mixing module's inlet fractions are `XO21.PV` and `XO21.SP`.
  [/(^|[^a-z])xco2\s*\d*\.out\b/i, 'exhaust_co2'],
  [/(^|[^a-z])xo2\s*\d*\.out\b/i, 'exhaust_o2'],
  // A controller's output is its actuator's duty (heater, pump, valve), not its process value.
  [/\bt\d*\.out\b|heat(er|ing)?.?(duty|power|output|rate)/i, 'heater_duty'],
  [/\.out\b/i, 'other'],
  [/\b(do|dissolved.?o2|do1|o2_value|pO2)|dissolved_o/i, 'dissolved_o2'],
];

const TRAILING_HINTS: [RegExp, InstrumentType][] = [
  [/redox|\borp\b|\brd\d*\b/i, 'redox_potential'],
  [/fluoresc|\bgfp|\brfp|\byfp|mcherry|\bfp\d_(emit|base)/i, 'fluorescence'],
  [/viab/i, 'viability'],
  [/cells?\s*\/|cell.?(density|count|conc)|\b[vt]cd\b|viable.?cells|total.?cells|\b(live|dead|total)\b/i, 'cell_density'],
  [/glucose|lactate|glutamine|glutamate|ammoni|acetate|formate|ethanol|\b(glc|lac|gln|glu|nh4)\b/i, 'metabolite_concentration'],
  [/\b(od|optical|od600|odau|absorbance)|od_/i, 'optical_density'],
  [/\bph\b|ph1|_ph|ph_/i, 'pH'],
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

/** An organisation's own type whose name the column names (longest first: 'Capacitance 2' over 'Capacitance'). */
function catalogueTypeNamed(columnName: string, types: readonly CatalogueType[]): CatalogueType | undefined {
  const name = columnName.toLowerCase();
  return [...types].sort((a, b) => b.name.length - a.name.length).find((type) => name.includes(type.name.toLowerCase()));
}

export function suggestInstrumentType(columnName: string): InstrumentType | '' {
  const leading = LEADING_HINTS.find(([pattern]) => pattern.test(columnName))?.[1];
  if (leading) return leading;
  const gas = gasType(columnName);
  if (gas !== null) return gas;
  return TRAILING_HINTS.find(([pattern]) => pattern.test(columnName))?.[1] ?? '';
}

/** A name that says nothing (DASware's 'FA1', 'FO21') still has a unit that says what flows: gas in standard litres, liquid in mL. */
function typeFromUnit(unit: string): InstrumentType | '' {
  if (/^L\{STP\}\/(h|min)$/.test(unit)) return 'gas_flow_rate';
  if (/^(mL|uL|ul|ml)\/(h|min)$/.test(unit)) return 'feed_rate';
  return '';
}

export function suggestInstrument(columnName: string, catalogueTypes: readonly CatalogueType[] = []): InstrumentSuggestion {
  const stated = headerUnit(columnName);
  const own = catalogueTypeNamed(columnName, catalogueTypes);
  const builtIn = suggestInstrumentType(columnName) || typeFromUnit(stated.unit);
  const type = own?.name ?? ((INSTRUMENT_TYPES as readonly string[]).includes(builtIn) ? builtIn : '');
  // No unit in the header: the values are as the file wrote them, in no stated unit. Only an
  // organisation's own type brings a unit of its own (its admin declared it), never a guess (OD600).
  const unit = stated.literal !== null ? stated.unit : (own?.defaultUnit ?? ARBITRARY_UNIT);
  return { type, unit, headerUnit: stated.literal, unitNote: stated.note };
}

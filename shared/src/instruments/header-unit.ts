/**
 * The unit a column header states: `Feed [mL/h]`, `Redox (mV)`, `TIME [h]`, `OD []`. Taken literally:
 * a UCUM code or one of the spec's units is the suggestion as written; a vendor spelling of exactly
 * one unit that UCUM writes otherwise (°C, sL/h, cells/ml) maps to that unit's code, never to
 * another unit (mL/h stays mL/h, it is not L/h); anything else is reported and left for the user.
 */
import { instrumentUnitProblem } from './units.ts';

/** A header's `[]` (or `()`): the file says the values have no unit, i.e. arbitrary units. */
export const ARBITRARY_UNIT = '{a.u.}';

/**
 * Vendor spellings with the code of the same unit. Standard litres (sL, at 0 °C and 1 atm, what
 * mass-flow controllers count) are litres annotated {STP} in UCUM: the same numbers, never a factor.
 */
const SAME_UNIT_SPELLINGS: Readonly<Record<string, string>> = {
  '°C': 'celsius', 'ºC': 'celsius', '° C': 'celsius', degC: 'celsius', '°F': 'fahrenheit', degF: 'fahrenheit',
  RPM: 'rpm', 'sL/h': 'L{STP}/h', 'sl/h': 'L{STP}/h', 'ls/h': 'L{STP}/h', 'SL/h': 'L{STP}/h', 'NL/h': 'L{STP}/h',
  'sL/min': 'L{STP}/min', 'sl/min': 'L{STP}/min', slpm: 'L{STP}/min', SLPM: 'L{STP}/min', sL: 'L{STP}', sl: 'L{STP}',
  'cells/ml': '{cells}/mL', 'cells/mL': '{cells}/mL', 'µm': 'um', microns: 'um', micron: 'um', 'µl': 'uL', 'µL': 'uL',
  '%DO': '%{DO}', rH: '%{RH}', '%rH': '%{RH}', '%RH': '%{RH}',
};

export interface HeaderUnit {
  /** The text between the brackets, as written (trimmed); null when the header has no unit part. */
  literal: string | null;
  /** The unit to suggest: the literal, its UCUM spelling, ARBITRARY_UNIT for `[]`, or '' when none fits. */
  unit: string;
  /** Why the literal was not taken as written, for the wizard to show; null when it was. */
  note: string | null;
}

export function sameUnitSpelling(literal: string): string | undefined {
  return Object.hasOwn(SAME_UNIT_SPELLINGS, literal) ? SAME_UNIT_SPELLINGS[literal] : undefined;
}

/** A bracketed number is a label (a wavelength, a channel: `Max V [600]`), not a unit. */
function isNumberLabel(literal: string): boolean {
  return /^\d+(\.\d+)?$/.test(literal) && literal !== '1';
}

function fromLiteral(literal: string): HeaderUnit {
  if (literal === '') return { literal, unit: ARBITRARY_UNIT, note: null };
  if (instrumentUnitProblem(literal) === null) return { literal, unit: literal, note: null };
  const spelling = sameUnitSpelling(literal);
  if (spelling) return { literal, unit: spelling, note: `The header's '${literal}' is written '${spelling}' here (the same unit).` };
  return { literal, unit: '', note: `The header's '${literal}' is not a UCUM code: pick the unit it means.` };
}

/**
 * Square brackets at the end of a header always hold its unit. Parentheses do so only when their
 * text is a unit: `(processed)` or `(x 10^6)` are remarks, `(mV)` and `(%)` are units.
 */
export function headerUnit(columnName: string): HeaderUnit {
  const name = columnName.trim();
  const bracketed = /\[([^\][]*)\]\s*$/.exec(name);
  if (bracketed) {
    const literal = bracketed[1]!.trim();
    if (!isNumberLabel(literal)) return fromLiteral(literal);
  }
  const parenthesised = /\(([^()]*)\)\s*$/.exec(name);
  if (parenthesised) {
    const literal = parenthesised[1]!.trim();
    const read = fromLiteral(literal);
    if (!isNumberLabel(literal) && read.unit !== '') return read;
  }
  return { literal: null, unit: '', note: null };
}

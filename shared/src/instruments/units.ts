/**
 * What an instrument's unit may be: one of the spec's units (kept as the defaults, whatever UCUM reads
 * into their names) or any UCUM code, so a unit written in a file's header is stored as written.
 * An organisation's own units are UCUM codes with a label; they add to the pickers, not to this rule.
 */
import { SPEC_UNIT_UCUM, UNITS } from '../enums.ts';
import { isUcumUnit, ucumConversionFactor } from './ucum.ts';

export function isSpecUnit(unit: string): boolean {
  return (UNITS as readonly string[]).includes(unit);
}

/** Why a unit cannot be an instrument's, naming it, or null when it can. */
export function instrumentUnitProblem(unit: string): string | null {
  if (isSpecUnit(unit) || isUcumUnit(unit)) return null;
  return `Unit '${unit}' is neither one of the units nor a UCUM code (e.g. mL/h, mmol/L, 10*6/mL, mV, {a.u.}).`;
}

/** The UCUM code an instrument unit means, or null when it has none (OD600, AU: no UCUM code). */
export function ucumCodeOf(unit: string): string | null {
  if (unit in SPEC_UNIT_UCUM) return SPEC_UNIT_UCUM[unit as keyof typeof SPEC_UNIT_UCUM] ?? null;
  return isUcumUnit(unit) ? unit : null;
}

/**
 * The factor from values in one instrument unit to another (mL/h to L/h: 0.001), or null when no
 * exact conversion exists (different dimensions, an offset such as celsius to fahrenheit, a name
 * without a UCUM code). The same unit converts by 1.
 */
export function unitConversionFactor(from: string, to: string): number | null {
  if (from === to) return 1;
  const fromCode = ucumCodeOf(from);
  const toCode = ucumCodeOf(to);
  return fromCode && toCode ? ucumConversionFactor(fromCode, toCode) : null;
}

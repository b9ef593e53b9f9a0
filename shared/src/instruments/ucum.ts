/**
 * UCUM unit codes, checked and converted with the U.S. National Library of Medicine's UCUM library:
 * the one check the api (instruments, samples) and the console's suggestions share.
 */
// The library ships no types; a reference (not the tsconfig's include) so that every package compiling this file sees them.
// eslint-disable-next-line @typescript-eslint/triple-slash-reference
/// <reference path="./ucum-lhc.d.ts" />
import ucum from '@lhncbc/ucum-lhc';
import { LRUCache } from 'lru-cache';

const utilities = ucum.UcumLhcUtils.getInstance();

/** A lab uses a handful of units again and again; the cache spares re-parsing them on every save. */
const verdicts = new LRUCache<string, string | ''>({ max: 2000 });

/**
 * The library looks unit symbols up in plain objects, so it takes 'constructor' or '__proto__' for
 * units; no UCUM symbol is the name of an object's property, so those are refused first.
 */
function isUcum(unit: string): boolean {
  // UCUM has no blanks; refusing them first also keeps the library from logging its complaint to stdout.
  if (unit === '' || /\s/.test(unit)) return false;
  if (unit.split(/[^A-Za-z_]+/).some((token) => token !== '' && token in Object.prototype)) return false;
  try {
    return utilities.validateUnitString(unit, false).status === 'valid';
  } catch {
    return false;
  }
}

/** Why a unit is not a UCUM code, or null when it is one. */
export function ucumUnitProblem(unit: string): string | null {
  const cached = verdicts.get(unit);
  if (cached !== undefined) return cached || null;
  const verdict = isUcum(unit) ? '' : `'${unit}' is not a UCUM unit code (e.g. g/L, mmol/L, 10*6/mL, %).`;
  verdicts.set(unit, verdict);
  return verdict || null;
}

export function isUcumUnit(unit: string): boolean {
  return ucumUnitProblem(unit) === null;
}

/**
 * The factor that turns values in `from` into values in `to` (mL/h to L/h: 0.001), or null when the
 * two are not UCUM codes of the same dimension. Only multiplicative units: a factor is what an import
 * applies to every value, and Cel to [degF] has an offset.
 */
export function ucumConversionFactor(from: string, to: string): number | null {
  if (!isUcumUnit(from) || !isUcumUnit(to)) return null;
  try {
    const one = utilities.convertUnitTo(from, 1, to);
    const zero = utilities.convertUnitTo(from, 0, to);
    if (one.status !== 'succeeded' || zero.status !== 'succeeded' || one.toVal === null) return null;
    if (zero.toVal !== 0 || !Number.isFinite(one.toVal)) return null;
    return one.toVal;
  } catch {
    return null;
  }
}

/** Checks sample result units against UCUM, with the U.S. National Library of Medicine's UCUM library. */
// The library ships no types; a reference (not the tsconfig's include) so that every package compiling this file (the workers' tests import the api) sees them.
// eslint-disable-next-line @typescript-eslint/triple-slash-reference
/// <reference path="./ucum-lhc.d.ts" />
import ucum from '@lhncbc/ucum-lhc';
import { LRUCache } from 'lru-cache';

const utilities = ucum.UcumLhcUtils.getInstance();

/** A lab uses a handful of units again and again; the cache spares re-parsing them on every grid save. */
const verdicts = new LRUCache<string, string | ''>({ max: 2000 });

/**
 * The library looks unit symbols up in plain objects, so it takes 'constructor' or '__proto__' for
 * units; no UCUM symbol is the name of an object's property, so those are refused first.
 */
function isUcum(unit: string): boolean {
  // UCUM has no blanks; refusing them first also keeps the library from logging its complaint to stdout.
  if (/\s/.test(unit)) return false;
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

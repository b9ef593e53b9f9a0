/**
 * Unit conversion of a mapped CSV column, on request only: a column's values are stored as written
 * unless the mapping asks to convert them from one unit to another (mL/h to L/h, mg/L to g/L, °F to
 * Cel). The units are instrument units (UCUM codes, or the spec's names such as `celsius`), converted
 * with the UCUM library (@lhncbc/ucum-lhc), which also handles the offsets of temperature scales.
 * The worker converts while reading; the api refuses a pair that does not convert before queueing.
 *
 * Not exported from the csv index: the UCUM tables are large, and only the worker, the api and the
 * wizard's mapping table need them.
 */
// The library ships no types; a reference (not the tsconfig's include) so that every package compiling this file sees them.
// eslint-disable-next-line @typescript-eslint/triple-slash-reference
/// <reference path="../instruments/ucum-lhc.d.ts" />
import ucum from '@lhncbc/ucum-lhc';
import { ucumCodeOf } from '../instruments/units.ts';

/** The UCUM library's unit object (it ships no types): what a conversion is computed with. */
interface UcumUnit {
  convertFrom(value: number, from: UcumUnit): number;
}

interface UnitConversionAnswer {
  status: 'succeeded' | 'failed' | 'error';
  toVal: number | null;
  msg: string[];
  fromUnit?: UcumUnit;
  toUnit?: UcumUnit;
}

const utilities = ucum.UcumLhcUtils.getInstance() as unknown as {
  convertUnitTo(from: string, value: number, to: string): UnitConversionAnswer;
};

export interface UnitConversion {
  from: string;
  to: string;
}

/**
 * Significant digits a converted value keeps. A conversion goes through the base unit in binary
 * floating point (212 °F comes out as 100.00000000000006 Cel, -40 Cel as -40.0000000000001 °F); 15
 * digits is what a double holds exactly, more than any instrument reads, so rounding there gives the
 * value the conversion means. With an offset (temperatures) the arithmetic runs through the absolute
 * scale (233.15 K for -40 Cel) and loses more: 13 digits of the larger of the value and the offset.
 */
export const CONVERTED_SIGNIFICANT_DIGITS = 15;

function conversionOf(from: string, to: string): { fromCode: string; toCode: string; answer: UnitConversionAnswer } | string {
  const fromCode = ucumCodeOf(from.trim());
  const toCode = ucumCodeOf(to.trim());
  if (fromCode === null) return `'${from}' is not a unit that converts (a UCUM code such as mL/h, g/L or Cel).`;
  if (toCode === null) return `'${to}' is not a unit that converts (a UCUM code such as mL/h, g/L or Cel).`;
  let answer: UnitConversionAnswer;
  try {
    answer = utilities.convertUnitTo(fromCode, 1, toCode);
  } catch {
    return incompatible(from, to);
  }
  if (answer.status !== 'succeeded' || !answer.fromUnit || !answer.toUnit) return incompatible(from, to);
  return { fromCode, toCode, answer };
}

function incompatible(from: string, to: string): string {
  return `'${from}' cannot be converted to '${to}': the two units do not measure the same quantity.`;
}

/** Why values in `from` cannot be converted to `to`, naming both units, or null when they can. */
export function unitConversionProblem(from: string, to: string): string | null {
  const conversion = conversionOf(from, to);
  return typeof conversion === 'string' ? conversion : null;
}

/** Digits kept by a conversion with an offset (temperature scales). */
const OFFSET_CONVERTED_SIGNIFICANT_DIGITS = 13;

/** Rounds a converted value to its significant digits, counted from the larger of it and the conversion's offset. */
function rounded(value: number, offset: number): number {
  if (!Number.isFinite(value) || value === 0) return value;
  const magnitude = Math.max(Math.abs(value), Math.abs(offset));
  const digits = offset === 0 ? CONVERTED_SIGNIFICANT_DIGITS : OFFSET_CONVERTED_SIGNIFICANT_DIGITS;
  const decimals = digits - 1 - Math.floor(Math.log10(magnitude));
  // toFixed rounds the decimal text exactly; past its range, significant digits do the same.
  if (decimals >= 0 && decimals <= 100) return Number(value.toFixed(decimals));
  return Number(value.toPrecision(digits));
}

/**
 * A function turning values in `from` into values in `to`, or the problem naming both units. The
 * units are looked up once; each value is one multiplication (and an offset for temperatures).
 */
export function createUnitConverter(from: string, to: string): ((value: number) => number) | { problem: string } {
  const conversion = conversionOf(from, to);
  if (typeof conversion === 'string') return { problem: conversion };
  if (conversion.fromCode === conversion.toCode) return (value) => value;
  const fromUnit = conversion.answer.fromUnit!;
  const toUnit = conversion.answer.toUnit!;
  const offset = toUnit.convertFrom(0, fromUnit);
  return (value) => rounded(toUnit.convertFrom(value, fromUnit), offset);
}

/**
 * An organisation's instrument catalogue: the spec's types and units (the defaults, for everyone) and
 * the organisation's own, which its admins add in Settings and every instrument picker offers.
 */
import { z } from 'zod';
import { INSTRUMENT_TYPES, UNITS } from '../enums.ts';
import { ucumUnitProblem } from './ucum.ts';
import { instrumentUnitProblem } from './units.ts';

export const CATALOGUE_MESSAGES = {
  typeNameTaken: 'Your organisation already has an instrument type with this name.',
  unitCodeTaken: 'Your organisation already has this unit.',
  typeNotFound: 'Instrument type not found',
  unitNotFound: 'Unit not found',
  unknownType: (type: string) => `Type '${type}' is neither one of the instrument types nor one of your organisation's own.`,
} as const;

const isBuiltInType = (name: string) => (INSTRUMENT_TYPES as readonly string[]).some((type) => type.toLowerCase() === name.toLowerCase());

export const catalogueTypeCreateSchema = z.object({
  name: z.string({ error: 'Name is required.' }).trim().min(1, { error: 'Name is required.' }).max(64, { error: 'Name must be at most 64 characters.' })
    // Formulas name instruments by type in brackets ([exhaust_o2]); quotes and brackets would end the reference.
    .refine((name) => !/["'[\]\p{Cc}]/u.test(name), { error: 'Name may not contain quotes, brackets or control characters.' })
    .refine((name) => !isBuiltInType(name), { error: (issue) => `'${String(issue.input).trim()}' is already one of the instrument types.` }),
  default_unit: z.string({ error: 'Default unit must be text.' }).trim().max(50, { error: 'Default unit must be at most 50 characters.' })
    .refine((unit) => instrumentUnitProblem(unit) === null, { error: (issue) => `Default unit: ${instrumentUnitProblem(String(issue.input).trim())}` })
    .nullable().optional(),
});
export type CatalogueTypeCreate = z.infer<typeof catalogueTypeCreateSchema>;

export const catalogueUnitCreateSchema = z.object({
  code: z.string({ error: 'Code is required.' }).trim().min(1, { error: 'Code is required.' }).max(50, { error: 'Code must be at most 50 characters.' })
    .refine((code) => ucumUnitProblem(code) === null, { error: (issue) => ucumUnitProblem(String(issue.input).trim()) ?? 'Code is not a UCUM code.' })
    .refine((code) => !(UNITS as readonly string[]).includes(code), { error: (issue) => `'${String(issue.input).trim()}' is already one of the units.` }),
  label: z.string({ error: 'Label is required.' }).trim().min(1, { error: 'Label is required.' }).max(100, { error: 'Label must be at most 100 characters.' }),
});
export type CatalogueUnitCreate = z.infer<typeof catalogueUnitCreateSchema>;

export const catalogueTypeSchema = z.object({
  id: z.number().int(),
  name: z.string(),
  default_unit: z.string().nullable(),
  created_at: z.string(),
});
export type CatalogueTypeEntry = z.infer<typeof catalogueTypeSchema>;

export const catalogueUnitSchema = z.object({
  id: z.number().int(),
  code: z.string(),
  label: z.string(),
  created_at: z.string(),
});
export type CatalogueUnitEntry = z.infer<typeof catalogueUnitSchema>;

export const instrumentCatalogueSchema = z.object({
  built_in_types: z.array(z.string()),
  built_in_units: z.array(z.string()),
  types: z.array(catalogueTypeSchema).describe("The organisation's own types, by name"),
  units: z.array(catalogueUnitSchema).describe("The organisation's own units, by code"),
});
export type InstrumentCatalogue = z.infer<typeof instrumentCatalogueSchema>;

/** Every type an instrument of the organisation may take: the spec's, then the organisation's own. */
export function catalogueTypeNames(catalogue: { types: readonly { name: string }[] }): string[] {
  return [...INSTRUMENT_TYPES, ...catalogue.types.map((type) => type.name)];
}

/** Every unit the pickers offer: the spec's, then the organisation's own codes. */
export function catalogueUnitCodes(catalogue: { units: readonly { code: string }[] }): string[] {
  return [...UNITS, ...catalogue.units.map((unit) => unit.code).filter((code) => !(UNITS as readonly string[]).includes(code))];
}

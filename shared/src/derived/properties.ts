/**
 * Named numeric properties of a unit operation that formulas may use (working volume, feed
 * concentration, inlet gas composition...). Stored with the unit operation; the inlet gas fractions
 * default to dry air when not set.
 */
import { z } from 'zod';

export const UNIT_OPERATION_PROPERTIES = {
  working_volume: { label: 'Working volume', unit: 'L', default: null },
  feed_concentration: { label: 'Feed substrate concentration', unit: 'g/L', default: null },
  biomass_per_od: { label: 'Biomass per OD unit', unit: 'g/L per OD', default: null },
  inlet_o2_fraction: { label: 'Inlet O2 fraction', unit: 'mol/mol', default: 0.2095 },
  inlet_co2_fraction: { label: 'Inlet CO2 fraction', unit: 'mol/mol', default: 0.0004 },
} as const;

export type UnitOperationPropertyName = keyof typeof UNIT_OPERATION_PROPERTIES;
export const UNIT_OPERATION_PROPERTY_NAMES = Object.keys(UNIT_OPERATION_PROPERTIES) as UnitOperationPropertyName[];

const propertyValue = z.number({ message: 'must be a number' }).finite('must be a finite number');

/** The properties of a unit operation as sent and stored: any subset, null clears one. */
export const unitOperationPropertiesSchema = z.object(
  Object.fromEntries(UNIT_OPERATION_PROPERTY_NAMES.map((name) => [name, propertyValue.nullable().optional()])) as
    Record<UnitOperationPropertyName, z.ZodOptional<z.ZodNullable<typeof propertyValue>>>,
).strict();
export type UnitOperationProperties = z.infer<typeof unitOperationPropertiesSchema>;

/** The value a formula sees: the stored one, else the default, else null (not set). */
export function propertyValueOf(properties: UnitOperationProperties | null | undefined, name: UnitOperationPropertyName): number | null {
  const stored = properties?.[name];
  if (typeof stored === 'number') return stored;
  return UNIT_OPERATION_PROPERTIES[name].default;
}

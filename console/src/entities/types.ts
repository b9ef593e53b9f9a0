/**
 * The console's camelCase view of the server objects. Responses are validated with the
 * snake_case wire schemas of `@bioprocess/shared` (the API client parses before converting keys), and
 * the types here are those schemas with their keys camel-cased, so nothing is defined twice.
 */
import { z } from 'zod';
import {
  equipmentSchema, facilitySchema, instrumentSchema, runSchema, unitOperationSchema, unitOperationTypeSchema,
} from '@bioprocess/shared/entities';
import { auditLogSchema, organizationSchema, userSchema } from '@bioprocess/shared/auth-contracts';
import { readingSchema } from '@bioprocess/shared/timeseries';

type CamelKey<S extends string> = S extends `${infer Head}_${infer Tail}` ? `${Head}${Capitalize<CamelKey<Tail>>}` : S;

/** The type-level twin of the API client's recursive key conversion. */
export type Camelize<T> = T extends readonly (infer Item)[]
  ? Camelize<Item>[]
  : T extends object
    ? { [K in keyof T as K extends string ? CamelKey<K> : K]: Camelize<T[K]> }
    : T;

export const runListSchema = z.array(runSchema);
export const unitOperationListSchema = z.array(unitOperationSchema);
export const unitOperationTypeListSchema = z.array(unitOperationTypeSchema);
export const facilityListSchema = z.array(facilitySchema);
export const equipmentListSchema = z.array(equipmentSchema);
export const instrumentListSchema = z.array(instrumentSchema);
export const readingListSchema = z.array(readingSchema);
export const userListSchema = z.array(userSchema);
export const organizationListSchema = z.array(organizationSchema);
export const auditLogListSchema = z.array(auditLogSchema);
export { runSchema, unitOperationSchema, facilitySchema, equipmentSchema, instrumentSchema, userSchema, organizationSchema };

/** Runs as the screens read them; tests may leave out what a computation does not need. */
export type Run = Camelize<z.infer<typeof runSchema>>;
export type UnitOperation = Camelize<z.infer<typeof unitOperationSchema>>;
export type UnitOperationTypeOption = Camelize<z.infer<typeof unitOperationTypeSchema>>;
export type Facility = Camelize<z.infer<typeof facilitySchema>>;
export type Equipment = Camelize<z.infer<typeof equipmentSchema>>;
export type Instrument = Camelize<z.infer<typeof instrumentSchema>>;
export type Reading = Camelize<z.infer<typeof readingSchema>>;
export type User = Camelize<z.infer<typeof userSchema>>;
export type Organization = Camelize<z.infer<typeof organizationSchema>>;
export type AuditLog = Camelize<z.infer<typeof auditLogSchema>>;

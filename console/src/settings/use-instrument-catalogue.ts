/**
 * The organisation's instrument catalogue (the spec's types and units and its own), read once and
 * shared by every picker through SWR's cache; Settings revalidates it after a change.
 */
import { instrumentCatalogueSchema } from '@bioprocess/shared/instruments/catalogue';
import { useApi } from '../api/hooks.ts';

/** The answer as the api client hands it over: in camelCase. */
export interface InstrumentCatalogue {
  builtInTypes: string[];
  builtInUnits: string[];
  types: { id: number; name: string; defaultUnit: string | null }[];
  units: { id: number; code: string; label: string }[];
}

export const INSTRUMENT_CATALOGUE_PATH = '/api/v1/instrument-catalogue';

export function useInstrumentCatalogue() {
  return useApi<InstrumentCatalogue>(INSTRUMENT_CATALOGUE_PATH, instrumentCatalogueSchema);
}

/** A unit's label in a picker: the organisation's label beside its code, the spec's units as they are. */
export function unitOptionLabel(catalogue: InstrumentCatalogue | undefined, code: string): string {
  const own = catalogue?.units.find((unit) => unit.code === code);
  return own ? `${code} (${own.label})` : code;
}

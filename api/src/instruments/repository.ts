/**
 * What the api adds to the instruments repository (shared/src/server/instruments-repository.ts, which
 * holds every statement on the table for the api and the ingest-worker): the organisation-scoped
 * lookup that answers 404, the page of all instruments, the name rule's 409 and the wire form.
 */
import type pg from 'pg';
import { toIsoTimestamp, type Instrument } from '@bioprocess/shared/entities';
import { INSTRUMENT_MESSAGES } from '@bioprocess/shared/errors';
import { INSTRUMENTS_TABLE, instrumentNameTaken, type InstrumentRow } from '@bioprocess/shared/server/instruments-repository';
import { conflict } from '../platform/http-error.ts';
import {
  listOrganizationRows, requireOrganizationRow, type OrganizationTable, type RowLock, type RowPage,
} from '../platform/organization-rows.ts';

export const INSTRUMENT_NOT_FOUND = 'Instrument not found';

const INSTRUMENTS: OrganizationTable = { ...INSTRUMENTS_TABLE, notFound: INSTRUMENT_NOT_FOUND };

export function toInstrument(row: InstrumentRow): Instrument {
  return { ...row, created_at: toIsoTimestamp(row.created_at), updated_at: toIsoTimestamp(row.updated_at) };
}

export async function requireInstrument(
  db: pg.Pool | pg.PoolClient,
  organizationId: number,
  instrumentId: number,
  options: { lock?: RowLock } = {},
): Promise<InstrumentRow> {
  return requireOrganizationRow<InstrumentRow>(db, INSTRUMENTS, organizationId, instrumentId, options);
}

export function listInstruments(db: pg.Pool | pg.PoolClient, organizationId: number, page: { limit: number; offset: number }): Promise<RowPage<InstrumentRow>> {
  return listOrganizationRows<InstrumentRow>(db, INSTRUMENTS, organizationId, { ...page, orderBy: 'id' });
}

/** Names are unique within their equipment, compared case-insensitively. */
export async function assertInstrumentNameFree(
  db: pg.Pool | pg.PoolClient,
  organizationId: number,
  equipmentId: number,
  name: string,
  exceptInstrumentId: number | null,
): Promise<void> {
  if (await instrumentNameTaken(db, organizationId, equipmentId, name, exceptInstrumentId)) throw conflict(INSTRUMENT_MESSAGES.duplicateName);
}

/** Two concurrent writes of the same name both pass the check; the unique index refuses the second. */
export function rethrowDuplicateName(error: unknown): never {
  if ((error as { code?: string }).code === '23505') throw conflict(INSTRUMENT_MESSAGES.duplicateName);
  throw error;
}

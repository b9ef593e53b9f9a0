/**
 * The wizard's first step after a file is chosen: does the upload fit on the equipment? The file's
 * first and last reading (file-time-range.ts) go to GET /api/v1/unit-operations/window-check with the
 * unit operation (or, for a new one, the form's equipment and times) and the open-end choice; a file
 * that would overlap another unit operation is refused here, with the api's message naming it, before
 * the user maps anything. When the range or the check is unavailable the wizard says so and goes on:
 * the upload checks again under the equipment's lock.
 */
import { Callout, Intent } from '@blueprintjs/core';
import { useEffect, useMemo, useState } from 'react';
import { windowCheckSchema, type WindowCheck } from '@bioprocess/shared/unit-operation-windows';
import { useApi } from '../api/hooks.ts';
import { formatDate } from '../dates/date-time-format.ts';
import type { UnitOperationFormState } from '../runs/UnitOperationDialog.tsx';
import { readFileTimeRange, type FileTimeRange, type TimestampReading } from './file-time-range.ts';
import type { PreviewSource } from './read-preview.ts';

export const WINDOW_CHECK_MESSAGES = {
  refusedTitle: 'This file overlaps another unit operation',
  blockedLabel: 'File Overlaps Another Unit Operation',
  reading: "Reading the file's first and last timestamps...",
  unknown: (reason: string) => `The file's end is unknown here (${reason}); the upload checks the window when it runs.`,
  failed: (error: string) => `The window could not be checked (${error}); the upload checks it when it runs.`,
  fits: (firstMs: number, lastMs: number) => `Readings from ${formatDate(firstMs)} to ${formatDate(lastMs)}: no other unit operation on this equipment overlaps.`,
} as const;

export interface WindowCheckInput {
  file: PreviewSource | null;
  /** The rows the preview parsed from the start of the file. */
  headRows: readonly (readonly string[])[];
  partial: boolean;
  encoding: string;
  reading: TimestampReading | null;
  form: UnitOperationFormState;
  /** Only for an open-ended unit operation: close it at the file's last reading. */
  closeOpenEnd: boolean;
}

export interface WindowCheckState {
  /** null while the file's timestamps are read (or no file is chosen). */
  range: FileTimeRange | null;
  check: WindowCheck | null;
  error: string | null;
  /** The api's message naming the unit operation the upload would overlap: the file is refused. */
  refused: string | null;
}

/** The window-check request for a known range, or null when there is nothing to ask (no equipment yet). */
export function windowCheckPath(form: UnitOperationFormState, range: FileTimeRange | null, closeOpenEnd: boolean): string | null {
  if (!range?.known) return null;
  const query = new URLSearchParams();
  if (form.mode === 'edit' && form.unitOperation) {
    query.set('unit_operation_id', String(form.unitOperation.id));
  } else {
    if (!form.equipmentId) return null;
    query.set('equipment_id', String(form.equipmentId));
    if (form.startTime) query.set('start_time', form.startTime);
    if (form.endTime) query.set('end_time', form.endTime);
  }
  query.set('first_reading', new Date(range.firstMs).toISOString());
  query.set('last_reading', new Date(range.lastMs).toISOString());
  query.set('close_open_end', String(closeOpenEnd));
  return `/api/v1/unit-operations/window-check?${query.toString()}`;
}

export function useWindowCheck(input: WindowCheckInput): WindowCheckState {
  const { file, headRows, partial, encoding, reading, form, closeOpenEnd } = input;
  const [range, setRange] = useState<FileTimeRange | null>(null);
  const readingKey = reading ? JSON.stringify(reading) : null;

  useEffect(() => {
    setRange(null);
    if (!file || !readingKey) return undefined;
    let current = true;
    void readFileTimeRange(file, { headRows, partial, encoding }, JSON.parse(readingKey) as TimestampReading)
      .then((found) => { if (current) setRange(found); });
    return () => { current = false; };
  }, [file, headRows, partial, encoding, readingKey]);

  const path = windowCheckPath(form, range, closeOpenEnd);
  const answer = useApi<WindowCheck>(path, windowCheckSchema, { revalidateOnFocus: false });
  return useMemo(() => {
    const check = path && answer.data ? answer.data : null;
    return {
      range,
      check,
      error: path && answer.error ? answer.error.message : null,
      refused: check?.conflict?.message ?? null,
    };
  }, [path, range, answer.data, answer.error]);
}

export function WindowCheckNotice({ state, fileChosen }: { state: WindowCheckState; fileChosen: boolean }) {
  if (!fileChosen) return null;
  if (state.refused) {
    return (
      <Callout intent={Intent.DANGER} icon="error" title={WINDOW_CHECK_MESSAGES.refusedTitle} data-testid="window-check-conflict">
        {state.refused}
      </Callout>
    );
  }
  if (state.error) return <Callout intent={Intent.WARNING} compact data-testid="window-check-failed">{WINDOW_CHECK_MESSAGES.failed(state.error)}</Callout>;
  if (state.range && !state.range.known) {
    return <Callout compact icon="info-sign" data-testid="window-check-unknown">{WINDOW_CHECK_MESSAGES.unknown(state.range.reason)}</Callout>;
  }
  if (state.range?.known && state.check) {
    return <p className="bp6-text-muted" data-testid="window-check-fits">{WINDOW_CHECK_MESSAGES.fits(state.range.firstMs, state.range.lastMs)}</p>;
  }
  return null;
}

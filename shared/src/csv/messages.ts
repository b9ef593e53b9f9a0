/**
 * Every CSV message and constant, shared by the console (preview, toasts)
 * and the ingest-worker (upload errors), so both say exactly the same thing.
 */

/** CSV limits and constants; the byte and row limits are settings (CSV_MAX_BYTES, CSV_MAX_ROWS). */
export const CSV_LIMITS = {
  /** The old 5 MB / 100,000-row limits existed because the old console parsed in the browser. */
  defaultMaxBytes: 2 * 1024 * 1024 * 1024,
  defaultMaxRows: 50_000_000,
  uploadsPerMinute: 5,
  headerMaxLength: 100,
  /** Columns a header may have: the reader's work per row is bounded by it (limits.ts). */
  defaultMaxColumns: 10_000,
  /** Bytes one line, or one quoted field running over lines, may have (limits.ts). */
  defaultMaxLineBytes: 1024 * 1024,
  dateDetectionSampleSize: 20,
  /** Below this confidence (0..1) the user is told to check the detected date format. */
  dateConfidenceThreshold: 0.7,
  serialDateMinYear: 1900,
  serialDateMaxYear: 2100,
  maxBadValuesPerColumn: 5,
  previewRows: 10,
  previewCellChars: 10,
  editPreviewTimePoints: 20,
  editPreviewFetchLimit: 100,
} as const;

/** Below this date-format confidence (70 %) the user gets a notice. */
export const DATE_CONFIDENCE_THRESHOLD = CSV_LIMITS.dateConfidenceThreshold;

export const CSV_MESSAGES = {
  // File checks.
  invalidExtension: 'File must be a text export named .csv, .txt, .tsv or .asc, or an Excel workbook (.xlsx)',
  headerWithoutRows: 'The file has a header but no data rows',
  invalidType: 'Invalid file type. Please select a CSV file.',
  fileEmpty: 'File is empty',
  // Content checks.
  contentEmpty: 'File content is empty',
  headerRequired: 'CSV file must contain a header row',
  maliciousContent: 'File contains potentially malicious content',
  uploadRateLimited: 'Too many upload attempts. Please wait before trying again. (Max 5 uploads per minute)',
  // Unit operation submit.
  requiredFields: 'Please fill in all required fields.',
  timestampColumnRequired:
    'Please select a timestamp column from your CSV data. This is required to create the unit operation.',
  noInstrumentColumns: 'No instrument columns selected. Please select at least one instrument column.',
  noValidData:
    'No valid data found in CSV within the specified time range. Please check your data format and time range.',
  // Failure texts of the dialog.
  parseFailed: 'Failed to parse CSV file. Please check the format and ensure it contains valid CSV data.',
  uploadFailedFallback: 'Failed to upload CSV file. You can try uploading it manually.',
  completeInstrumentSetupFirst: 'Complete Instrument Setup First',
  wizardCancelled: 'Wizard cancelled by user',
} as const;

/** Toast titles for the unit-operation dialog's CSV flow. */
export const CSV_TOAST_TITLES = {
  validationError: 'Validation Error',
  csvValidationError: 'CSV Validation Error',
  invalidFile: 'Invalid file',
  invalidContent: 'Invalid CSV content',
  parseError: 'CSV Parse Error',
  rateLimited: 'Upload rate limit exceeded',
  instrumentCreateFailed: 'Failed to Create Instrument',
  uploadFailed: 'CSV Upload Failed',
  uploadSucceeded: 'CSV Upload Success',
  instrumentCreated: 'Instrument Created',
} as const;

const BYTE_UNITS = ['B', 'KB', 'MB', 'GB', 'TB'] as const;

/** 5242880 -> '5MB', 2147483648 -> '2GB', 1572864 -> '1.5MB' (binary multiples, as in the old 5MB limit). */
export function formatByteSize(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < BYTE_UNITS.length - 1) {
    value /= 1024;
    unit += 1;
  }
  const rounded = Math.round(value * 10) / 10;
  return `${Number.isInteger(rounded) ? rounded.toFixed(0) : rounded.toFixed(1)}${BYTE_UNITS[unit]}`;
}

/** 'File size must be less than 2GB' for the configured CSV_MAX_BYTES. */
export function fileTooLargeMessage(maxBytes: number): string {
  return `File size must be less than ${formatByteSize(maxBytes)}`;
}

/** The row limit message with the configured CSV_MAX_ROWS, e.g. 'File must not have more than 50,000,000 rows'. */
export function tooManyRowsMessage(maxRows: number): string {
  return `File must not have more than ${maxRows.toLocaleString('en-US')} rows`;
}

export function missingInstrumentsMessage(columns: readonly string[]): string {
  return `Cannot upload CSV: Please create instruments for these columns first: ${columns.join(', ')}`;
}

/** One column's part of the non-numeric listing (up to 5 distinct bad values and 'and N more'). */
export function nonNumericColumnMessage(column: string, badValues: readonly string[], moreCount: number): string {
  const listed = badValues.map((value) => (value.length > 50 ? `${value.slice(0, 50)}...` : value)).join(', ');
  return `Column '${column}' has non-numeric values: ${listed}${moreCount > 0 ? ` and ${moreCount} more` : ''}`;
}

/** The whole upload error: one sentence per column, joined with '; '. */
export function nonNumericValuesMessage(
  columns: readonly { column: string; badValues: readonly string[]; moreCount: number }[],
): string {
  return columns.map((entry) => nonNumericColumnMessage(entry.column, entry.badValues, entry.moreCount)).join('; ');
}

/** The notice shown when the detected date format's confidence is below the threshold. */
export function lowDateConfidenceMessage(confidence: number): string {
  return `Date format detected with low confidence (${Math.round(confidence * 100)}%). Please check that the timestamps are read correctly.`;
}

/**
 * The 'CSV Upload Success' toast text: what the upload wrote, and "replaced" only when it replaced the
 * instruments' readings in the unit operation's window (replace_existing); an upload without it adds.
 */
export function uploadSuccessMessage(instrumentCount: number, pointCount: number, replaced = false): string {
  const points = `${pointCount.toLocaleString('en-US')} points`;
  const instruments = `${instrumentCount.toLocaleString('en-US')} instrument${instrumentCount === 1 ? '' : 's'}`;
  return replaced
    ? `Replaced the readings of ${instruments} in the unit operation's window with ${points}; aliases saved.`
    : `Wrote ${points} to ${instruments}; aliases saved.`;
}

/** 'Failed to create unit operation.' / 'Failed to update unit operation.' */
export function unitOperationSaveFailedMessage(action: 'create' | 'update'): string {
  return `Failed to ${action} unit operation.`;
}

/** Rows an upload left out, by reason. */
export interface SkippedRowCounts {
  /** The timestamp cell is empty or does not read as the detected format. */
  badTimestamp: number;
  /** The timestamp lies outside the unit operation's window (or outside 1900-2200). */
  outsideWindow: number;
  /** The row has a timestamp but no value in any mapped column. */
  empty: number;
  /** Long format: the row's key was not picked for an instrument. */
  unselectedKey?: number;
  /** A row filter of the upload left the row out (a calibrator, a control, a blank). */
  filtered?: number;
}

export function totalSkippedRows(counts: SkippedRowCounts): number {
  return counts.badTimestamp + counts.outsideWindow + counts.empty + (counts.unselectedKey ?? 0) + (counts.filtered ?? 0);
}

/**
 * '239 rows skipped: 200 without a value in the mapped columns, 39 outside the unit operation's time
 * window.' (null when nothing was skipped), so a count never comes without its reason.
 */
export function skippedRowsMessage(counts: SkippedRowCounts): string | null {
  const total = totalSkippedRows(counts);
  if (total === 0) return null;
  const number = (value: number) => value.toLocaleString('en-US');
  const reasons = [
    counts.empty > 0 ? `${number(counts.empty)} without a value in the mapped columns` : null,
    counts.outsideWindow > 0 ? `${number(counts.outsideWindow)} outside the unit operation's time window` : null,
    counts.badTimestamp > 0 ? `${number(counts.badTimestamp)} with an empty or unreadable timestamp` : null,
    (counts.unselectedKey ?? 0) > 0 ? `${number(counts.unselectedKey!)} of keys not mapped to an instrument` : null,
    (counts.filtered ?? 0) > 0 ? `${number(counts.filtered!)} left out by the row filters` : null,
  ].filter((reason): reason is string => reason !== null);
  return `${number(total)} row${total === 1 ? '' : 's'} skipped: ${reasons.join(', ')}.`;
}

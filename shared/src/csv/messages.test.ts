import { describe, expect, it } from 'vitest';
import {
  CSV_LIMITS,
  CSV_MESSAGES,
  CSV_TOAST_TITLES,
  DATE_CONFIDENCE_THRESHOLD,
  fileTooLargeMessage,
  formatByteSize,
  lowDateConfidenceMessage,
  missingInstrumentsMessage,
  nonNumericColumnMessage,
  nonNumericValuesMessage,
  tooManyRowsMessage,
  unitOperationSaveFailedMessage,
  uploadSuccessMessage,
} from './messages.ts';

describe('CSV messages', () => {
  it('states the user-facing texts exactly', () => {
    expect(CSV_MESSAGES).toMatchObject({
      invalidExtension: 'File must be a text export named .csv, .txt, .tsv or .asc, or an Excel workbook (.xlsx)',
      headerWithoutRows: 'The file has a header but no data rows',
      invalidType: 'Invalid file type. Please select a CSV file.',
      fileEmpty: 'File is empty',
      contentEmpty: 'File content is empty',
      maliciousContent: 'File contains potentially malicious content',
      uploadRateLimited: 'Too many upload attempts. Please wait before trying again. (Max 5 uploads per minute)',
      requiredFields: 'Please fill in all required fields.',
      timestampColumnRequired:
        'Please select a timestamp column from your CSV data. This is required to create the unit operation.',
      noInstrumentColumns: 'No instrument columns selected. Please select at least one instrument column.',
      noValidData:
        'No valid data found in CSV within the specified time range. Please check your data format and time range.',
      parseFailed: 'Failed to parse CSV file. Please check the format and ensure it contains valid CSV data.',
      uploadFailedFallback: 'Failed to upload CSV file. You can try uploading it manually.',
      completeInstrumentSetupFirst: 'Complete Instrument Setup First',
      wizardCancelled: 'Wizard cancelled by user',
    });
    expect(CSV_TOAST_TITLES).toMatchObject({
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
    });
    expect(missingInstrumentsMessage(['pH', 'DO'])).toBe(
      'Cannot upload CSV: Please create instruments for these columns first: pH, DO',
    );
    expect(unitOperationSaveFailedMessage('create')).toBe('Failed to create unit operation.');
    expect(unitOperationSaveFailedMessage('update')).toBe('Failed to update unit operation.');
  });

  it('formats the configured size and row limits', () => {
    expect(fileTooLargeMessage(5 * 1024 * 1024)).toBe('File size must be less than 5MB');
    expect(fileTooLargeMessage(CSV_LIMITS.defaultMaxBytes)).toBe('File size must be less than 2GB');
    expect(formatByteSize(1536 * 1024)).toBe('1.5MB');
    expect(formatByteSize(512)).toBe('512B');
    expect(tooManyRowsMessage(100_000)).toBe('File must not have more than 100,000 rows');
    expect(tooManyRowsMessage(CSV_LIMITS.defaultMaxRows)).toBe('File must not have more than 50,000,000 rows');
  });

  it('lists non-numeric values per column with the remainder count', () => {
    expect(nonNumericColumnMessage('pH', ['a', 'b', 'c', 'd', 'e'], 3)).toBe(
      "Column 'pH' has non-numeric values: a, b, c, d, e and 3 more",
    );
    expect(
      nonNumericValuesMessage([
        { column: 'pH', badValues: ['x'], moreCount: 0 },
        { column: 'DO', badValues: ['n/a', '-'], moreCount: 0 },
      ]),
    ).toBe("Column 'pH' has non-numeric values: x; Column 'DO' has non-numeric values: n/a, -");
  });

  it('has the CSV limits and constants the product promises', () => {
    expect(DATE_CONFIDENCE_THRESHOLD).toBe(0.7);
    expect(CSV_LIMITS).toMatchObject({
      uploadsPerMinute: 5,
      headerMaxLength: 100,
      dateDetectionSampleSize: 20,
      serialDateMinYear: 1900,
      serialDateMaxYear: 2100,
      previewRows: 10,
      previewCellChars: 10,
      editPreviewTimePoints: 20,
      editPreviewFetchLimit: 100,
      defaultMaxRows: 50_000_000,
    });
    expect(lowDateConfidenceMessage(0.6)).toBe(
      'Date format detected with low confidence (60%). Please check that the timestamps are read correctly.',
    );
    expect(uploadSuccessMessage(1, 10944)).toBe('Wrote 10,944 points to 1 instrument; aliases saved.');
    expect(uploadSuccessMessage(2, 12345, true)).toBe("Replaced the readings of 2 instruments in the unit operation's window with 12,345 points; aliases saved.");
  });
});

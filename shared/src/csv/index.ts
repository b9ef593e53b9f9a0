/**
 * The shared CSV rules, one module per job; import from '@bioprocess/shared/csv/index'
 * or from the module itself. Browser-safe: no Node imports.
 *
 * Console preview: checkCsvFile -> decodeCsvBytes(first bytes, { partial }) -> checkCsvContent ->
 * parseCsvPreview(text, { partial, maxRows: 20 }) -> detectTimestampFormat(column values) (its
 * `elapsed` suggests elapsed time; isLowConfidence/lowDateConfidenceMessage for the notice).
 *
 * Worker: CsvStreamReader (decode, malicious scan, delimiter, multi-section data table, header,
 * width, row limit; throws CsvContentError with the fixed message), or the parts it is built from
 * (CsvTextDecoder, MaliciousContentScanner, detectDelimiter, CsvRowParser, DataSectionFilter), then
 * createTimestampParser / elapsedToEpochMs per row and parseNumericCell + NonNumericCollector per cell.
 */
export * from './messages.ts';
export * from './limits.ts';
export * from './file-checks.ts';
export * from './malicious-content.ts';
export * from './headers.ts';
export * from './encoding.ts';
export * from './row-parser.ts';
export * from './row-shape.ts';
export * from './delimiter.ts';
export * from './sections.ts';
export * from './numeric.ts';
export * from './numeric-validation.ts';
export * from './flagged-cells.ts';
export * from './timestamps.ts';
export * from './time-zones.ts';
export * from './export-shapes.ts';
export * from './long-format.ts';
export * from './row-filters.ts';
export * from './headerless.ts';
export * from './preview.ts';
export * from './stream-reader.ts';
export * from './binary-sniff.ts';
export * from './layout-lines.ts';
export * from './preamble.ts';
export * from './table-cutter.ts';
export * from './detect.ts';
export * from './turn-table.ts';
export * from './plate-grid.ts';

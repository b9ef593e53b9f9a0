/** The shared CSV rules (spec/02 §5), one module per job; import from '@bioprocess/shared/csv/index'. */
export * from './messages.ts';
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
export * from './timestamps.ts';
export * from './preview.ts';
export * from './stream-reader.ts';

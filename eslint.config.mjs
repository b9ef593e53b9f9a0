import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', '.data/**', 'test-results/**', 'playwright-report/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'error',
    },
  },
  {
    // The ingest-worker is the one writer of points and rollups: the api records, delivers and reads.
    files: ['api/src/**'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [{
          group: ['@bioprocess/ingest-worker', '@bioprocess/ingest-worker/*', '**/ingest-worker/**'],
          message: 'The ingest-worker alone writes points and rollups; the api records the request and delivers it (docs/ingest.md).',
        }],
      }],
    },
  },
);

// Entry of the CSV staging thread. Built, tsc copies this file into dist/ beside the compiled entry
// and rewrites the import below to ./staging-thread.js: plain node loads it. From the sources
// (development, vitest) the entry is TypeScript, and a worker thread does not inherit the TypeScript
// loader of the process that starts it (nor vitest's), so it registers tsx first; tsx is a
// development dependency, imported on that path only.
import { existsSync } from 'node:fs';

if (existsSync(new URL('./staging-thread.ts', import.meta.url))) (await import('tsx/esm/api')).register();
await import('./staging-thread.ts');

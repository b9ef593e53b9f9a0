// Entry of the bulk-parsing threads (Piscina). Built, tsc copies this file into dist/ beside the
// compiled task and rewrites the import below to ./bulk-thread.js: plain node loads it. From the
// sources (development, vitest) the task is TypeScript, and a worker thread does not inherit the
// TypeScript loader of the process that starts it (nor vitest's), so it registers tsx first; tsx is
// a development dependency, imported on that path only.
import { existsSync } from 'node:fs';

if (existsSync(new URL('./bulk-thread.ts', import.meta.url))) (await import('tsx/esm/api')).register();
const task = await import('./bulk-thread.ts');

export default task.default;

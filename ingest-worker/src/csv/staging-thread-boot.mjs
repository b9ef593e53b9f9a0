// Entry of the CSV staging thread. A worker thread does not inherit the TypeScript loader of the
// process that starts it (nor vitest's), so it registers tsx before loading the TypeScript entry.
import { register } from 'tsx/esm/api';

register();
await import('./staging-thread.ts');

// Entry of the thread that stores the rollups of the api's own bulk writes (owed-rollups-thread.ts). A
// worker thread does not inherit the TypeScript loader of the process that starts it (nor vitest's), so
// it registers tsx before loading the TypeScript.
import { register } from 'tsx/esm/api';

register();
await import('./rollup-thread.ts');

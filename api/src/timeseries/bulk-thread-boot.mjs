// Entry of the bulk-parsing threads (Piscina). A worker thread does not inherit the TypeScript loader
// of the process that starts it (nor vitest's), so it registers tsx before loading the TypeScript task.
import { register } from 'tsx/esm/api';

register();
const task = await import('./bulk-thread.ts');

export default task.default;

/** `npm run migrate`: applies the PostgreSQL and ClickHouse migrations (a no-op when up to date). */
import { ensureDependencies } from './deps.mjs';
import { ensureServices } from './services.mjs';
import { runMigrations } from './stack.mjs';

ensureDependencies();
const services = await ensureServices();
runMigrations({ ...process.env, ...services });

/** Idempotent tasks run once when the api starts, after migrations and before listening. */
import type { AppDeps } from './platform/deps.ts';
import { ensureSuperuser } from './auth/superuser-bootstrap.ts';

export async function runStartupTasks(deps: AppDeps): Promise<void> {
  await ensureSuperuser(deps);
}

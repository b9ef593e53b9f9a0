/** Idempotent tasks run once when the api starts, after migrations and before listening. */
import type { AppDeps } from './platform/deps.ts';

export async function runStartupTasks(deps: AppDeps): Promise<void> {
  void deps;
}

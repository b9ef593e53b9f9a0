/** Idempotent tasks run once when the api starts, after migrations and before listening. */
import type { AppDeps } from './platform/deps.ts';
import { ensureSuperuser, isLoopbackHost, PublishedPasswordError, WELL_KNOWN_PASSWORDS } from './auth/superuser-bootstrap.ts';

export async function runStartupTasks(deps: AppDeps): Promise<void> {
  const { env } = deps;
  if (env.SEED_DEMO && !isLoopbackHost(env.HOST) && WELL_KNOWN_PASSWORDS.includes(env.DEMO_PASSWORD)) {
    // The demo accounts would be an admin account anyone who read the README can sign in to.
    throw new PublishedPasswordError(
      `SEED_DEMO with the published DEMO_PASSWORD while HOST=${env.HOST} accepts connections from other machines: set DEMO_PASSWORD or listen on 127.0.0.1`,
    );
  }
  await ensureSuperuser(deps);
}

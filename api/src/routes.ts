/** Every feature router of the api, registered in one place. */
import type { App } from './platform/app-type.ts';
import type { AppDeps } from './platform/deps.ts';
import { healthRoutes } from './health/routes.ts';
import { identityRoutes } from './auth/identity-routes.ts';
import { timeSeriesRoutes } from './timeseries/routes.ts';
import { ingestJobRoutes } from './ingest-jobs/routes.ts';

export async function registerFeatureRoutes(app: App, deps: AppDeps): Promise<void> {
  await app.register(healthRoutes, deps);
  await app.register(identityRoutes, deps);
  await app.register(timeSeriesRoutes, deps);
  await app.register(ingestJobRoutes, deps);
}

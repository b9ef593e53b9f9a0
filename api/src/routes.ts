/** Every feature router of the api, registered in one place. */
import type { App } from './platform/app-type.ts';
import type { AppDeps } from './platform/deps.ts';
import { healthRoutes } from './health/routes.ts';
import { facilityRoutes } from './facilities/routes.ts';
import { equipmentRoutes } from './equipment/routes.ts';
import { instrumentRoutes } from './instruments/routes.ts';
import { instrumentCatalogueRoutes } from './instrument-catalogue/routes.ts';
import { runRoutes } from './runs/routes.ts';
import { unitOperationRoutes } from './unit-operations/routes.ts';
import { commentRoutes } from './comments/routes.ts';
import { sampleRoutes } from './samples/routes.ts';
import { identityRoutes } from './auth/identity-routes.ts';
import { timeSeriesRoutes } from './timeseries/routes.ts';
import { ingestJobRoutes } from './ingest-jobs/routes.ts';
import { derivedParameterRoutes } from './derived/routes.ts';
import { exportRoutes } from './exports/routes.ts';
import { sampleExportRoutes } from './exports/sample-routes.ts';
import { exportJobRoutes } from './exports/job-routes.ts';
import { analysisRoutes } from './analysis/routes.ts';
import { alignmentRoutes } from './analysis/alignment-routes.ts';
import { goldenBatchRoutes } from './golden-batches/routes.ts';

export async function registerFeatureRoutes(app: App, deps: AppDeps): Promise<void> {
  await app.register(healthRoutes, deps);
  await app.register(facilityRoutes, deps);
  await app.register(equipmentRoutes, deps);
  await app.register(instrumentRoutes, deps);
  await app.register(instrumentCatalogueRoutes, deps);
  await app.register(runRoutes, deps);
  await app.register(unitOperationRoutes, deps);
  await app.register(commentRoutes, deps);
  await app.register(sampleRoutes, deps);
  await app.register(identityRoutes, deps);
  await app.register(timeSeriesRoutes, deps);
  await app.register(ingestJobRoutes, deps);
  await app.register(derivedParameterRoutes, deps);
  await app.register(exportRoutes, deps);
  await app.register(sampleExportRoutes, deps);
  await app.register(exportJobRoutes, deps);
  await app.register(analysisRoutes, deps);
  await app.register(alignmentRoutes, deps);
  await app.register(goldenBatchRoutes, deps);
}

/** The identity feature's routers: accounts, users, invitations, organisations, API keys, audit log and the dev outbox. */
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { authRoutes } from './routes.ts';
import { userRoutes } from '../users/routes.ts';
import { invitationRoutes } from '../users/invitation-routes.ts';
import { invitationAcceptanceRoutes } from './invitation-acceptance-routes.ts';
import { organizationRoutes } from '../organizations/routes.ts';
import { organizationSettingsRoutes } from '../organizations/settings.ts';
import { apiKeyRoutes } from '../api-keys/routes.ts';
import { auditRoutes } from '../audit/routes.ts';
import { devOutboxRoutes } from '../mail/dev-outbox-routes.ts';

export async function identityRoutes(app: App, deps: AppDeps): Promise<void> {
  await app.register(authRoutes, deps);
  await app.register(userRoutes, deps);
  await app.register(invitationRoutes, deps);
  await app.register(invitationAcceptanceRoutes, deps);
  await app.register(organizationRoutes, deps);
  await app.register(organizationSettingsRoutes, deps);
  await app.register(apiKeyRoutes, deps);
  await app.register(auditRoutes, deps);
  await app.register(devOutboxRoutes, deps);
}

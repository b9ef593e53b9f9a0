import { isIP } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { can } from '@bioprocess/shared/permissions';
import type { Role } from '@bioprocess/shared/enums';
import { AUTH_MESSAGES } from '@bioprocess/shared/errors';
import type { AppDeps } from '../platform/deps.ts';
import { HttpError } from '../platform/http-error.ts';
import { badTokenCounter, tooManyRequestsMessage } from '../platform/address-limits.ts';
import { createApiKeyLookups, type ApiKeyLookups } from './api-key-lookups.ts';
import { API_KEY_PREFIX, hashToken, type RequestPrincipal, type RouteAccess } from './principal.ts';
import { DEFAULT_SESSION_POLICY, REVIEW_MESSAGES as SESSION_MESSAGES } from '@bioprocess/shared/run-review';
import { revokeSession, SESSION_TOUCH_SECONDS, touchSession } from './sessions.ts';

function bearerToken(request: FastifyRequest): string | null {
  const header = request.headers.authorization;
  if (!header) return null;
  const match = /^Bearer\s+(\S+)$/i.exec(header);
  return match ? match[1]! : null;
}

export const API_KEY_NOT_ALLOWED_MESSAGE = 'API keys are for instrument feeds: this call needs a signed-in user';

/**
 * What an API key may never do, whatever its role: manage keys, users and organisations, or read the
 * audit log. A leaked feed key must not be a way into the organisation's administration.
 */
const PEOPLE_ONLY_PERMISSIONS: ReadonlySet<RouteAccess> = new Set<RouteAccess>(['manage_users', 'view_audit_logs', 'superuser']);

/** A session unused for longer than its organisation's inactivity limit: ended now, and refused with its own message. */
const INACTIVE = Symbol('inactive session');

async function resolvePrincipal(deps: AppDeps, apiKeys: ApiKeyLookups, token: string, request: FastifyRequest): Promise<RequestPrincipal | typeof INACTIVE | null> {
  const tokenHash = hashToken(token);
  if (token.startsWith(API_KEY_PREFIX)) {
    const key = await apiKeys.find(tokenHash);
    if (!key) return null;
    return {
      kind: 'api_key', userId: null, sessionId: null, apiKeyId: key.id, email: null,
      name: `API key ${key.name}`, organizationId: key.organization_id, roles: [key.role as Role], superuser: false,
    };
  }
  const { rows } = await deps.pg.query(
    `SELECT s.id AS session_id, u.id, u.email, u.name, u.organization_id, u.role, u.superuser,
            s.last_used_at < now() - make_interval(mins => coalesce(p.inactivity_minutes, $2)) AS inactive,
            (s.last_used_at < now() - make_interval(secs => $3) OR s.user_agent IS NULL) AS stale
       FROM sessions s JOIN users u ON u.id = s.user_id LEFT JOIN session_policies p ON p.organization_id = u.organization_id
      WHERE s.token_hash = $1 AND s.revoked_at IS NULL AND s.expires_at > now()`,
    [tokenHash, DEFAULT_SESSION_POLICY.inactivity_minutes, SESSION_TOUCH_SECONDS],
  );
  const user = rows[0];
  if (!user) return null;
  if (user.inactive) {
    await revokeSession(deps.pg, user.session_id);
    return INACTIVE;
  }
  if (user.stale) await touchSession(deps.pg, user.session_id, request.headers['user-agent'] ?? null, isIP(request.ip) !== 0 ? request.ip : null);
  return {
    kind: 'session', userId: user.id, sessionId: user.session_id, apiKeyId: null, email: user.email,
    name: user.name, organizationId: user.organization_id, roles: [user.role as Role], superuser: user.superuser,
  };
}

/** One registered /api/v1 route and the access it declared (the access-matrix test walks these). */
export interface DeclaredRoute {
  method: string;
  url: string;
  access: RouteAccess;
}

declare module 'fastify' {
  interface FastifyInstance {
    declaredRoutes: DeclaredRoute[];
  }
}

/** Every /api/v1 route registered after the authentication plugin, with its declared access. */
export function listDeclaredRoutes(app: FastifyInstance): DeclaredRoute[] {
  return [...app.declaredRoutes];
}

/**
 * Resolves the principal for every request and enforces the access each route declares in
 * `config.access`. A route under /api/v1 without a declaration fails at start-up, so no route can be
 * added without deciding who may call it. The check runs in onRequest, before the body is parsed and
 * validated, so an unauthenticated or unauthorised caller learns nothing from validation answers.
 */
export const authenticationPlugin = fp(async (app: FastifyInstance, deps: AppDeps) => {
  app.decorateRequest('principal', null);
  const declaredRoutes: DeclaredRoute[] = [];
  app.decorate('declaredRoutes', declaredRoutes);

  app.addHook('onRoute', (route) => {
    if (!route.url.startsWith('/api/v1')) return;
    const access = route.config?.access;
    if (!access) throw new Error(`Route ${route.method} ${route.url} declares no access (config.access)`);
    for (const method of [route.method].flat()) declaredRoutes.push({ method, url: route.url, access });
  });

  const countBadToken = badTokenCounter(app, deps.env);
  const apiKeys = createApiKeyLookups(deps.pg, deps.accessCaches.apiKeys);

  app.addHook('onRequest', async (request, reply) => {
    const token = bearerToken(request);
    if (token) {
      const resolved = await resolvePrincipal(deps, apiKeys, token, request);
      if (resolved === INACTIVE) {
        // Not a bad token: the session was real and ended for inactivity, and the client says so.
        if (request.routeOptions.config?.access !== 'public') throw new HttpError(401, SESSION_MESSAGES.sessionInactive);
        request.principal = null;
      } else {
        request.principal = resolved;
      }
      if (resolved === null) {
        // Guessing keys or replaying stolen tokens costs the address its budget; valid tokens never do.
        const overBudget = await countBadToken(request);
        if (overBudget) {
          reply.header('retry-after', overBudget.retryAfterSeconds);
          throw new HttpError(429, tooManyRequestsMessage(overBudget.after));
        }
      }
    }
    const access: RouteAccess | undefined = request.routeOptions.config?.access;
    if (!access || access === 'public') return;
    if (!request.principal) throw new HttpError(401, AUTH_MESSAGES.authenticationRequired);
    if (access === 'authenticated') return;
    if (request.principal.kind === 'api_key' && PEOPLE_ONLY_PERMISSIONS.has(access)) throw new HttpError(403, API_KEY_NOT_ALLOWED_MESSAGE);
    if (!can(request.principal, access)) throw new HttpError(403, AUTH_MESSAGES.forbidden);
  });
}, { name: 'authentication' });

/** The principal of a route that declared an access other than `public`. */
export function principalOf(request: FastifyRequest): RequestPrincipal {
  if (!request.principal) throw new HttpError(401, AUTH_MESSAGES.authenticationRequired);
  return request.principal;
}

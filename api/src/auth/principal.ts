/**
 * Who is calling: resolved from the bearer token (a session token or an organisation API key) on
 * every request, and the permission each route declares.
 */
import { createHash } from 'node:crypto';
import type { Permission } from '@bioprocess/shared/permissions';
import type { Role } from '@bioprocess/shared/enums';

export interface RequestPrincipal {
  kind: 'session' | 'api_key';
  userId: number | null;
  sessionId: number | null;
  apiKeyId: number | null;
  email: string | null;
  name: string;
  /** The organisation every query of this request is scoped to. */
  organizationId: number;
  roles: Role[];
  superuser: boolean;
}

/** `public`: no token needed; `authenticated`: any valid token; otherwise a role-derived permission. */
export type RouteAccess = Permission | 'public' | 'authenticated';

declare module 'fastify' {
  interface FastifyRequest {
    principal: RequestPrincipal | null;
  }
  interface FastifyContextConfig {
    access?: RouteAccess;
  }
}

export const SESSION_TOKEN_PREFIX = 'bps_';
export const API_KEY_PREFIX = 'bpk_';

/** Tokens carry 256 bits of randomness, so a fast hash is enough to keep them unreadable at rest. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

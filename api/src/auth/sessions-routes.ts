/**
 * A user's own sessions: listed with the browser, address, sign-in and last use, and ended one by one
 * or all but the current one. Each ending is audited.
 */
import { z } from 'zod';
import { errorResponseSchema, idParamsSchema } from '@bioprocess/shared/entities';
import { userSessionSchema } from '@bioprocess/shared/run-review';
import { withTransaction } from '@bioprocess/shared/server/postgres';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { badRequest, notFound } from '../platform/http-error.ts';
import { recordAudit } from '../audit/record.ts';
import { principalOf } from './authenticate.ts';
import { listUserSessions, revokeOtherSessions, revokeUserSession } from './sessions.ts';

export const SESSION_NOT_FOUND = 'Session not found';
const API_KEY_HAS_NO_SESSIONS = 'API keys have no sessions: sign in to manage your sessions';

export async function sessionRoutes(app: App, deps: AppDeps): Promise<void> {
  const tags = ['auth'];
  const sessionOf = (request: Parameters<typeof principalOf>[0]) => {
    const principal = principalOf(request);
    if (principal.kind !== 'session' || principal.userId === null || principal.sessionId === null) throw badRequest(API_KEY_HAS_NO_SESSIONS);
    return { userId: principal.userId, sessionId: principal.sessionId };
  };

  app.get('/api/v1/auth/sessions', {
    config: { access: 'authenticated' },
    schema: {
      tags, summary: 'Your signed-in sessions',
      description: 'Live sessions of the caller, most recently used first: browser (user agent), the address last used from, '
        + 'when signed in and last used (to the half minute); `current` marks the calling one.',
      response: { 200: z.array(userSessionSchema), 400: errorResponseSchema },
    },
  }, async (request) => {
    const { userId, sessionId } = sessionOf(request);
    return listUserSessions(deps.pg, userId, sessionId);
  });

  app.delete('/api/v1/auth/sessions/:id', {
    config: { access: 'authenticated' },
    schema: {
      tags, summary: 'End one of your sessions', description: 'Ending the current one signs this client out.',
      params: idParamsSchema, response: { 204: z.null(), 400: errorResponseSchema, 404: errorResponseSchema },
    },
  }, async (request, reply) => {
    const { userId } = sessionOf(request);
    await withTransaction(deps.pg, async (client) => {
      if (!(await revokeUserSession(client, userId, request.params.id))) throw notFound(SESSION_NOT_FOUND);
      await recordAudit(client, request, { event_type: 'auth.session_ended', action: 'revoke', resource_type: 'session', resource_id: request.params.id });
    });
    return reply.status(204).send(null);
  });

  app.post('/api/v1/auth/sessions/end-others', {
    config: { access: 'authenticated' },
    schema: {
      tags, summary: 'End all your sessions but this one',
      response: { 200: z.object({ ended: z.number().int() }), 400: errorResponseSchema },
    },
  }, async (request) => {
    const { userId, sessionId } = sessionOf(request);
    return withTransaction(deps.pg, async (client) => {
      const ended = await revokeOtherSessions(client, userId, sessionId);
      await recordAudit(client, request, {
        event_type: 'auth.sessions_ended', action: 'revoke', resource_type: 'session', resource_id: sessionId, changes: { after: { ended } },
      });
      return { ended };
    });
  });
}

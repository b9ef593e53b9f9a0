/**
 * GET /api/v1/live: the server-sent-event stream of a browser tab's live charts (docs/live.md). The
 * tab names every instrument its open charts draw; when the set changes it reconnects with the new set
 * and Last-Event-ID, so nothing between the two streams is missed. Read with fetch (not EventSource)
 * so the bearer token travels in a header, as the job-event streams are.
 */
import { z } from 'zod';
import { isStreamId } from '@bioprocess/shared/server/points-stored';
import { LIVE_MESSAGES, liveQuerySchema } from '@bioprocess/shared/live';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { principalOf } from '../auth/authenticate.ts';
import { badRequest, notFound } from '../platform/http-error.ts';
import { ownedInstrumentIds } from '../timeseries/instruments.ts';
import { liveHubOf } from './live-hub-of.ts';

const headers = z.object({
  'last-event-id': z.string().max(100).optional().describe('The id of the last event received: the stream first sends the events missed since'),
});

export async function liveRoutes(app: App, deps: AppDeps): Promise<void> {
  const hub = liveHubOf(deps);
  // Streams are ended before the server waits for its connections to close.
  app.addHook('preClose', async () => { await hub.close(); });

  app.get('/api/v1/live', {
    config: { access: 'read' },
    schema: {
      summary: 'Server-sent events of points stored for the named instruments (event: ready, points, deletion, reset, position, end)',
      querystring: liveQuerySchema,
      headers,
    },
  }, async (request, reply) => {
    const principal = principalOf(request);
    const instrumentIds = request.query.instrument_ids;
    if (instrumentIds.length === 0) throw badRequest('instrument_ids: name at least one instrument');
    if (instrumentIds.length > deps.env.LIVE_INSTRUMENTS_PER_CONNECTION) throw badRequest(LIVE_MESSAGES.tooManyInstruments(deps.env.LIVE_INSTRUMENTS_PER_CONNECTION));
    const lastEventId = request.headers['last-event-id']?.trim() || null;
    if (lastEventId !== null && !isStreamId(lastEventId)) throw badRequest(LIVE_MESSAGES.badLastEventId);
    const owned = await ownedInstrumentIds(deps.pg, principal.organizationId, instrumentIds);
    const missing = instrumentIds.filter((id) => !owned.has(id));
    if (missing.length > 0) throw notFound(LIVE_MESSAGES.instrumentsNotFound(missing));
    // Refusals (budget, Redis away) are answered as JSON before the response becomes a stream.
    const stream = await hub.open(principal.organizationId, instrumentIds, lastEventId);
    reply.hijack();
    stream.start(reply.raw);
  });
}

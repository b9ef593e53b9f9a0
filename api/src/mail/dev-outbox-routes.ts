/**
 * GET /api/v1/dev/outbox?email=: the dev outbox for local use and end-to-end tests. It holds live
 * reset and invitation links, so it exists only when DEV_OUTBOX is switched on without an SMTP server
 * (the configuration refuses DEV_OUTBOX under NODE_ENV=production) and only a superuser may read it.
 */
import { z } from 'zod';
import { devOutboxMessageSchema } from '@bioprocess/shared/auth-contracts';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { usesDevOutbox } from './mailer.ts';

export function devOutboxEnabled(env: AppDeps['env']): boolean {
  return usesDevOutbox(env) && env.NODE_ENV !== 'production';
}

export async function devOutboxRoutes(app: App, deps: AppDeps): Promise<void> {
  if (!devOutboxEnabled(deps.env)) return;
  app.get('/api/v1/dev/outbox', {
    config: { access: 'superuser' },
    schema: {
      hide: true,
      querystring: z.object({
        email: z.string().trim().max(254).optional(),
        limit: z.coerce.number().int().min(1).max(200).default(20),
      }),
      response: { 200: z.array(devOutboxMessageSchema) },
    },
  }, async (request) => {
    const { email, limit } = request.query;
    const { rows } = await deps.pg.query(
      `SELECT id, "to", subject, body, link, created_at FROM dev_outbox
        WHERE ($1::text IS NULL OR lower("to") = lower($1))
        ORDER BY id DESC LIMIT $2`,
      [email ?? null, limit],
    );
    return rows.map((row) => ({ ...row, created_at: (row.created_at as Date).toISOString() }));
  });
}

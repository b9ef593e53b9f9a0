/**
 * Test support: the newest dev-outbox link sent to an address, read through the dev endpoint as a
 * superuser (the only one who may read it). The context must run with DEV_OUTBOX=true.
 */
import type { TestContext } from '../support/test-context.ts';

const outboxReaders = new WeakMap<TestContext, Promise<string>>();

/** A superuser session of the context's own, made once per context. */
export function outboxReaderToken(ctx: TestContext): Promise<string> {
  let token = outboxReaders.get(ctx);
  if (!token) {
    token = ctx.createOrganization('Outbox readers')
      .then((organizationId) => ctx.createUser({ organizationId, role: 'admin', superuser: true }))
      .then((user) => user.token);
    outboxReaders.set(ctx, token);
  }
  return token;
}

/** `readerToken`: a superuser session the test already has (else one is made for the context). */
export async function outboxMessages(ctx: TestContext, email: string, readerToken?: string): Promise<{ link: string | null; subject: string; body: string }[]> {
  const response = await ctx.request({ method: 'GET', url: `/api/v1/dev/outbox?email=${encodeURIComponent(email)}`, token: readerToken ?? await outboxReaderToken(ctx) });
  if (response.statusCode !== 200) throw new Error(`outbox answered ${response.statusCode}`);
  return response.json();
}

export async function latestOutboxLink(ctx: TestContext, email: string, readerToken?: string): Promise<{ link: string; token: string; subject: string; body: string }> {
  const [message] = await outboxMessages(ctx, email, readerToken);
  if (!message?.link) throw new Error(`no outbox link for ${email}`);
  const token = new URL(message.link).searchParams.get('token');
  if (!token) throw new Error(`outbox link without token: ${message.link}`);
  return { link: message.link, token, subject: message.subject, body: message.body };
}

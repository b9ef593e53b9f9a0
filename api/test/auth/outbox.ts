/** Test support: the newest dev-outbox link sent to an address, read through the public dev endpoint. */
import type { TestContext } from '../support/test-context.ts';

export async function latestOutboxLink(ctx: TestContext, email: string): Promise<{ link: string; token: string; subject: string; body: string }> {
  const response = await ctx.request({ method: 'GET', url: `/api/v1/dev/outbox?email=${encodeURIComponent(email)}` });
  if (response.statusCode !== 200) throw new Error(`outbox answered ${response.statusCode}`);
  const [message] = response.json() as { link: string | null; subject: string; body: string }[];
  if (!message?.link) throw new Error(`no outbox link for ${email}`);
  const token = new URL(message.link).searchParams.get('token');
  if (!token) throw new Error(`outbox link without token: ${message.link}`);
  return { link: message.link, token, subject: message.subject, body: message.body };
}

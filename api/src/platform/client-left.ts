import type { FastifyReply } from 'fastify';

/** A signal aborted when the client leaves before its answer was sent (a wait for a job then ends). */
export function clientLeftSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  // An answered request has nobody to wake, and an abort makes an error with its stack.
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}

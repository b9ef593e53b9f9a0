/**
 * The ordered shutdown every process of the product makes on SIGINT or SIGTERM: once, whatever
 * signals follow; `close` gets `deadlineMs` to finish its work (active jobs, open requests), after
 * which the process exits anyway with status 1 (what was left is retried or answered again later).
 */
import type { Logger } from 'pino';

export function closeOnSignals(processName: string, logger: Logger, close: () => Promise<void>, deadlineMs: number): void {
  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    logger.info({ signal }, `${processName} shutting down`);
    const deadline = setTimeout(() => {
      logger.error({ deadlineMs }, 'shutdown deadline passed; exiting with work still active');
      process.exit(1);
    }, deadlineMs);
    deadline.unref();
    await close();
    logger.info(`${processName} stopped`);
    process.exit(0);
  };
  process.once('SIGINT', () => void shutdown('SIGINT'));
  process.once('SIGTERM', () => void shutdown('SIGTERM'));
}

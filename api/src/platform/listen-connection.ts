/**
 * A PostgreSQL connection that LISTENs on some channels and is made again, every second, whenever it
 * is lost (PostgreSQL restarting, the backend terminated). Its users hear when notifications start
 * arriving and when they may have been missed, and fall back to reading the database meanwhile.
 */
import pg from 'pg';
import type { Logger } from '@bioprocess/shared/server/logger';

const RECONNECT_MS = 1_000;

export interface ListenHandlers {
  notification(channel: string, payload: string): void;
  /** LISTEN was answered: from now on every notification arrives. */
  listening(): void;
  /** The connection is gone (or could not be made): notifications may have been missed. */
  lost(): void;
}

export interface ListenConnection {
  /** True from LISTEN's answer until the connection is lost. */
  readonly listening: boolean;
  /** Connects unless connected, connecting, or waiting to reconnect. */
  start(): void;
  close(): Promise<void>;
}

/** `what` names the notifications in the log line said once per outage. */
export function listenConnection(
  databaseUrl: string, channels: readonly string[], handlers: ListenHandlers, logger: Logger, what: string, applicationName?: string,
): ListenConnection {
  let client: pg.Client | null = null;
  let listening = false;
  let connecting = false;
  let closed = false;
  let reconnectTimer: NodeJS.Timeout | null = null;

  const drop = (lost: pg.Client, error: unknown) => {
    if (client !== lost) return;
    const wasListening = listening;
    client = null;
    listening = false;
    lost.end().catch(() => undefined);
    handlers.lost();
    if (closed) return;
    // Said once per outage; the retries every RECONNECT_MS are only debug lines.
    if (wasListening) logger.warn({ err: error }, `${what} lost; reading the database until they are back`);
    else logger.debug({ err: error }, `${what} not connected`);
    reconnectTimer ??= setTimeout(() => {
      reconnectTimer = null;
      void connect();
    }, RECONNECT_MS);
    reconnectTimer.unref();
  };

  const connect = async () => {
    if (closed || client || connecting) return;
    connecting = true;
    const next = new pg.Client({ connectionString: databaseUrl, application_name: applicationName });
    client = next;
    next.on('notification', (message) => handlers.notification(message.channel, message.payload ?? ''));
    next.on('error', (error) => drop(next, error));
    next.on('end', () => drop(next, new Error('connection ended')));
    try {
      await next.connect();
      await next.query(channels.map((channel) => `LISTEN ${channel}`).join('; '));
      if (client === next && !closed) {
        listening = true;
        logger.debug(`listening for ${what}`);
        handlers.listening();
      }
    } catch (error) {
      drop(next, error);
    } finally {
      connecting = false;
    }
    if (closed) await next.end().catch(() => undefined);
  };

  return {
    get listening() {
      return listening;
    },
    start: () => {
      if (!client && !closed && !reconnectTimer) void connect();
    },
    close: async () => {
      closed = true;
      if (reconnectTimer) clearTimeout(reconnectTimer);
      const current = client;
      client = null;
      listening = false;
      if (current) await current.end().catch(() => undefined);
    },
  };
}

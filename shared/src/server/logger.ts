/** The one pino logger factory: structured JSON with secrets redacted wherever they may appear. */
import { pino, type Logger } from 'pino';

export const REDACTED_PATHS = [
  'password', '*.password', 'new_password', '*.new_password', 'token', '*.token', 'api_key', '*.api_key',
  'authorization', '*.authorization', 'req.headers.authorization', 'req.headers.cookie',
  'headers.authorization', 'DATABASE_URL', 'REDIS_URL', 'CLICKHOUSE_URL', 'SMTP_URL', 'SUPERUSER_PASSWORD',
  '*.DATABASE_URL', '*.REDIS_URL', '*.CLICKHOUSE_URL', '*.SMTP_URL', '*.SUPERUSER_PASSWORD',
  'connectionString', '*.connectionString',
];

const CREDENTIALS_IN_URL = /(\b[a-z][a-z0-9+.-]*:\/\/)[^/\s:@]*(:[^/\s@]*)?@/gi;

/** Removes user:password from any URL inside a free-text message (error messages from drivers). */
export function scrubCredentials(text: string): string {
  return text.replace(CREDENTIALS_IN_URL, '$1***@');
}

export function createLogger(name: string, level: string = process.env.LOG_LEVEL ?? 'info'): Logger {
  return pino({
    name,
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    formatters: { level: (label) => ({ level: label }) },
    hooks: {
      logMethod(args, method) {
        const scrubbed = args.map((arg) => (typeof arg === 'string' ? scrubCredentials(arg) : arg));
        method.apply(this, scrubbed as Parameters<typeof method>);
      },
    },
    serializers: {
      err: (err: Error) => ({ type: err.name, message: scrubCredentials(err.message), stack: err.stack }),
    },
  });
}

export type { Logger };

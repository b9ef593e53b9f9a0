/** The one pino logger factory: structured JSON with secrets redacted wherever they may appear. */
import { pino, type DestinationStream, type Logger } from 'pino';

export const REDACTED_PATHS = [
  'password', '*.password', 'new_password', '*.new_password', 'current_password', '*.current_password',
  'token', '*.token', 'api_key', '*.api_key', 'secret', '*.secret',
  'authorization', '*.authorization', 'req.headers.authorization', 'req.headers.cookie',
  'headers.authorization', 'headers.cookie', 'DATABASE_URL', 'REDIS_URL', 'CLICKHOUSE_URL', 'SMTP_URL', 'SUPERUSER_PASSWORD',
  '*.DATABASE_URL', '*.REDIS_URL', '*.CLICKHOUSE_URL', '*.SMTP_URL', '*.SUPERUSER_PASSWORD',
  'connectionString', '*.connectionString',
];

// user:password@ after a scheme; stops at quotes so it never spans two JSON strings of a log line.
const CREDENTIALS_IN_URL = /(\b[a-z][a-z0-9+.-]*:\/\/)[^/\s:@"]*(:[^/\s@"]*)?@/gi;
// Session tokens and API keys by their prefixes, and bearer credentials, wherever they are quoted.
const BEARER_CREDENTIAL = /\b(Bearer\s+)[A-Za-z0-9._~+/=-]{16,}/gi;
const PRODUCT_TOKEN = /\bbp[sk]_[A-Za-z0-9_-]{8,}/g;
// Query values that carry a credential (reset and invitation links, keys passed in a URL).
const SECRET_QUERY_VALUE = /([?&](?:token|access_token|refresh_token|api_key|apikey|key|password|secret|code|signature)=)[^&\s"#]*/gi;

/** A URL (or path with a query) with its token-bearing query values replaced by [redacted]. */
export function redactUrl(url: string): string {
  return url.replace(SECRET_QUERY_VALUE, '$1[redacted]');
}

/** Removes user:password from any URL inside a free-text message (error messages from drivers). */
export function scrubCredentials(text: string): string {
  return text.replace(CREDENTIALS_IN_URL, '$1***@');
}

/** Last line of defence on the serialised line: credentials that reached a field no path names. */
function scrubLine(line: string): string {
  return redactUrl(scrubCredentials(line)).replace(BEARER_CREDENTIAL, '$1[redacted]').replace(PRODUCT_TOKEN, '[redacted]');
}

/**
 * `destination` defaults to stdout; tests pass a stream to read what would have been written.
 */
export function createLogger(name: string, level: string = process.env.LOG_LEVEL ?? 'info', destination?: DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    name,
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    formatters: { level: (label) => ({ level: label }) },
    hooks: { streamWrite: scrubLine },
    serializers: {
      // The request line as Fastify logs it, with secrets in the query string redacted.
      req: (req: { method?: string; url?: string; host?: string; hostname?: string; ip?: string; socket?: { remoteAddress?: string } }) => ({
        method: req.method,
        url: req.url === undefined ? undefined : redactUrl(req.url),
        host: req.host ?? req.hostname,
        remoteAddress: req.ip ?? req.socket?.remoteAddress,
      }),
      err: (err: Error) => ({ type: err.name, message: scrubCredentials(err.message), stack: err.stack && scrubCredentials(err.stack) }),
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

export type { Logger };

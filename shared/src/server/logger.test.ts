import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, scrubCredentials } from './logger.ts';

const SECRET = 'S3cret-Value-9f2c';

/** A logger writing into memory; returns the logger and a reader of everything written so far. */
function capture(): { logger: ReturnType<typeof createLogger>; output: () => string } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      chunks.push(chunk.toString('utf8'));
      callback();
    },
  });
  return { logger: createLogger('test', 'trace', stream), output: () => chunks.join('') };
}

type LogLine = Record<string, unknown>;

/** The written JSON lines; exactly `count` of them are expected. */
function lines(text: string, count: number): LogLine[] {
  const parsed = text.trim().split('\n').map((line) => JSON.parse(line) as LogLine);
  expect(parsed).toHaveLength(count);
  return parsed;
}

function only(text: string): LogLine {
  return lines(text, 1)[0] as LogLine;
}

describe('createLogger redaction', () => {
  it('writes structured JSON lines with the level label and the logger name', () => {
    const { logger, output } = capture();
    logger.info({ run_id: 7 }, 'run created');
    expect(lines(output(), 1)).toEqual([expect.objectContaining({ level: 'info', name: 'test', run_id: 7, msg: 'run created' })]);
  });

  it('redacts passwords and tokens at the top level and one level down', () => {
    const { logger, output } = capture();
    logger.info({ password: SECRET, token: SECRET, api_key: SECRET }, 'top level');
    logger.info({ body: { password: SECRET, new_password: SECRET, current_password: SECRET, token: SECRET } }, 'nested');
    const text = output();
    expect(text).not.toContain(SECRET);
    const [top, nested] = lines(text, 2) as [LogLine, LogLine];
    expect(top).toMatchObject({ password: '[redacted]', token: '[redacted]', api_key: '[redacted]' });
    expect(nested.body).toEqual({ password: '[redacted]', new_password: '[redacted]', current_password: '[redacted]', token: '[redacted]' });
  });

  it('redacts authorization headers and cookies of requests', () => {
    const { logger, output } = capture();
    logger.info({ req: { method: 'GET', url: '/api/v1/runs', headers: { authorization: `Bearer bps_${SECRET}`, cookie: `sid=${SECRET}` } } }, 'incoming request');
    logger.info({ headers: { authorization: `Bearer ${SECRET}` } }, 'outgoing call');
    const text = output();
    expect(text).not.toContain(SECRET);
    const [incoming] = lines(text, 2) as [LogLine, LogLine];
    // The request line keeps method and URL; headers are not logged at all.
    expect(incoming.req).toEqual({ method: 'GET', url: '/api/v1/runs' });
  });

  it('redacts token-bearing query values of request URLs and of URLs in messages', () => {
    const { logger, output } = capture();
    logger.info({ req: { method: 'GET', url: `/reset-password?token=${SECRET}&next=1` } }, 'incoming request');
    logger.warn(`link https://app.example.test/reset-password?token=${SECRET} failed; retry ?api_key=${SECRET}`);
    const text = output();
    expect(text).not.toContain(SECRET);
    const [incoming] = lines(text, 2) as [LogLine, LogLine];
    expect(incoming.req).toEqual({ method: 'GET', url: '/reset-password?token=[redacted]&next=1' });
  });

  it('removes credentials from connection strings in configuration fields, messages and errors', () => {
    const { logger, output } = capture();
    logger.info({ DATABASE_URL: `postgres://app:${SECRET}@db:5432/bioprocess`, env: { REDIS_URL: `redis://:${SECRET}@redis:6379` } }, 'configuration');
    logger.warn(`could not connect to postgres://app:${SECRET}@db:5432/bioprocess`);
    logger.error({ err: new Error(`connect failed for http://default:${SECRET}@clickhouse:8123`) }, 'clickhouse unavailable');
    logger.info({ target: `smtp://mailer:${SECRET}@smtp.example.com:587` }, 'a field no redaction path names');
    const text = output();
    expect(text).not.toContain(SECRET);
    const [config, message, failure, other] = lines(text, 4) as [LogLine, LogLine, LogLine, LogLine];
    expect(config).toMatchObject({ DATABASE_URL: '[redacted]', env: { REDIS_URL: '[redacted]' } });
    expect(message.msg).toBe('could not connect to postgres://***@db:5432/bioprocess');
    expect((failure.err as { message: string }).message).toBe('connect failed for http://***@clickhouse:8123');
    expect(other.target).toBe('smtp://***@smtp.example.com:587');
  });

  it('removes session tokens, API keys and bearer credentials from free text', () => {
    const { logger, output } = capture();
    const sessionToken = `bps_${'a'.repeat(43)}`;
    const apiKey = `bpk_${'b'.repeat(43)}`;
    logger.info({ note: `key ${apiKey} used` }, `session ${sessionToken} refreshed; header was Bearer ${'c'.repeat(40)}`);
    const text = output();
    expect(text).not.toContain(sessionToken);
    expect(text).not.toContain(apiKey);
    expect(text).not.toContain('c'.repeat(40));
    const line = only(text);
    expect(line.msg).toBe('session [redacted] refreshed; header was Bearer [redacted]');
    expect(line.note).toBe('key [redacted] used');
  });

  it('leaves ordinary text, URLs without credentials and e-mail addresses intact', () => {
    const { logger, output } = capture();
    logger.info({ url: 'http://localhost:8080/api/v1/health', email: 'scientist@demo.bioprocess.local' }, 'Missing bearer token');
    const line = only(output());
    expect(line).toMatchObject({ url: 'http://localhost:8080/api/v1/health', email: 'scientist@demo.bioprocess.local', msg: 'Missing bearer token' });
  });

  it('keeps child loggers redacting', () => {
    const { logger, output } = capture();
    logger.child({ component: 'worker' }).info({ password: SECRET, job: { token: SECRET } }, 'job started');
    expect(output()).not.toContain(SECRET);
    expect(only(output())).toMatchObject({ component: 'worker', password: '[redacted]', job: { token: '[redacted]' } });
  });
});

describe('scrubCredentials', () => {
  it('replaces user and password of any scheme, including a password-only Redis URL', () => {
    expect(scrubCredentials('postgres://user:pw@host/db')).toBe('postgres://***@host/db');
    expect(scrubCredentials('redis://:pw@host:6379')).toBe('redis://***@host:6379');
    expect(scrubCredentials('see https://token@example.com/x and http://plain.example.com')).toBe('see https://***@example.com/x and http://plain.example.com');
  });
});

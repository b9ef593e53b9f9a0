import type { FastifyError, FastifyInstance } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { isPostgresUnreachable } from '@bioprocess/shared/server/postgres';
import { HttpError } from './http-error.ts';

interface ValidationIssue {
  instancePath?: string;
  message?: string;
  params?: { issue?: { path?: PropertyKey[]; message?: string } };
}

function describeValidation(issues: ValidationIssue[], context?: string): string {
  const first = issues[0];
  if (!first) return 'Invalid request';
  const path = first.params?.issue?.path?.map(String).join('.') ?? first.instancePath?.replace(/^\//, '').replace(/\//g, '.') ?? '';
  const message = first.params?.issue?.message ?? first.message ?? 'is invalid';
  if (!path) return message;
  return context && context !== 'body' ? `${context}.${path}: ${message}` : `${path}: ${message}`;
}

/**
 * PostgreSQL's data exceptions (SQLSTATE class 22) come from values the request carried past the
 * schemas: a NUL character in text (which PostgreSQL cannot store), a number beyond a column's range.
 * They are the caller's error, not the server's.
 */
function postgresDataException(error: unknown): string | null {
  const code = (error as { code?: unknown }).code;
  if (typeof code !== 'string' || !/^22[0-9A-Z]{3}$/.test(code)) return null;
  if (code === '22021') return 'Text must not contain NUL characters';
  return 'Invalid value';
}

/** What a client reads while the database is unreachable (or restarting): the request may be sent again shortly. */
export const SERVICE_UNAVAILABLE_MESSAGE = 'The service is unavailable for a moment (its database cannot be reached); please try again shortly';

/** One mapping from thrown errors to `{ error }`: 4xx logged as warn, 5xx as error, internals hidden. */
export function installErrorHandler(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof HttpError) {
      request.log.warn({ status: error.statusCode, msg: error.message }, 'request rejected');
      return reply.status(error.statusCode).send({ error: error.message });
    }
    if (hasZodFastifySchemaValidationErrors(error)) {
      const message = describeValidation(error.validation as ValidationIssue[], error.validationContext);
      request.log.warn({ status: 400, msg: message }, 'validation failed');
      return reply.status(400).send({ error: message });
    }
    const dataException = postgresDataException(error);
    if (dataException) {
      request.log.warn({ status: 400, msg: dataException, code: (error as { code?: string }).code }, 'request rejected');
      return reply.status(400).send({ error: dataException });
    }
    if (isPostgresUnreachable(error)) {
      request.log.warn({ status: 503, err: error }, 'database unreachable');
      return reply.status(503).header('retry-after', '5').send({ error: SERVICE_UNAVAILABLE_MESSAGE });
    }
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      request.log.warn({ status, msg: error.message }, 'request rejected');
      return reply.status(status).send({ error: error.message });
    }
    request.log.error({ err: error }, 'request failed');
    return reply.status(500).send({ error: 'Internal server error' });
  });
}

import type { FastifyError, FastifyInstance } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
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
    const status = error.statusCode ?? 500;
    if (status >= 400 && status < 500) {
      request.log.warn({ status, msg: error.message }, 'request rejected');
      return reply.status(status).send({ error: error.message });
    }
    request.log.error({ err: error }, 'request failed');
    return reply.status(500).send({ error: 'Internal server error' });
  });
}

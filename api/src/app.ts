/**
 * The Fastify app factory: tests build it without listening, main.ts listens. Feature routers are
 * plugins listed in routes.ts; this file wires the cross-cutting parts (security headers, validation,
 * authentication, errors, the OpenAPI document and the console's static files).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import helmet from '@fastify/helmet';
import fastifyStatic from '@fastify/static';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import {
  jsonSchemaTransform,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod';
import { authenticationPlugin } from './auth/authenticate.ts';
import { installErrorHandler } from './platform/error-handler.ts';
import { registerAddressLimits } from './platform/address-limits.ts';
import type { AppDeps } from './platform/deps.ts';
import type { App } from './platform/app-type.ts';
import { registerFeatureRoutes } from './routes.ts';
import { createAuditRelay } from './audit/relay.ts';

/** Default JSON body limit; routes that take more (bulk points) raise it for themselves. */
export const DEFAULT_BODY_LIMIT = 1024 * 1024;

export const CONTENT_SECURITY_POLICY = {
  defaultSrc: ["'self'"],
  scriptSrc: ["'self'"],
  // Highcharts and Blueprint set inline style attributes.
  styleSrc: ["'self'", "'unsafe-inline'"],
  imgSrc: ["'self'", 'data:', 'blob:'],
  fontSrc: ["'self'", 'data:'],
  connectSrc: ["'self'"],
  objectSrc: ["'none'"],
  frameAncestors: ["'none'"],
  baseUri: ["'self'"],
  formAction: ["'self'"],
};

export async function buildApp(deps: AppDeps): Promise<App> {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    bodyLimit: DEFAULT_BODY_LIMIT,
    trustProxy: true,
  }).withTypeProvider<ZodTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  installErrorHandler(app);

  await app.register(helmet, {
    contentSecurityPolicy: { useDefaults: false, directives: CONTENT_SECURITY_POLICY },
    crossOriginEmbedderPolicy: false,
  });

  await app.register(swagger, {
    openapi: {
      info: { title: 'Bioprocess platform API', version: '1.0.0', description: 'Runs, unit operations, equipment, instruments and time series.' },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
    transform: jsonSchemaTransform,
  });
  await app.register(swaggerUi, { routePrefix: '/api/v1/docs', staticCSP: true, uiConfig: { docExpansion: 'list' } });
  app.get('/api/v1/openapi.json', { config: { access: 'public' }, schema: { hide: true } }, async () => app.swagger());

  await registerAddressLimits(app, deps);

  // Audit events wait in PostgreSQL (audit_outbox) until the relay has handed them to the audit queue.
  const auditRelay = createAuditRelay(
    { pg: deps.pg, queue: deps.queues.audit, logger: deps.logger, databaseUrl: deps.env.DATABASE_URL },
    { pollMs: deps.env.AUDIT_RELAY_POLL_MS, resendMaxMs: deps.env.AUDIT_RELAY_RESEND_MS },
  );
  app.addHook('onReady', async () => auditRelay.start());
  app.addHook('onClose', async () => auditRelay.close());

  await app.register(authenticationPlugin, deps);
  await registerFeatureRoutes(app, deps);

  const consoleDist = path.resolve(deps.env.CONSOLE_DIST);
  const hasConsole = existsSync(path.join(consoleDist, 'index.html'));
  if (hasConsole) {
    await app.register(fastifyStatic, { root: consoleDist, prefix: '/', wildcard: false, index: false });
  }
  app.setNotFoundHandler((request, reply) => {
    const isApi = request.url.startsWith('/api/');
    if (!isApi && hasConsole && request.method === 'GET') {
      // Client-side routes: the console decides (its own not-found page included).
      return reply.type('text/html').sendFile('index.html');
    }
    return reply.status(404).send({ error: 'Not found' });
  });

  return app;
}

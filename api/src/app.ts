/**
 * The Fastify app factory: tests build it without listening, main.ts listens. Feature routers are
 * plugins listed in routes.ts; this file wires the cross-cutting parts (security headers, validation,
 * authentication, errors, the OpenAPI document and the console's static files).
 */
import { existsSync } from 'node:fs';
import http from 'node:http';
import type { Duplex } from 'node:stream';
import path from 'node:path';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import helmet from 'helmet';
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
import { owedRollupsPlugin } from './timeseries/rollup-backlog.ts';
import { installErrorHandler } from './platform/error-handler.ts';
import { registerAddressLimits } from './platform/address-limits.ts';
import type { AppDeps } from './platform/deps.ts';
import type { App } from './platform/app-type.ts';
import { changeReasonPlugin } from './platform/change-reason.ts';
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

/**
 * Errors Node reports before a request reaches Fastify (a request or its headers not received in
 * time, malformed HTTP): answered in the product's `{ error }` shape, then the connection closes.
 */
function answerClientError(this: { log: FastifyBaseLogger }, error: Error & { code?: string }, socket: Duplex & { _httpMessage?: { headersSent?: boolean } }): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, message] =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? [408, 'Request timeout: the request was not received in time']
      : error.code === 'HPE_HEADER_OVERFLOW' ? [431, 'Request headers too large']
        : [400, 'Malformed HTTP request'];
  this.log.debug({ code: error.code, status }, 'client error');
  // An answer already under way (e.g. a 429 to a body still arriving) is not followed by another.
  if (socket.writable && !socket._httpMessage?.headersSent) {
    const body = JSON.stringify({ error: message });
    socket.write(`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\nConnection: close\r\n\r\n${body}`);
  }
  socket.destroy();
}

/** Trusts the nearest `count` hops (Fastify's types take no hop count, its runtime does the same). */
function trustedHops(count: number): (address: string, hop: number) => boolean {
  return (_address, hop) => hop < count;
}

/**
 * The headers helmet sets on every answer, taken once from its middleware: they depend on nothing in
 * the request, and running helmet's dozen middlewares for every request (rather than setting what they
 * set) was 5% of the api's work for instrument feeds.
 */
function staticSecurityHeaders(): Array<[name: string, value: string]> {
  const middleware = helmet({
    contentSecurityPolicy: { useDefaults: false, directives: CONTENT_SECURITY_POLICY },
    crossOriginEmbedderPolicy: false,
  });
  const headers = new Map<string, string>();
  const response = {
    setHeader: (name: string, value: string) => headers.set(name.toLowerCase(), value),
    removeHeader: (name: string) => headers.delete(name.toLowerCase()),
  };
  let failed: unknown;
  middleware({} as http.IncomingMessage, response as unknown as http.ServerResponse, (error?: unknown) => { failed = error; });
  if (failed !== undefined || headers.size === 0) throw new Error('helmet set no security headers');
  return [...headers];
}

export async function buildApp(deps: AppDeps): Promise<App> {
  const env = deps.env;
  const headersTimeout = Math.min(env.HEADERS_TIMEOUT_MS, env.REQUEST_TIMEOUT_MS);
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    bodyLimit: DEFAULT_BODY_LIMIT,
    // Only named proxies may say who the client is: the address lands in the audit trail.
    trustProxy: typeof env.TRUST_PROXY === 'number' ? trustedHops(env.TRUST_PROXY) : env.TRUST_PROXY,
    requestTimeout: env.REQUEST_TIMEOUT_MS,
    keepAliveTimeout: env.KEEP_ALIVE_TIMEOUT_MS,
    connectionTimeout: env.CONNECTION_TIMEOUT_MS,
    http: {
      headersTimeout,
      // Node looks for overdue requests this often (30 s by default, longer than short timeouts).
      connectionsCheckingInterval: Math.min(30_000, Math.max(100, Math.floor(headersTimeout / 4))),
    },
    clientErrorHandler: answerClientError,
  }).withTypeProvider<ZodTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(serializerCompiler);
  installErrorHandler(app);

  const securityHeaders = staticSecurityHeaders();
  app.addHook('onRequest', (_request, reply, done) => {
    const response = reply.raw;
    for (const [name, value] of securityHeaders) response.setHeader(name, value);
    done();
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
  await app.register(changeReasonPlugin, deps);
  await app.register(owedRollupsPlugin, deps);
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

/**
 * The connector signing in to an OPC UA server with a user certificate made through the api: the key
 * travels encrypted from the api's row to the connector, which reads the server's values (counted in
 * the status the api answers); with a certificate the server does not trust, the status the api
 * answers says the server refused it, naming the certificate and what to do. The connector's log lines
 * never hold a private key.
 */
import { Writable } from 'node:stream';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectorEnvSchema, parseEnv } from '@bioprocess/shared/server/config';
import { createLogger } from '@bioprocess/shared/server/logger';
import { generateSecretKey } from '@bioprocess/shared/server/integration-secrets';
import { createPlant, createTestContext, createUnitOperation, type Plant, type TestContext, type TestUser } from '@bioprocess/api/test-support';
import { Connector } from '../src/connectors/connector.ts';
import { SOURCE_FACTORIES } from '../src/connectors/sources/index.ts';
import { startDemoOpcuaServer, type DemoOpcuaServer } from '../src/connectors/demo/opcua-bioreactor-server.ts';
import { until } from '../../shared/test/support/until.ts';
import { makeUserCertificate } from './support/user-certificate.ts';

const KEY = generateSecretKey();
const constant = { temperature: 37, ph: 7, dissolvedO2: 40, stirRate: 600, feedRate: 0.2, opticalDensity: 20, exhaustCo2: 3, exhaustO2: 18, airFlow: 2 };



describe('OPC UA connector with a user certificate', () => {
  let ctx: TestContext;
  let plant: Plant;
  let admin: TestUser;
  let connector: Connector;
  let server: DemoOpcuaServer;
  let workDir: string;
  let trusted: Awaited<ReturnType<typeof makeUserCertificate>>;
  let untrusted: Awaited<ReturnType<typeof makeUserCertificate>>;
  const logLines: string[] = [];

  beforeAll(async () => {
    [trusted, untrusted] = await Promise.all([makeUserCertificate('Connector BR-06'), makeUserCertificate('Not registered')]);
    workDir = await mkdtemp(path.join(os.tmpdir(), 'bp-opcua-certificate-'));
    server = await startDemoOpcuaServer({
      port: 0, reactors: [{ name: 'BR-06', read: () => constant }], allowAnonymous: false,
      userPkiFolder: path.join(workDir, 'user-pki'), trustedUserCertificates: [trusted.der], updateIntervalMs: 200,
    });
    ctx = await createTestContext({ INTEGRATIONS_SECRET_KEY: KEY });
    plant = await createPlant(ctx, 0);
    admin = await ctx.createUser({ organizationId: plant.organizationId, role: 'admin' });
    await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const address = ctx.app.server.address() as { port: number };
    const env = parseEnv(connectorEnvSchema, {
      DATABASE_URL: ctx.env.DATABASE_URL, REDIS_URL: ctx.env.REDIS_URL, QUEUE_PREFIX: ctx.env.QUEUE_PREFIX, INTEGRATIONS_SECRET_KEY: KEY,
      CONNECTOR_API_URL: `http://127.0.0.1:${address.port}`, CONNECTOR_DATA_DIR: path.join(workDir, 'connector'), CONNECTOR_POLL_MS: '200', CONNECTOR_LEASE_MS: '5000',
      LOG_LEVEL: 'debug',
    });
    const destination = new Writable({ write(chunk, _encoding, done) { logLines.push(String(chunk)); done(); } });
    connector = new Connector({ env, pg: ctx.deps.pg, log: createLogger('connector-test', env.LOG_LEVEL, destination), factories: SOURCE_FACTORIES });
    await connector.start();
  }, 120_000);
  afterAll(async () => {
    await connector?.stop();
    await server?.stop();
    await ctx?.close();
    if (workDir) await rm(workDir, { recursive: true, force: true });
  });

  it('reads values signed in with the trusted certificate, and shows the refusal of an untrusted one in the status', async () => {
    const settings = (pem: string) => ({ security_mode: 'None', security_policy: 'None', user_identity: 'certificate', user_certificate_pem: pem });
    const created = await ctx.request({
      method: 'POST', url: '/api/v1/integrations/connections', token: admin.token,
      payload: { kind: 'opcua', name: 'BR-06 controller', endpoint_url: server.endpointUrl, settings: settings(trusted.certificatePem), secret: trusted.privateKeyPem },
    });
    expect(created.statusCode, created.body).toBe(201);
    const connectionId = created.json().id as number;
    const unitOperationId = await createUnitOperation(ctx, plant);
    const mapped = await ctx.request({
      method: 'POST', url: `/api/v1/integrations/connections/${connectionId}/mappings`, token: admin.token,
      payload: { source: server.nodeIds.get('BR-06')!.get('temperature')!, instrument: { unit_operation_id: unitOperationId, name: 'BR-06 temperature', unit: 'Cel' } },
    });
    expect(mapped.statusCode, mapped.body).toBe(201);

    const status = async () => (await ctx.request({ method: 'GET', url: `/api/v1/integrations/connections/${connectionId}/status`, token: admin.token })).json();
    const reading = await until('readings from the server', async () => {
      const answer = await status();
      return answer.state === 'connected' && answer.points_per_minute > 0 ? answer : null;
    });
    expect(reading.errors.filter((error: { message: string }) => /refused|failed/.test(error.message))).toEqual([]);

    const replaced = await ctx.request({
      method: 'PATCH', url: `/api/v1/integrations/connections/${connectionId}`, token: admin.token,
      payload: { settings: settings(untrusted.certificatePem), secret: untrusted.privateKeyPem },
    });
    expect(replaced.statusCode, replaced.body).toBe(200);
    const thumbprint = replaced.json().settings.user_certificate.thumbprint as string;
    const refused = await until('the refusal in the status', async () => {
      const answer = await status();
      return answer.state === 'error' ? answer : null;
    });
    const messages = (refused.errors as Array<{ message: string }>).map((error) => error.message);
    expect(messages.some((message) => /refused the user certificate .*CN=Not registered.*\(BadIdentityTokenRejected\): add the certificate to the server's trusted user certificates/.test(message)
      && message.includes(thumbprint))).toBe(true);
    for (const message of messages) expect(message).not.toContain('PRIVATE KEY');
    expect(logLines.some((line) => line.includes('OPC UA sign-in refused'))).toBe(true);
    const keyLines = [trusted, untrusted].flatMap(({ privateKeyPem }) => privateKeyPem.split('\n').filter((line) => line.length > 40 && !line.startsWith('-----')));
    for (const line of logLines) {
      expect(line).not.toContain('PRIVATE KEY');
      for (const fragment of keyLines) expect(line).not.toContain(fragment);
    }
  });
});

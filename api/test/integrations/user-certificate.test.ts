/**
 * OPC UA connections signing in with an X.509 user certificate, through the real HTTP server: the
 * certificate is answered with what it says (subject, thumbprint, validity) and the private key never,
 * not in an answer, a log line or the audit trail; the pair is checked on save (a key of another
 * certificate, an expired or malformed certificate, an encrypted or missing key answer 400 naming it,
 * and nothing is written); a renewed certificate may keep the stored key; another organisation sees 404.
 */
import { createPrivateKey } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CertificatePurpose, createSelfSignedCertificate, generatePrivateKey, privateKeyToPEM,
} from 'node-opcua-crypto';
import { decryptSecret, generateSecretKey, parseSecretKey, secretContext } from '@bioprocess/shared/server/integration-secrets';
import { createTestContext, type TestContext, type TestUser } from '../support/test-context.ts';

const KEY = generateSecretKey();
const BASE = '/api/v1/integrations/connections';

type Key = Awaited<ReturnType<typeof generatePrivateKey>>;

async function certificateFor(privateKey: Key, commonName: string, notBefore = new Date(Date.now() - 60_000), validityDays = 365): Promise<string> {
  const { cert } = await createSelfSignedCertificate({
    privateKey, subject: `/CN=${commonName}/O=Plant users`, notBefore, validity: validityDays, purpose: CertificatePurpose.ForUserAuthentication,
  });
  return cert;
}

/** The lines of the key's body: none of them may appear anywhere the api writes or answers. */
function keyFragments(privateKeyPem: string): string[] {
  return privateKeyPem.split('\n').filter((line) => line.length > 40 && !line.startsWith('-----'));
}

describe('OPC UA user certificates', () => {
  let ctx: TestContext;
  let admin: TestUser;
  let outsider: TestUser;
  const lines: string[] = [];
  let keyPem: string;
  let certificatePem: string;
  let renewedPem: string;
  let otherKeyPem: string;
  let otherCertificatePem: string;
  let expiredPem: string;

  beforeAll(async () => {
    const destination = new Writable({ write(chunk, _encoding, done) { lines.push(String(chunk)); done(); } });
    ctx = await createTestContext({ INTEGRATIONS_SECRET_KEY: KEY, LOG_LEVEL: 'debug' }, { logDestination: destination });
    const org = await ctx.createOrganization('Certificate org');
    admin = await ctx.createUser({ organizationId: org, role: 'admin' });
    outsider = await ctx.createUser({ organizationId: await ctx.createOrganization('Other certificate org'), role: 'admin' });
    const [key, otherKey] = await Promise.all([generatePrivateKey(2048), generatePrivateKey(2048)]);
    keyPem = (await privateKeyToPEM(key)).privPem;
    otherKeyPem = (await privateKeyToPEM(otherKey)).privPem;
    certificatePem = await certificateFor(key, 'Connector BR-07');
    renewedPem = await certificateFor(key, 'Connector BR-07 renewed');
    otherCertificatePem = await certificateFor(otherKey, 'Someone else');
    expiredPem = await certificateFor(key, 'Connector BR-07 old', new Date(Date.now() - 10 * 86_400_000), 2);
  }, 60_000);
  afterAll(async () => { await ctx?.close(); });

  const certificateSettings = (pem: string) => ({ security_mode: 'Sign', security_policy: 'Basic256Sha256', user_identity: 'certificate', user_certificate_pem: pem });
  const create = (user: TestUser, name: string, settings: object, secret?: string | null) =>
    ctx.request({ method: 'POST', url: BASE, token: user.token, payload: { kind: 'opcua', name, endpoint_url: 'opc.tcp://plant.example:4840', settings, ...(secret === undefined ? {} : { secret }) } });
  const patch = (user: TestUser, id: number, payload: object) => ctx.request({ method: 'PATCH', url: `${BASE}/${id}`, token: user.token, payload });
  const connectionCount = async () => Number((await ctx.deps.pg.query('SELECT count(*) AS n FROM integration_connections')).rows[0].n);

  it('stores the key encrypted, answers what the certificate says, and never the key: not in answers, logs or the audit trail', async () => {
    const response = await create(admin, 'BR-07 controller', certificateSettings(certificatePem), keyPem);
    expect(response.statusCode, response.body).toBe(201);
    const connection = response.json();
    expect(connection.has_secret).toBe(true);
    expect(connection.settings).toMatchObject({ user_identity: 'certificate', username: null, user_certificate_pem: certificatePem.trim() });
    expect(connection.settings.user_certificate.subject).toMatch(/CN=Connector BR-07/);
    expect(connection.settings.user_certificate.thumbprint).toMatch(/^[0-9a-f]{40}$/);
    expect(Date.parse(connection.settings.user_certificate.not_after) - Date.now()).toBeGreaterThan(300 * 86_400_000);

    const { rows } = await ctx.deps.pg.query('SELECT secret_ciphertext, settings::text AS settings FROM integration_connections WHERE id = $1', [connection.id]);
    expect(decryptSecret(parseSecretKey(KEY), rows[0].secret_ciphertext, secretContext.source(connection.id))).toBe(keyPem);
    // What is stored beside the certificate is what was given: the answer's description is read, not kept.
    expect(rows[0].settings).not.toContain('thumbprint');

    const answers = [
      response.body,
      (await ctx.request({ method: 'GET', url: BASE, token: admin.token })).body,
      (await ctx.request({ method: 'GET', url: `${BASE}/${connection.id}`, token: admin.token })).body,
      (await patch(admin, connection.id, { secret: keyPem })).body,
    ];
    const audit = (await ctx.deps.pg.query('SELECT event::text AS event FROM audit_outbox')).rows.map((row) => row.event as string);
    expect(audit.some((event) => event.includes('integration_connection'))).toBe(true);
    expect(lines.some((line) => line.includes(`${BASE}/${connection.id}`))).toBe(true);
    for (const text of [...answers, ...audit, ...lines]) {
      expect(text).not.toContain('PRIVATE KEY');
      for (const fragment of keyFragments(keyPem)) expect(text).not.toContain(fragment);
    }
  });

  it('answers 400 naming what is wrong with the pair, and writes nothing', async () => {
    const before = await connectionCount();
    const encryptedKeyPem = createPrivateKey(keyPem).export({ type: 'pkcs8', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'pass-phrase' }).toString();
    const cases: Array<[object, string | null | undefined, RegExp]> = [
      [certificateSettings(certificatePem), otherKeyPem, /^secret: Private key does not match the user certificate's public key\.$/],
      [certificateSettings(otherCertificatePem), keyPem, /^secret: Private key does not match/],
      [certificateSettings(certificatePem), undefined, /^secret: A certificate sign-in needs the certificate's private key/],
      [certificateSettings(certificatePem), 'hunter2', /^secret: Private key is not a PEM private key/],
      [certificateSettings(certificatePem), encryptedKeyPem, /^secret: Private key is protected by a passphrase/],
      [certificateSettings('-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----'), keyPem, /^settings\.user_certificate_pem: User certificate is not a PEM certificate/],
      [certificateSettings(expiredPem), keyPem, /^settings\.user_certificate_pem: User certificate expired on \d{4}-/],
      [{ user_identity: 'certificate' }, keyPem, /^settings\.user_certificate_pem: A certificate sign-in needs user_certificate_pem/],
      [{ user_identity: 'anonymous', user_certificate_pem: certificatePem }, null, /^settings\.user_certificate_pem: User certificate is only used when user_identity is certificate/],
      [{ user_identity: 'username' }, 'pw', /^settings\.username: A user name sign-in needs a username/],
      [{ user_identity: 'token' }, null, /^settings\.user_identity: User identity must be one of: anonymous, username, certificate/],
    ];
    for (const [settings, secret, message] of cases) {
      const response = await create(admin, 'Refused', settings, secret);
      expect(response.statusCode, `${JSON.stringify(settings).slice(0, 80)}: ${response.body}`).toBe(400);
      expect(response.json().error).toMatch(message);
      for (const fragment of keyFragments(keyPem)) expect(response.body).not.toContain(fragment);
    }
    expect(await connectionCount()).toBe(before);
  });

  it('checks changes against the stored key, keeps it for a renewed certificate, and removes it when sign-in is no longer by certificate', async () => {
    const created = (await create(admin, 'BR-08 controller', certificateSettings(certificatePem), keyPem)).json();

    // A renewed certificate of the same key: the stored key is checked against it and kept.
    const renewed = await patch(admin, created.id, { settings: certificateSettings(renewedPem) });
    expect(renewed.statusCode, renewed.body).toBe(200);
    expect(renewed.json()).toMatchObject({ has_secret: true, settings: { user_certificate: { subject: expect.stringMatching(/renewed/) } } });

    // Another key's certificate without its key: the stored key does not match it.
    const foreign = await patch(admin, created.id, { settings: certificateSettings(otherCertificatePem) });
    expect(foreign.statusCode).toBe(400);
    expect(foreign.json().error).toMatch(/^secret: Private key does not match/);
    // Replacing both together is the way; then the old key alone is refused.
    const replaced = await patch(admin, created.id, { settings: certificateSettings(otherCertificatePem), secret: otherKeyPem });
    expect(replaced.statusCode, replaced.body).toBe(200);
    expect((await patch(admin, created.id, { secret: keyPem })).json().error).toMatch(/^secret: Private key does not match/);
    expect((await patch(admin, created.id, { secret: null })).json().error).toMatch(/^secret: A certificate sign-in needs/);

    // The answer's settings sent back whole (a security mode changed) keep certificate and key.
    const answered = (await ctx.request({ method: 'GET', url: `${BASE}/${created.id}`, token: admin.token })).json();
    const modeChanged = await patch(admin, created.id, { settings: { ...answered.settings, security_mode: 'SignAndEncrypt' } });
    expect(modeChanged.statusCode, modeChanged.body).toBe(200);
    expect(modeChanged.json()).toMatchObject({ has_secret: true, settings: { security_mode: 'SignAndEncrypt', user_identity: 'certificate' } });
    const { rows } = await ctx.deps.pg.query('SELECT secret_ciphertext FROM integration_connections WHERE id = $1', [created.id]);
    expect(decryptSecret(parseSecretKey(KEY), rows[0].secret_ciphertext, secretContext.source(created.id))).toBe(otherKeyPem);

    // Switching to anonymous takes the key away with the certificate.
    const anonymous = await patch(admin, created.id, { settings: { security_mode: 'None', security_policy: 'None', user_identity: 'anonymous' } });
    expect(anonymous.statusCode, anonymous.body).toBe(200);
    expect(anonymous.json()).toMatchObject({ has_secret: false, settings: { user_identity: 'anonymous', user_certificate_pem: null, user_certificate: null } });
    // And back to a certificate needs its key again.
    const withoutKey = await patch(admin, created.id, { settings: certificateSettings(certificatePem) });
    expect(withoutKey.statusCode).toBe(400);
    expect(withoutKey.json().error).toMatch(/^secret: A certificate sign-in needs the certificate's private key/);
  });

  it("answers 404 for another organisation's connection, without checking or changing its certificate", async () => {
    const created = (await create(admin, 'BR-09 controller', certificateSettings(certificatePem), keyPem)).json();
    expect((await ctx.request({ method: 'GET', url: `${BASE}/${created.id}`, token: outsider.token })).statusCode).toBe(404);
    const foreignPatch = await patch(outsider, created.id, { settings: certificateSettings(otherCertificatePem), secret: otherKeyPem });
    expect(foreignPatch.statusCode).toBe(404);
    expect(foreignPatch.json()).toEqual({ error: 'Connection not found' });
    const listed = (await ctx.request({ method: 'GET', url: BASE, token: outsider.token })).json() as Array<{ id: number }>;
    expect(listed.map((item) => item.id)).not.toContain(created.id);
    const unchanged = (await ctx.request({ method: 'GET', url: `${BASE}/${created.id}`, token: admin.token })).json();
    expect(unchanged.settings.user_certificate_pem).toBe(certificatePem.trim());
  });
});

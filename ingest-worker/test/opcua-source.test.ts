/**
 * The OPC UA source against a real node-opcua server in this process (the demo's simulated bioreactor):
 * monitored items deliver the server's values with its source timestamps, bad quality is kept as a
 * missing value with its code or dropped per mapping, browse walks the address space with the
 * EngineeringUnits the server declares, a user name is checked by the server, a changed mapping list
 * changes what is monitored, and a server restart is survived. A server that accepts only certificate
 * users reads values to a connection signing in with a certificate it trusts, and refuses an untrusted
 * one (or anonymous) with a message saying so, and signs in by itself once the server trusts it.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataType, DataValue, StatusCodes } from 'node-opcua-client';
import { createLogger } from '@bioprocess/shared/server/logger';
import type { IntegrationMapping, OpcuaConnection } from '@bioprocess/shared/integrations';
import { describeUserCertificate } from '@bioprocess/shared/server/opcua-user-certificate';
import { createOpcuaSource, opcuaSourceFactory, readingsOf } from '../src/connectors/sources/opcua.ts';
import { deliveredPoint } from '../src/connectors/delivery.ts';
import { startDemoOpcuaServer, type DemoOpcuaServer } from '../src/connectors/demo/opcua-bioreactor-server.ts';
import type { ConnectorSource, SourceReading, SourceStatusSink } from '../src/connectors/source.ts';
import { makeUserCertificate } from './support/user-certificate.ts';

const log = createLogger('opcua-source-test', 'silent');
const constant = { temperature: 37, ph: 7, dissolvedO2: 40, stirRate: 600, feedRate: 0.2, opticalDensity: 20, exhaustCo2: 3, exhaustO2: 18, airFlow: 2 };

function connection(endpointUrl: string, username: string | null = null): OpcuaConnection {
  return {
    id: 1, organization_id: 1, kind: 'opcua', name: 'Test server', endpoint_url: endpointUrl, has_secret: username !== null,
    enabled: true, buffer_limit_bytes: 1024 ** 3, created_at: new Date().toISOString(), updated_at: new Date().toISOString(),
    settings: {
      security_mode: 'None', security_policy: 'None', user_identity: username === null ? 'anonymous' : 'username', username,
      user_certificate_pem: null, user_certificate: null,
    },
  };
}

function certificateConnection(endpointUrl: string, certificatePem: string): OpcuaConnection {
  const base = connection(endpointUrl);
  return {
    ...base, has_secret: true,
    settings: { ...base.settings, user_identity: 'certificate', user_certificate_pem: certificatePem, user_certificate: describeUserCertificate(certificatePem) },
  };
}


function mapping(id: number, source: string, instrumentId: number, badQuality: 'missing' | 'drop' = 'missing'): IntegrationMapping {
  return {
    id, connection_id: 1, organization_id: 1, source, payload_format: null, value_path: null, timestamp_path: null,
    instrument_id: instrumentId, unit: null, bad_quality: badQuality, created_at: new Date().toISOString(),
  };
}

class RecordingStatus implements SourceStatusSink {
  events: string[] = [];
  messages = 0;
  connected() { this.events.push('connected'); }
  disconnected(reason: string) { this.events.push(`disconnected: ${reason}`); }
  error(message: string) { this.events.push(`error: ${message}`); }
  message() { this.messages += 1; }
}

async function until<T>(what: string, probe: () => T | undefined | null | false, limit = 400): Promise<T> {
  for (let attempt = 0; attempt < limit; attempt += 1) {
    const value = probe();
    if (value) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`gave up waiting for ${what}`);
}

describe('OPC UA readings', () => {
  it('keep the microseconds of a source timestamp (OPC UA\'s 100 ns DateTime), and deliver them as ISO text', () => {
    const stamp = new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 600));
    // As node-opcua decodes a source time of .600123456: the Date holds the millisecond, picoseconds the rest.
    const fine = new DataValue({ value: { dataType: DataType.Double, value: 36.5 }, sourceTimestamp: stamp, sourcePicoseconds: 123_456_780 });
    const [reading] = readingsOf([mapping(1, 'ns=1;s=T', 101)], fine, 0);
    expect(reading).toEqual({ mappingId: 1, instrumentId: 101, measuredAtMs: stamp.getTime(), measuredAtMicros: 123, value: 36.5, quality: null, historical: false });
    expect(deliveredPoint([101, stamp.getTime(), 36.5, null, 0, 123])).toEqual({ instrument_id: 101, ts: '2026-01-02T03:04:05.600123Z', value: 36.5 });
    const coarse = new DataValue({ value: { dataType: DataType.Double, value: 1 }, sourceTimestamp: stamp, statusCode: StatusCodes.BadSensorFailure });
    expect(readingsOf([mapping(1, 'ns=1;s=T', 101)], coarse, 0)[0]).toEqual({
      mappingId: 1, instrumentId: 101, measuredAtMs: stamp.getTime(), value: null, quality: StatusCodes.BadSensorFailure.value, historical: false,
    });
    expect(deliveredPoint([101, stamp.getTime(), null, StatusCodes.BadSensorFailure.value, 0])).toEqual({
      instrument_id: 101, ts: stamp.getTime(), value: null, quality: StatusCodes.BadSensorFailure.value,
    });
  });
});

describe('OPC UA source', () => {
  let server: DemoOpcuaServer;
  let ids: Map<string, string>;

  beforeAll(async () => {
    server = await startDemoOpcuaServer({
      port: 0, reactors: [{ name: 'BR-01', read: () => constant }, { name: 'BR-02', read: () => constant }], users: { operator: 'Op-Secret-1' },
    });
    server.pause();
    ids = new Map([...server.nodeIds.get('BR-01')!].map(([tag, id]) => [tag, id]));
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('delivers values with the source timestamp, keeps bad quality as missing with its code, or drops it', async () => {
    const readings: SourceReading[] = [];
    const status = new RecordingStatus();
    const source: ConnectorSource = createOpcuaSource(connection(server.endpointUrl), null, [
      mapping(1, ids.get('temperature')!, 101),
      mapping(2, ids.get('ph')!, 102, 'drop'),
      // The same node feeding two instruments: each gets its reading.
      mapping(3, ids.get('ph')!, 103, 'missing'),
    ], status, log);
    await source.start(async (batch) => { readings.push(...batch); });
    try {
      expect(status.events).toContain('connected');
      const stamp = new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 600));
      server.set('BR-01', 'temperature', 36.5, StatusCodes.Good, stamp);
      await until('the temperature reading', () => readings.find((reading) => reading.value === 36.5));
      expect(readings.find((reading) => reading.value === 36.5)).toEqual({
        mappingId: 1, instrumentId: 101, measuredAtMs: stamp.getTime(), value: 36.5, quality: null, historical: false,
      });

      // The same value at a new source timestamp is a new reading.
      const again = new Date(stamp.getTime() + 500);
      server.set('BR-01', 'temperature', 36.5, StatusCodes.Good, again);
      await until('the repeated temperature reading', () => readings.find((reading) => reading.measuredAtMs === again.getTime()));
      expect(readings.filter((reading) => reading.value === 36.5).map((reading) => reading.measuredAtMs)).toEqual([stamp.getTime(), again.getTime()]);

      const badStamp = new Date(Date.UTC(2026, 0, 2, 3, 4, 6));
      server.set('BR-01', 'ph', 6.9, StatusCodes.BadSensorFailure, badStamp);
      const bad = await until('the bad pH reading', () => readings.find((reading) => reading.measuredAtMs === badStamp.getTime()));
      expect(bad).toEqual({ mappingId: 3, instrumentId: 103, measuredAtMs: badStamp.getTime(), value: null, quality: StatusCodes.BadSensorFailure.value, historical: false });
      expect(readings.filter((reading) => reading.measuredAtMs === badStamp.getTime())).toHaveLength(1);

      const uncertainStamp = new Date(Date.UTC(2026, 0, 2, 3, 4, 7));
      server.set('BR-01', 'ph', 7.05, StatusCodes.UncertainLastUsableValue, uncertainStamp);
      await until('both uncertain pH readings', () => readings.filter((reading) => reading.measuredAtMs === uncertainStamp.getTime()).length === 2);
      expect(readings.filter((reading) => reading.measuredAtMs === uncertainStamp.getTime()).map((reading) => [reading.instrumentId, reading.value, reading.quality]).sort())
        .toEqual([[102, 7.05, StatusCodes.UncertainLastUsableValue.value], [103, 7.05, StatusCodes.UncertainLastUsableValue.value]]);
      expect(status.messages).toBeGreaterThanOrEqual(4);
    } finally {
      await source.stop();
    }
  });

  it('monitors what a changed mapping list says without reconnecting', async () => {
    const readings: SourceReading[] = [];
    const status = new RecordingStatus();
    const source = createOpcuaSource(connection(server.endpointUrl), null, [mapping(1, ids.get('temperature')!, 101)], status, log);
    await source.start(async (batch) => { readings.push(...batch); });
    try {
      await source.updateMappings([mapping(4, ids.get('dissolvedO2')!, 104)]);
      const stamp = new Date(Date.UTC(2026, 0, 3));
      server.set('BR-01', 'temperature', 30.25, StatusCodes.Good, stamp);
      server.set('BR-01', 'dissolvedO2', 31.5, StatusCodes.Good, stamp);
      await until('the dissolved oxygen reading', () => readings.find((reading) => reading.measuredAtMs === stamp.getTime()));
      // A second change of the new item: by then the removed item's change would have arrived too.
      const later = new Date(stamp.getTime() + 1000);
      server.set('BR-01', 'dissolvedO2', 32.5, StatusCodes.Good, later);
      await until('the second dissolved oxygen reading', () => readings.find((reading) => reading.measuredAtMs === later.getTime()));
      // The new item starts with the tag's current value; the removed one reports nothing more.
      expect(readings.filter((reading) => reading.value === 30.25)).toEqual([]);
      expect(readings.filter((reading) => reading.value === 31.5 || reading.value === 32.5).map((reading) => [reading.instrumentId, reading.value, reading.measuredAtMs]))
        .toEqual([[104, 31.5, stamp.getTime()], [104, 32.5, later.getTime()]]);
      expect(status.events.filter((event) => event === 'connected')).toHaveLength(1);
    } finally {
      await source.stop();
    }
  });

  it('browses the address space with the engineering units the server declares', async () => {
    const source = createOpcuaSource(connection(server.endpointUrl), null, [], new RecordingStatus(), log);
    await source.start(async () => undefined);
    try {
      const top = await source.browse(null);
      const folder = top.find((item) => item.name === 'Bioreactors');
      expect(folder).toMatchObject({ kind: 'folder', hasChildren: true, unit: null });
      const reactors = await source.browse(folder!.id);
      expect(reactors.map((item) => item.name).sort()).toEqual(['BR-01', 'BR-02']);
      const tags = await source.browse(reactors.find((item) => item.name === 'BR-01')!.id);
      expect(tags.map((item) => [item.name, item.kind, item.unit, item.dataType, item.hasChildren])).toEqual([
        ['TIC-101 Temperature', 'variable', '°C', 'Double', false],
        ['AIC-102 pH', 'variable', 'pH', 'Double', false],
        ['AIC-103 Dissolved O2', 'variable', '%', 'Double', false],
        ['SIC-104 Agitation', 'variable', 'r/min', 'Double', false],
        ['FIC-105 Feed rate', 'variable', 'mL/min', 'Double', false],
      ]);
      expect(tags[0]!.id).toBe(ids.get('temperature'));
      // The sample is the value now; the pH's last value is uncertain (set by the first test) and shows none.
      expect(tags.map((item) => item.sample)).toEqual(['30.25', null, '32.5', '600', '0.2']);
      await expect(source.browse('ns=1;s=NoSuchNode')).rejects.toThrow(/BadNodeIdUnknown/);
    } finally {
      await source.stop();
    }
  });

  it('signs in with a user name the server checks', async () => {
    const good = createOpcuaSource(connection(server.endpointUrl, 'operator'), 'Op-Secret-1', [], new RecordingStatus(), log);
    await good.start(async () => undefined);
    await good.stop();
    const wrong = createOpcuaSource(connection(server.endpointUrl, 'operator'), 'not-the-password', [], new RecordingStatus(), log);
    await expect(wrong.start(async () => undefined)).rejects.toThrow(/BadUserAccessDenied|BadIdentityTokenRejected|BadIdentityTokenInvalid/);
    await wrong.stop();
  });

  it('signs and encrypts the session when the connection asks for it', async () => {
    const plain = connection(server.endpointUrl);
    const secured = { ...plain, settings: { ...plain.settings, security_mode: 'SignAndEncrypt' as const, security_policy: 'Basic256Sha256' as const } };
    const readings: SourceReading[] = [];
    const source = createOpcuaSource(secured, null, [mapping(5, ids.get('feedRate')!, 105)], new RecordingStatus(), log);
    await source.start(async (batch) => { readings.push(...batch); });
    try {
      const stamp = new Date(Date.UTC(2026, 0, 5));
      server.set('BR-01', 'feedRate', 0.35, StatusCodes.Good, stamp);
      await until('the reading over the encrypted channel', () => readings.find((reading) => reading.measuredAtMs === stamp.getTime()));
    } finally {
      await source.stop();
    }
  });

  it('comes back after the server restarts and delivers again', async () => {
    const own = await startDemoOpcuaServer({ port: 0, reactors: [{ name: 'BR-09', read: () => constant }] });
    own.pause();
    const port = Number(new URL(own.endpointUrl.replace('opc.tcp:', 'http:')).port);
    const nodeId = own.nodeIds.get('BR-09')!.get('temperature')!;
    const readings: SourceReading[] = [];
    const status = new RecordingStatus();
    const source = createOpcuaSource(connection(own.endpointUrl), null, [mapping(9, nodeId, 109)], status, log);
    await source.start(async (batch) => { readings.push(...batch); });
    let restarted: DemoOpcuaServer | null = null;
    try {
      await own.stop();
      await until('the lost connection', () => status.events.some((event) => event.startsWith('disconnected')));
      restarted = await startDemoOpcuaServer({ port, reactors: [{ name: 'BR-09', read: () => constant }] });
      restarted.pause();
      const connectedBefore = status.events.filter((event) => event === 'connected').length;
      await until('the reconnection', () => status.events.filter((event) => event === 'connected').length > connectedBefore, 1200);
      const stamp = new Date(Date.UTC(2026, 0, 4));
      // The subscription may be rebuilt just after the reconnection is reported: set until the value arrives.
      await until('a reading after the restart', () => {
        restarted!.set('BR-09', 'temperature', 25.5, StatusCodes.Good, stamp);
        return readings.find((reading) => reading.measuredAtMs === stamp.getTime());
      }, 1200);
      expect(readings.find((reading) => reading.measuredAtMs === stamp.getTime())).toMatchObject({ instrumentId: 109, value: 25.5 });
    } finally {
      await source.stop();
      await restarted?.stop();
    }
  });
});

describe('OPC UA source signing in with a user certificate', () => {
  let server: DemoOpcuaServer;
  let userPkiFolder: string;
  let trusted: Awaited<ReturnType<typeof makeUserCertificate>>;
  let untrusted: Awaited<ReturnType<typeof makeUserCertificate>>;
  let nodeId: string;

  beforeAll(async () => {
    [trusted, untrusted] = await Promise.all([makeUserCertificate('Connector BR-05'), makeUserCertificate('Someone else')]);
    userPkiFolder = await mkdtemp(path.join(os.tmpdir(), 'bp-opcua-user-pki-'));
    // Certificate users only: no anonymous sessions and no user names.
    server = await startDemoOpcuaServer({
      port: 0, reactors: [{ name: 'BR-05', read: () => constant }], allowAnonymous: false, userPkiFolder, trustedUserCertificates: [trusted.der],
    });
    server.pause();
    nodeId = server.nodeIds.get('BR-05')!.get('temperature')!;
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
    if (userPkiFolder) await rm(userPkiFolder, { recursive: true, force: true });
  });

  it('reads values when the server trusts the certificate', async () => {
    const readings: SourceReading[] = [];
    const status = new RecordingStatus();
    const source = createOpcuaSource(certificateConnection(server.endpointUrl, trusted.certificatePem), trusted.privateKeyPem, [mapping(11, nodeId, 111)], status, log);
    await source.start(async (batch) => { readings.push(...batch); });
    try {
      expect(status.events).toContain('connected');
      const stamp = new Date(Date.UTC(2026, 0, 6));
      server.set('BR-05', 'temperature', 36.75, StatusCodes.Good, stamp);
      await until('the reading signed in with the certificate', () => readings.find((reading) => reading.measuredAtMs === stamp.getTime()));
      expect(readings.find((reading) => reading.measuredAtMs === stamp.getTime())).toMatchObject({ instrumentId: 111, value: 36.75, quality: null });
    } finally {
      await source.stop();
    }
  });

  it('reports an untrusted certificate as refused, naming it, and keeps it in the rejected folder to be trusted', async () => {
    const refused = certificateConnection(server.endpointUrl, untrusted.certificatePem);
    const source = createOpcuaSource(refused, untrusted.privateKeyPem, [mapping(12, nodeId, 112)], new RecordingStatus(), log);
    const failure = await source.start(async () => undefined).then(() => null, (error: unknown) => error as Error);
    await source.stop();
    expect(failure?.message).toMatch(/^The server refused the user certificate .*CN=Someone else.*\(BadIdentityTokenRejected\): add the certificate to the server's trusted user certificates/);
    expect(failure?.message).toContain(refused.settings.user_certificate!.thumbprint);
    expect(failure?.message).not.toContain('PRIVATE KEY');
    // Where an admin of a node-opcua server finds it to move into trusted/.
    const rejected = await readdir(path.join(userPkiFolder, 'rejected'));
    expect(rejected.some((file) => file.includes(refused.settings.user_certificate!.thumbprint))).toBe(true);
  });

  it('reports a key that does not belong to the certificate, and anonymous sign-in refused', async () => {
    const mismatched = createOpcuaSource(certificateConnection(server.endpointUrl, trusted.certificatePem), untrusted.privateKeyPem, [], new RecordingStatus(), log);
    await expect(mismatched.start(async () => undefined)).rejects.toThrow(/BadUserSignatureInvalid|BadIdentityTokenRejected/);
    await mismatched.stop();
    const anonymous = createOpcuaSource(connection(server.endpointUrl), null, [], new RecordingStatus(), log);
    await expect(anonymous.start(async () => undefined)).rejects.toThrow(/^The server's endpoint offers no anonymous sign-in: choose another user identity/);
    await anonymous.stop();
  });

  it('signs in by itself once the server trusts a certificate it refused', async () => {
    const later = await makeUserCertificate('Registered later');
    const status = new RecordingStatus();
    const readings: SourceReading[] = [];
    const createWithShortRetry = opcuaSourceFactory({ signInRetryMs: 300 });
    const source = createWithShortRetry(certificateConnection(server.endpointUrl, later.certificatePem), later.privateKeyPem, [mapping(13, nodeId, 113)], status, log);
    try {
      await expect(source.start(async (batch) => { readings.push(...batch); })).rejects.toThrow(/BadIdentityTokenRejected/);
      await until('a retried refusal', () => status.events.find((event) => /BadIdentityTokenRejected.*Trying again every 0 s\.$/.test(event)));
      expect(status.events).not.toContain('connected');
      await server.trustUserCertificate(later.der);
      await until('the sign-in after the certificate is trusted', () => status.events.includes('connected'));
      const stamp = new Date(Date.UTC(2026, 0, 7));
      server.set('BR-05', 'temperature', 35.5, StatusCodes.Good, stamp);
      await until('a reading after the late sign-in', () => readings.find((reading) => reading.measuredAtMs === stamp.getTime()));
    } finally {
      await source.stop();
    }
  });
});

/**
 * The OPC UA source: one client session per connection, one subscription whose monitored items are the
 * mapped node ids, readings stamped with the server's source timestamp and carrying its status code.
 * node-opcua's client repairs a lost connection itself (new secure channel, session reactivated or
 * recreated, subscriptions transferred or rebuilt); this module only reports those transitions and
 * keeps its item table in step with the mappings.
 *
 * The session signs in as the connection says: anonymous, a user name with the secret as its password,
 * or an X.509 user certificate whose private key is the secret (it signs the server's nonce; node-opcua
 * sends only the certificate). A server refusing the identity is reported with what to do about it,
 * and the sign-in is tried again every half minute: trusting a certificate on the server is how an
 * admin answers the refusal, and the connection then comes up without being saved again.
 */
import {
  AttributeIds, BrowseDirection, ClientMonitoredItemGroup, DataChangeFilter, DataChangeTrigger, DataType, DeadbandType, MessageSecurityMode, NodeClass, NodeClassMask, OPCUAClient,
  ReferenceTypeIds, SecurityPolicy, StatusCodes, TimestampsToReturn, UserTokenType, crypto_utils, resolveNodeId,
  type ClientSession, type ClientSubscription, type DataValue, type ReferenceDescription, type UserIdentityInfo,
} from 'node-opcua-client';
import type { IntegrationMapping, OpcuaConnection } from '@bioprocess/shared/integrations';
import { userCertificateDer } from '@bioprocess/shared/server/opcua-user-certificate';
import type { BrowseItem, ConnectorSource, SourceFactory, SourceReading } from '../source.ts';
import { unsignedQualityCode } from '../quality-codes.ts';

/** The server samples and queues faster than it publishes, so a 1 Hz tag loses nothing between publishes. */
const PUBLISHING_INTERVAL_MS = 1000;
const SAMPLING_INTERVAL_MS = 500;
const QUEUE_SIZE = 100;
/** The server keeps a silent subscription (and its queued values) this many publishing intervals: a minute. */
const LIFETIME_COUNT = 600;
const MAX_KEEP_ALIVE_COUNT = 20;
const OBJECTS_FOLDER = 'ns=0;i=85';
/** How long after a refused sign-in the source signs in again. */
const SIGN_IN_RETRY_MS = 30_000;

const SECURITY_MODES: Record<OpcuaConnection['settings']['security_mode'], MessageSecurityMode> = {
  None: MessageSecurityMode.None,
  Sign: MessageSecurityMode.Sign,
  SignAndEncrypt: MessageSecurityMode.SignAndEncrypt,
};
const SECURITY_POLICIES: Record<OpcuaConnection['settings']['security_policy'], SecurityPolicy> = {
  None: SecurityPolicy.None,
  Basic256Sha256: SecurityPolicy.Basic256Sha256,
  Aes128_Sha256_RsaOaep: SecurityPolicy.Aes128_Sha256_RsaOaep,
  Aes256_Sha256_RsaPss: SecurityPolicy.Aes256_Sha256_RsaPss,
};

/** A variant's value as a reading: numbers as they are, booleans as 1/0, anything else is not a reading. */
export function numericValue(dataValue: DataValue): number | null {
  const value: unknown = dataValue.value?.value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'bigint') return Number(value);
  // 64-bit integers arrive as [high, low] pairs of 32-bit words.
  if (Array.isArray(value) && value.length === 2 && (dataValue.value.dataType === DataType.Int64 || dataValue.value.dataType === DataType.UInt64)) {
    return value[0] * 2 ** 32 + value[1];
  }
  return null;
}

/** The readings of one notification for every mapping of its node; bad quality as the mapping says. */
export function readingsOf(mappings: IntegrationMapping[], dataValue: DataValue, receivedAtMs: number): SourceReading[] {
  const status = dataValue.statusCode ?? StatusCodes.Good;
  const good = status.isGood();
  const bad = status.isBad();
  const measuredAtMs = dataValue.sourceTimestamp?.getTime() ?? dataValue.serverTimestamp?.getTime() ?? receivedAtMs;
  // node-opcua keeps what a Date cannot hold (the 100 ns ticks within the millisecond) as picoseconds.
  const picoseconds = dataValue.sourceTimestamp ? dataValue.sourcePicoseconds : dataValue.serverTimestamp ? dataValue.serverPicoseconds : 0;
  const measuredAtMicros = Math.min(999, Math.floor((picoseconds ?? 0) / 1_000_000));
  const value = bad ? null : numericValue(dataValue);
  const readings: SourceReading[] = [];
  for (const mapping of mappings) {
    if (bad && mapping.bad_quality === 'drop') continue;
    // A good value that is not a number (a string tag mapped by mistake) has nothing to store.
    if (!bad && value === null) continue;
    readings.push({
      mappingId: mapping.id, instrumentId: mapping.instrument_id, measuredAtMs, ...(measuredAtMicros > 0 ? { measuredAtMicros } : {}), value,
      quality: good ? null : unsignedQualityCode(status.value), historical: false,
    });
  }
  return readings;
}

function identityOf(connection: OpcuaConnection, secret: string | null): UserIdentityInfo {
  const { settings } = connection;
  switch (settings.user_identity) {
    case 'certificate': {
      if (!settings.user_certificate_pem) throw new Error('the connection signs in with a user certificate but has none');
      if (!secret) throw new Error("the connection signs in with a user certificate but has no private key");
      return {
        type: UserTokenType.Certificate,
        certificateData: userCertificateDer(settings.user_certificate_pem),
        keyOperations: crypto_utils.keyOperationsFromPrivateKey(crypto_utils.makePrivateKeyFromPem(secret)),
      };
    }
    case 'username':
      return { type: UserTokenType.UserName, userName: settings.username ?? '', password: secret ?? '' };
    default:
      return { type: UserTokenType.Anonymous };
  }
}

/** The server's status code in a node-opcua error ("... BadIdentityTokenRejected (0x80210000)"), or null. */
function statusCodeIn(message: string): string | null {
  return /\b(Bad[A-Za-z]+)\b/.exec(message)?.[1] ?? null;
}

/** What a refused sign-in means for the connection's identity, and what the admin can do about it. */
function signInRefusal(connection: OpcuaConnection, error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const code = statusCodeIn(message);
  const { settings } = connection;
  const because = code ?? message.split('\n')[0]!.slice(0, 200);
  const identityNames = { anonymous: 'anonymous', username: 'user name', certificate: 'user certificate' } as const;
  // node-opcua's own words when the endpoint lists no token policy of the identity's kind.
  if (/Cannot find \w+ user token policy/i.test(message)) {
    return `The server's endpoint offers no ${identityNames[settings.user_identity]} sign-in: choose another user identity, or ask for it to be enabled on the server.`;
  }
  if (settings.user_identity === 'certificate') {
    const who = settings.user_certificate?.subject ? `the user certificate ${settings.user_certificate.subject} (thumbprint ${settings.user_certificate.thumbprint})` : 'the user certificate';
    if (code === 'BadUserAccessDenied') return `The server recognised ${who} but denies it access (BadUserAccessDenied): give that user access on the server.`;
    if (code === 'BadIdentityTokenInvalid' || code === 'BadIdentityTokenRejected' || code?.startsWith('BadCertificate')) {
      return `The server refused ${who} (${code}): add the certificate to the server's trusted user certificates, or check that it has not expired or been revoked.`;
    }
    if (code === 'BadUserSignatureInvalid') return `The server refused the signature made with the private key (BadUserSignatureInvalid): the key may not belong to ${who}.`;
    return `Sign-in with ${who} failed: ${because}`;
  }
  if (settings.user_identity === 'username') {
    if (code === 'BadUserAccessDenied' || code === 'BadIdentityTokenRejected' || code === 'BadIdentityTokenInvalid') {
      return `The server refused user ${settings.username ?? ''} (${code}): check the username and password.`;
    }
    return `Sign-in as ${settings.username ?? ''} failed: ${because}`;
  }
  if (code === 'BadIdentityTokenInvalid' || code === 'BadIdentityTokenRejected' || code === 'BadUserAccessDenied') {
    return `The server does not allow anonymous sign-in (${code}): sign in with a username or a user certificate.`;
  }
  return `Anonymous sign-in failed: ${because}`;
}

function dataTypeName(value: unknown): string | null {
  if (!value || typeof value !== 'object' || !('namespace' in value) || !('value' in value)) return null;
  const { namespace, value: id } = value as { namespace: number; value: unknown };
  if (namespace === 0 && typeof id === 'number' && DataType[id]) return DataType[id];
  return String(value);
}

function sampleText(dataValue: DataValue | undefined): string | null {
  if (!dataValue || !dataValue.statusCode.isGood() || dataValue.value?.value === null || dataValue.value?.value === undefined) return null;
  const value: unknown = dataValue.value.value;
  const text = typeof value === 'object' ? JSON.stringify(value) : String(value);
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

/** Mappings by the canonical form of their node id ("ns=2;s=BR1.pH"), as the server's notifications name it. */
function mappingsByNode(mappings: IntegrationMapping[]): Map<string, IntegrationMapping[]> {
  const byNode = new Map<string, IntegrationMapping[]>();
  for (const mapping of mappings) {
    const key = resolveNodeId(mapping.source).toString();
    byNode.set(key, [...(byNode.get(key) ?? []), mapping]);
  }
  return byNode;
}

const isProperty = (reference: ReferenceDescription) => reference.referenceTypeId.value === ReferenceTypeIds.HasProperty && reference.referenceTypeId.namespace === 0;

/** The OPC UA source factory; tests shorten the wait before a refused sign-in is tried again. */
export function opcuaSourceFactory(options: { signInRetryMs: number } = { signInRetryMs: SIGN_IN_RETRY_MS }): SourceFactory {
  return (connection, secret, initialMappings, status, log) => createSource(connection, secret, initialMappings, status, log, options.signInRetryMs);
}

export const createOpcuaSource: SourceFactory = opcuaSourceFactory();

function createSource(...[connection, secret, initialMappings, status, log, signInRetryMs]: [...Parameters<SourceFactory>, number]): ConnectorSource {
  if (connection.kind !== 'opcua') throw new Error(`not an OPC UA connection: ${connection.kind}`);
  const settings = connection.settings;
  const client = OPCUAClient.create({
    applicationName: 'Bioprocess connector',
    endpointMustExist: false,
    securityMode: SECURITY_MODES[settings.security_mode],
    securityPolicy: SECURITY_POLICIES[settings.security_policy],
    keepSessionAlive: true,
    // Retries forever, backing off to 10 s: a plant server that is down for maintenance comes back.
    connectionStrategy: { initialDelay: 500, maxDelay: 10_000, maxRetry: Number.MAX_SAFE_INTEGER },
    requestedSessionTimeout: 60_000,
  });
  let byNode = mappingsByNode(initialMappings);
  let session: ClientSession | null = null;
  let subscription: ClientSubscription | null = null;
  let group: ClientMonitoredItemGroup | null = null;
  let monitoredNodeIds: string[] = [];
  let deliver: ((readings: SourceReading[]) => Promise<void>) | null = null;
  let stopped = false;
  let signInRetry: NodeJS.Timeout | null = null;
  let pending: SourceReading[] = [];
  let flushScheduled = false;
  // Deliveries are chained so readings reach the buffer in the order the server sent them.
  let delivering: Promise<void> = Promise.resolve();

  client.on('backoff', (count, delay) => {
    if (count === 1 || count % 10 === 0) status.error(`Cannot reach ${connection.endpoint_url} (attempt ${count}); retrying in ${Math.round(delay / 1000)} s`);
    status.disconnected('connecting');
  });
  client.on('connection_lost', () => status.disconnected('connection lost'));
  client.on('start_reconnection', () => status.disconnected('reconnecting'));
  client.on('after_reconnection', (error) => {
    if (error) status.error(`Reconnection failed: ${error.message}`);
    else status.connected();
  });

  const flush = () => {
    flushScheduled = false;
    const batch = pending;
    pending = [];
    if (batch.length === 0 || !deliver) return;
    const target = deliver;
    delivering = delivering.then(() => target(batch)).catch((error: unknown) => {
      status.error(`Readings could not be buffered: ${error instanceof Error ? error.message : String(error)}`);
      log.error({ err: error, connectionId: connection.id }, 'OPC UA readings could not be buffered');
    });
  };

  const onChange = (nodeId: string, dataValue: DataValue) => {
    status.message();
    const readings = readingsOf(byNode.get(nodeId) ?? [], dataValue, Date.now());
    if (readings.length === 0) return;
    pending.push(...readings);
    // One publish response brings many items' changes in one tick: they become one batch.
    if (!flushScheduled) {
      flushScheduled = true;
      setImmediate(flush);
    }
  };

  const monitor = async () => {
    if (!subscription) return;
    const nodeIds = [...byNode.keys()].sort();
    if (nodeIds.join('\n') === monitoredNodeIds.join('\n')) return;
    if (group) {
      await group.terminate().catch((error: unknown) => log.warn({ err: error, connectionId: connection.id }, 'OPC UA monitored items could not be removed'));
      group = null;
    }
    monitoredNodeIds = nodeIds;
    if (nodeIds.length === 0) return;
    const created = ClientMonitoredItemGroup.create(
      subscription,
      nodeIds.map((nodeId) => ({ nodeId, attributeId: AttributeIds.Value })),
      // A new source timestamp is a new reading even when the value repeats: the server's default
      // trigger (status or value changed) would leave a steady tag's readings out.
      {
        samplingInterval: SAMPLING_INTERVAL_MS, discardOldest: false, queueSize: QUEUE_SIZE,
        filter: new DataChangeFilter({ trigger: DataChangeTrigger.StatusValueTimestamp, deadbandType: DeadbandType.None }),
      },
      TimestampsToReturn.Both,
    );
    created.on('changed', (item, dataValue) => onChange(item.itemToMonitor.nodeId.toString(), dataValue));
    created.on('err', (message) => status.error(`Monitored items: ${message}`));
    await new Promise<void>((resolve, reject) => {
      created.once('initialized', () => resolve());
      created.once('err', (message) => reject(new Error(message)));
    });
    // A node that does not exist on the server is refused item by item; the rest are monitored.
    created.monitoredItems.forEach((item, index) => {
      const result = item.statusCode;
      if (result && !result.isGood()) status.error(`Node ${nodeIds[index]}: ${result.name}`);
    });
    group = created;
  };

  const retrySignIn = () => {
    if (stopped) return;
    signInRetry = setTimeout(() => {
      signInRetry = null;
      open().catch((error: unknown) => status.error(`${(error as Error).message} Trying again every ${Math.round(signInRetryMs / 1000)} s.`));
    }, signInRetryMs);
  };

  /** Connects, signs in, subscribes; a refused sign-in is reported (thrown) and tried again later. */
  const open = async () => {
    await client.connect(connection.endpoint_url);
    if (stopped) return;
    try {
      session = await client.createSession(identityOf(connection, secret));
    } catch (error) {
      // The secure channel would stay open otherwise; the next attempt opens its own.
      await client.disconnect().catch(() => undefined);
      log.warn({ connectionId: connection.id, reason: error instanceof Error ? error.message : String(error) }, 'OPC UA sign-in refused');
      retrySignIn();
      throw new Error(signInRefusal(connection, error), { cause: error });
    }
    if (stopped) return;
    session.on('session_closed', () => status.disconnected('session closed'));
    subscription = await session.createSubscription2({
      requestedPublishingInterval: PUBLISHING_INTERVAL_MS,
      requestedLifetimeCount: LIFETIME_COUNT,
      requestedMaxKeepAliveCount: MAX_KEEP_ALIVE_COUNT,
      maxNotificationsPerPublish: 10_000,
      publishingEnabled: true,
      priority: 10,
    });
    await monitor();
    status.connected();
  };

  const source: ConnectorSource = {
    async start(onReadings) {
      deliver = onReadings;
      await open();
    },

    async browse(nodeId) {
      if (!session) throw new Error(`Not connected to ${connection.endpoint_url} yet`);
      const parent = nodeId ?? OBJECTS_FOLDER;
      const browseChildren = (ids: string[]) => session!.browse(ids.map((id) => ({
        nodeId: id,
        referenceTypeId: 'HierarchicalReferences',
        includeSubtypes: true,
        browseDirection: BrowseDirection.Forward,
        nodeClassMask: NodeClassMask.Object | NodeClassMask.Variable,
        resultMask: 0x3f,
      })));
      const [top] = await browseChildren([parent]);
      if (!top || !top.statusCode.isGood()) throw new Error(`Node ${parent}: ${top?.statusCode.name ?? 'not found'}`);
      const children = (top.references ?? []).filter((reference) => !isProperty(reference));
      if (children.length === 0) return [];
      const childIds = children.map((reference) => reference.nodeId.toString());
      const grandchildren = await browseChildren(childIds);
      const variables = children.map((reference, index) => ({ reference, index })).filter(({ reference }) => reference.nodeClass === NodeClass.Variable);
      // Everything a variable's row shows comes from one read: its value (the sample), data type and units.
      const unitNodes = new Map<number, string>();
      for (const { index } of variables) {
        const property = (grandchildren[index]?.references ?? []).find((reference) => isProperty(reference) && reference.browseName.name === 'EngineeringUnits');
        if (property) unitNodes.set(index, property.nodeId.toString());
      }
      const reads = [
        ...variables.flatMap(({ reference }) => [
          { nodeId: reference.nodeId, attributeId: AttributeIds.Value },
          { nodeId: reference.nodeId, attributeId: AttributeIds.DataType },
        ]),
        ...[...unitNodes.values()].map((id) => ({ nodeId: id, attributeId: AttributeIds.Value })),
      ];
      const values = reads.length > 0 ? await session.read(reads) : [];
      const unitValues = values.slice(variables.length * 2);
      const unitByIndex = new Map<number, string | null>();
      [...unitNodes.keys()].forEach((index, position) => {
        const information = unitValues[position]?.value?.value as { displayName?: { text?: string | null } } | null | undefined;
        unitByIndex.set(index, information?.displayName?.text || null);
      });
      const variablePosition = new Map(variables.map(({ index }, position) => [index, position]));
      return children.map((reference, index): BrowseItem => {
        const position = variablePosition.get(index);
        const nested = (grandchildren[index]?.references ?? []).filter((child) => !isProperty(child));
        return {
          id: childIds[index]!,
          name: reference.displayName.text ?? reference.browseName.name ?? childIds[index]!,
          kind: reference.nodeClass === NodeClass.Variable ? 'variable' : 'folder',
          unit: unitByIndex.get(index) ?? null,
          dataType: position === undefined ? null : dataTypeName(values[position * 2 + 1]?.value?.value),
          hasChildren: nested.length > 0,
          sample: position === undefined ? null : sampleText(values[position * 2]),
        };
      });
    },

    async updateMappings(next) {
      byNode = mappingsByNode(next);
      await monitor();
    },

    async stop() {
      stopped = true;
      if (signInRetry) clearTimeout(signInRetry);
      flush();
      await delivering;
      try {
        if (group) await group.terminate().catch(() => undefined);
        if (subscription) await subscription.terminate().catch(() => undefined);
        if (session) await session.close().catch(() => undefined);
      } finally {
        await client.disconnect();
      }
    },
  };
  return source;
};

/**
 * The MQTT source: subscribes to the mapped topic filters with QoS 1 in a persistent session
 * (clean=false, a stable client id), so the broker keeps what arrives while the connector is down and
 * sends it again on reconnect. A message is acknowledged (PUBACK) only after its readings are on disk.
 *
 * mqtt.js reads one incoming packet at a time and sends its PUBACK as soon as `handleMessage` calls
 * back, so waiting there for `onReadings` would cost one disk sync per message (about 250 messages a
 * second here). Instead `handleMessage` calls back at once and the PUBACK is held until the message's
 * readings are durable: messages arriving meanwhile (up to the broker's in-flight window) share one
 * sync, and the PUBACKs leave in order. A PUBACK held across a reconnection is dropped rather than sent
 * on the new connection: the broker sends that message again, and its readings land on the same keys.
 *
 * For browsing, it also subscribes to `#` at QoS 0 (nothing of it is queued while the connector is
 * away) and keeps the topics seen in the last 10 minutes with a sample payload.
 */
import mqtt, { type IClientOptions, type MqttClient, type IPublishPacket, type Packet } from 'mqtt';
import { MQTT_BROWSE_WINDOW_MS, type IntegrationMapping, type MqttConnection } from '@bioprocess/shared/integrations';
import type { BrowseItem, ConnectorSource, SourceFactory, SourceReading } from '../source.ts';
import { convertMessage, samplePayload, SparkplugAliases } from './mqtt-payloads.ts';

/** Topics kept for browsing; a broker with more distinct topics in 10 minutes shows the latest ones. */
const BROWSE_TOPICS_MAX = 5_000;
const DISCOVERY_FILTER = '#';

type SendPacket = (packet: Packet, callback?: (error?: Error) => void, ...rest: unknown[]) => void;

/** The client id of a connection's persistent session: the configured one, else one derived from its id. */
export function mqttClientId(connection: MqttConnection): string {
  return connection.settings.client_id ?? `bioprocess-connection-${connection.id}`;
}

export const createMqttSource: SourceFactory = (connection, secret, initialMappings, status, log) => {
  if (connection.kind !== 'mqtt') throw new Error(`not an MQTT connection: ${connection.kind}`);
  let mappings: IntegrationMapping[] = initialMappings;
  let client: MqttClient | null = null;
  const aliases = new SparkplugAliases();
  const seen = new Map<string, { atMs: number; sample: string; dataType: string }>();

  const filtersOf = (list: IntegrationMapping[]) => [...new Set(list.map((mapping) => mapping.source))];

  const remember = (topic: string, payload: Buffer, nowMs: number) => {
    const previous = seen.get(topic);
    // A sample per topic every few seconds is plenty, and decoding every message would cost the feed.
    if (previous && nowMs - previous.atMs < 5_000) { previous.atMs = nowMs; return; }
    seen.delete(topic);
    seen.set(topic, { atMs: nowMs, ...samplePayload(topic, payload) });
    if (seen.size > BROWSE_TOPICS_MAX) seen.delete(seen.keys().next().value!);
  };

  const subscribe = (filters: string[]) => new Promise<void>((resolve, reject) => {
    if (!client || filters.length === 0) return resolve();
    client.subscribe(filters.map((topic) => ({ topic, qos: 1 as const })).reduce<Record<string, { qos: 1 }>>((all, item) => ({ ...all, [item.topic]: { qos: item.qos } }), {}), (error, granted) => {
      if (error) return reject(error);
      const refused = (granted ?? []).filter((grant) => grant.qos === 128).map((grant) => grant.topic);
      if (refused.length > 0) status.error(`The broker refused the subscription to ${refused.join(', ')}`);
      resolve();
    });
  });

  const source: ConnectorSource = {
    async start(onReadings: (readings: SourceReading[]) => Promise<void>) {
      const tls = connection.settings.tls;
      const options: IClientOptions = {
        clientId: mqttClientId(connection),
        clean: false,
        protocolVersion: 4,
        keepalive: 30,
        reconnectPeriod: 1_000,
        connectTimeout: 10_000,
        resubscribe: true,
        username: connection.settings.username ?? undefined,
        password: secret ?? undefined,
        rejectUnauthorized: tls.reject_unauthorized,
        ...(tls.ca_pem ? { ca: tls.ca_pem } : {}),
      };
      client = mqtt.connect(connection.endpoint_url, options);
      client.on('connect', (connack) => {
        status.connected();
        log.info({ connectionId: connection.id, sessionPresent: connack.sessionPresent }, 'MQTT connected');
        // A broker that lost the session (restarted without persistence) needs the subscriptions again.
        if (!connack.sessionPresent) void subscribe(filtersOf(mappings)).catch((error: Error) => status.error(`Subscribing failed: ${error.message}`));
      });
      client.on('close', () => status.disconnected('the broker closed the connection'));
      client.on('offline', () => status.disconnected('the broker cannot be reached'));
      client.on('error', (error) => { status.error(`MQTT: ${error.message}`); });
      const current = client;
      const heldAcks = new Map<number, { durable: Promise<void>; stream: unknown }>();
      const internals = current as unknown as { _sendPacket: SendPacket };
      const sendPacket = internals._sendPacket.bind(current);
      internals._sendPacket = (packet, callback, ...rest) => {
        const held = packet.cmd === 'puback' && packet.messageId !== undefined ? heldAcks.get(packet.messageId) : undefined;
        if (!held || packet.cmd !== 'puback') return sendPacket(packet, callback, ...rest);
        heldAcks.delete(packet.messageId!);
        held.durable.then(() => {
          if (current.stream === held.stream && current.connected) sendPacket(packet, callback, ...rest);
          else callback?.();
        }, () => callback?.());
      };
      current.handleMessage = (packet: IPublishPacket, callback: (error?: Error) => void) => {
        const receivedAtMs = Date.now();
        const payload = Buffer.isBuffer(packet.payload) ? packet.payload : Buffer.from(packet.payload);
        status.message();
        remember(packet.topic, payload, receivedAtMs);
        const converted = convertMessage(packet.topic, payload, mappings, receivedAtMs, aliases);
        for (const problem of converted.problems) status.error(problem);
        if (converted.readings.length === 0) return callback();
        const durable = onReadings(converted.readings);
        if (packet.qos > 0 && packet.messageId !== undefined) heldAcks.set(packet.messageId, { durable, stream: current.stream });
        durable.catch((error: unknown) => {
          // Not acknowledged: the broker sends it again once the connection is made anew.
          status.error(`Storing readings failed: ${(error as Error).message}`);
          current.stream?.destroy();
        });
        callback();
      };
      await new Promise<void>((resolve) => {
        const ready = () => {
          Promise.all([
            subscribe(filtersOf(mappings)),
            // A mapping of '#' itself keeps its QoS 1: subscribing again at QoS 0 would replace it.
            filtersOf(mappings).includes(DISCOVERY_FILTER) ? Promise.resolve() : new Promise<void>((done) => client!.subscribe(DISCOVERY_FILTER, { qos: 0 }, () => done())),
          ]).then(() => resolve(), (error: Error) => { status.error(`Subscribing failed: ${error.message}`); resolve(); });
        };
        if (client!.connected) ready();
        else client!.once('connect', ready);
      });
    },

    async browse(nodeId) {
      const cutoff = Date.now() - MQTT_BROWSE_WINDOW_MS;
      const items: BrowseItem[] = [];
      for (const [topic, entry] of seen) {
        if (entry.atMs < cutoff || (nodeId && !topic.startsWith(nodeId))) continue;
        items.push({ id: topic, name: topic, kind: 'topic', unit: null, dataType: entry.dataType, hasChildren: false, sample: entry.sample });
      }
      return items.sort((a, b) => a.id.localeCompare(b.id));
    },

    async updateMappings(next) {
      const before = new Set(filtersOf(mappings));
      const after = new Set(filtersOf(next));
      mappings = next;
      await subscribe([...after].filter((filter) => !before.has(filter)));
      const removed = [...before].filter((filter) => !after.has(filter) && filter !== DISCOVERY_FILTER);
      if (client && removed.length > 0) await new Promise<void>((resolve) => client!.unsubscribe(removed, () => resolve()));
      if (client && before.has(DISCOVERY_FILTER) && !after.has(DISCOVERY_FILTER)) {
        await new Promise<void>((resolve) => client!.subscribe(DISCOVERY_FILTER, { qos: 0 }, () => resolve()));
      }
    },

    async stop() {
      const current = client;
      client = null;
      if (current) await new Promise<void>((resolve) => current.end(false, {}, () => resolve()));
    },
  };
  return source;
};

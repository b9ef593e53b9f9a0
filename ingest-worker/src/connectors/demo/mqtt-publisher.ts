/**
 * The demo's MQTT side of the same bioreactor, as lab devices publish: an off-gas analyser posting JSON
 * (`<root>/<reactor>/offgas`: {"time": ISO 8601, "co2": %, "o2": %}) and an edge gateway speaking
 * Sparkplug B (`spBv1.0/<group>/DDATA/<edge>/<reactor>`, metrics OD600 and AirFlow with their own
 * timestamps, after the NBIRTH and DBIRTH that announce them). Published at QoS 1 once a second.
 */
import mqtt, { type MqttClient } from 'mqtt';
import { get as sparkplugFor } from 'sparkplug-payload';
import type { LiveReading } from './live-fed-batch.ts';

const sparkplug = sparkplugFor('spBv1.0')!;

export interface DemoMqttPublisherOptions {
  url: string;
  /** Root of the JSON topic tree. */
  topicRoot: string;
  sparkplugGroup: string;
  edgeNode?: string;
  reactors: Array<{ name: string; read: (timeMs: number) => LiveReading }>;
  intervalMs?: number;
  onError?: (error: Error) => void;
}

export interface DemoMqttPublisher {
  jsonTopic(reactor: string): string;
  sparkplugTopic(reactor: string): string;
  /** Publishes one round now (the timer does it every interval). */
  publishNow(): Promise<void>;
  stop(): Promise<void>;
}

export const SPARKPLUG_METRICS = [
  { name: 'OD600', tag: 'opticalDensity' },
  { name: 'AirFlow', tag: 'airFlow' },
] as const;

export async function startDemoMqttPublisher(options: DemoMqttPublisherOptions): Promise<DemoMqttPublisher> {
  const edgeNode = options.edgeNode ?? 'demo-gateway';
  const jsonTopic = (reactor: string) => `${options.topicRoot}/${reactor}/offgas`;
  const sparkplugTopic = (reactor: string) => `spBv1.0/${options.sparkplugGroup}/DDATA/${edgeNode}/${reactor}`;
  // Sparkplug's sequence number runs 0-255 over every message of the edge node.
  let seq = 0;
  const nextSeq = () => {
    const value = seq;
    seq = (seq + 1) % 256;
    return value;
  };
  const client: MqttClient = await mqtt.connectAsync(options.url, {
    clientId: `bioprocess-demo-${process.pid}-${Math.random().toString(16).slice(2, 8)}`,
    reconnectPeriod: 2_000,
    connectTimeout: 10_000,
  });
  client.on('error', (error) => options.onError?.(error));

  const birth = async () => {
    const now = Date.now();
    seq = 0;
    await client.publishAsync(`spBv1.0/${options.sparkplugGroup}/NBIRTH/${edgeNode}`, Buffer.from(sparkplug.encodePayload({
      timestamp: now, seq: nextSeq(), metrics: [{ name: 'bdSeq', type: 'UInt64', value: 0, timestamp: now }],
    })), { qos: 1 });
    for (const reactor of options.reactors) {
      const reading = reactor.read(now);
      await client.publishAsync(`spBv1.0/${options.sparkplugGroup}/DBIRTH/${edgeNode}/${reactor.name}`, Buffer.from(sparkplug.encodePayload({
        timestamp: now, seq: nextSeq(),
        metrics: SPARKPLUG_METRICS.map(({ name, tag }) => ({ name, type: 'Double' as const, value: reading[tag], timestamp: now })),
      })), { qos: 1 });
    }
  };
  // A broker restart loses the births; a Sparkplug host needs them again to know the metrics.
  client.on('connect', () => void birth().catch((error: Error) => options.onError?.(error)));
  await birth();

  const publishNow = async () => {
    const now = Date.now();
    for (const reactor of options.reactors) {
      const reading = reactor.read(now);
      await client.publishAsync(jsonTopic(reactor.name), JSON.stringify({
        time: new Date(now).toISOString(), co2: reading.exhaustCo2, o2: reading.exhaustO2,
      }), { qos: 1 });
      await client.publishAsync(sparkplugTopic(reactor.name), Buffer.from(sparkplug.encodePayload({
        timestamp: now, seq: nextSeq(),
        metrics: SPARKPLUG_METRICS.map(({ name, tag }) => ({ name, type: 'Double' as const, value: reading[tag], timestamp: now })),
      })), { qos: 1 });
    }
  };
  const timer = setInterval(() => {
    if (client.connected) publishNow().catch((error: Error) => options.onError?.(error));
  }, options.intervalMs ?? 1000);

  return {
    jsonTopic,
    sparkplugTopic,
    publishNow,
    async stop() {
      clearInterval(timer);
      await client.endAsync();
    },
  };
}

/**
 * The demo's plant side: the live culture follows the demo seed's fed-batch model at the wall clock,
 * and the MQTT publisher posts the off-gas JSON and the Sparkplug B gateway's metrics to the real
 * broker (127.0.0.1:1883) in the shapes the demo seed's mappings read.
 */
import { afterAll, describe, expect, it } from 'vitest';
import mqtt from 'mqtt';
import { get as sparkplugFor } from 'sparkplug-payload';
import { simulateFedBatch } from '@bioprocess/shared/fed-batch-simulator';
import { LiveFedBatch } from '../src/connectors/demo/live-fed-batch.ts';
import { startDemoMqttPublisher } from '../src/connectors/demo/mqtt-publisher.ts';

const BROKER = process.env.MQTT_URL ?? 'mqtt://127.0.0.1:1883';
const HOUR = 3_600_000;

describe('live fed-batch', () => {
  it('reads the seed\'s model at its one-minute steps and between them', () => {
    const start = Date.UTC(2026, 0, 1);
    const model = simulateFedBatch({ startMs: start, durationHours: 30, seed: 1 });
    const live = new LiveFedBatch({ batchStartMs: start });
    const step = model.temperature.findIndex(([ts]) => ts === start + 20 * HOUR);
    expect(live.at(start + 20 * HOUR).temperature).toBe(model.temperature[step]![1]);
    expect(live.at(start + 20 * HOUR).ph).toBe(model.ph[step]![1]);
    const [a, b] = [model.dissolvedO2[step]![1], model.dissolvedO2[step + 1]![1]];
    expect(live.at(start + 20 * HOUR + 30_000).dissolvedO2).toBeCloseTo((a + b) / 2, 3);
    // Far past what it computed first, the model is extended rather than held at its last value.
    expect(live.at(start + 60 * HOUR).feedRate).toBeGreaterThan(0);
  });
});

describe('demo MQTT publisher', () => {
  const root = `h4-demo-test-${process.pid}-${Date.now().toString(36)}`;
  const subscriber = mqtt.connect(BROKER, { clientId: `${root}-sub` });
  afterAll(async () => {
    await subscriber.endAsync();
  });

  it('posts the off-gas JSON and the Sparkplug B metrics with their timestamps', async () => {
    if (!subscriber.connected) await new Promise<void>((resolve) => subscriber.once('connect', () => resolve()));
    const received = new Map<string, Buffer>();
    subscriber.on('message', (topic, payload) => { if (!received.has(topic)) received.set(topic, payload); });
    await subscriber.subscribeAsync([`${root}/#`, `spBv1.0/${root}/#`], { qos: 1 });
    const live = new LiveFedBatch({ batchStartMs: Date.now() - 20 * HOUR });
    const publisher = await startDemoMqttPublisher({
      url: BROKER, topicRoot: root, sparkplugGroup: root, intervalMs: 60_000, reactors: [{ name: 'BR-01', read: (timeMs) => live.at(timeMs) }],
    });
    try {
      await publisher.publishNow();
      for (let attempt = 0; attempt < 100 && received.size < 4; attempt += 1) await new Promise((resolve) => setTimeout(resolve, 50));
      expect([...received.keys()].sort()).toEqual([
        `${root}/BR-01/offgas`,
        `spBv1.0/${root}/DBIRTH/demo-gateway/BR-01`,
        `spBv1.0/${root}/DDATA/demo-gateway/BR-01`,
        `spBv1.0/${root}/NBIRTH/demo-gateway`,
      ]);
      const json = JSON.parse(received.get(`${root}/BR-01/offgas`)!.toString()) as { time: string; co2: number; o2: number };
      expect(Number.isNaN(Date.parse(json.time))).toBe(false);
      expect(json.co2).toBeGreaterThan(0);
      expect(json.o2).toBeGreaterThan(10);
      const data = sparkplugFor('spBv1.0')!.decodePayload(received.get(`spBv1.0/${root}/DDATA/demo-gateway/BR-01`)!);
      expect(data.metrics!.map((metric) => [metric.name, metric.type, typeof metric.value])).toEqual([['OD600', 'Double', 'number'], ['AirFlow', 'Double', 'number']]);
      expect(Number(data.metrics![0]!.timestamp)).toBe(Date.parse(json.time));
    } finally {
      await publisher.stop();
    }
  });
});

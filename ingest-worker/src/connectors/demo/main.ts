/**
 * The demo integrations process (`npm start`, the end-to-end stack): the simulated OPC UA bioreactor
 * controller and the MQTT publisher of the same culture. It stands for plant equipment, so it never
 * stops the product: a port in use or an absent broker is logged and the rest keeps running.
 */
import { baseEnvSchema, loadEnvOrExit } from '@bioprocess/shared/server/config';
import { createLogger } from '@bioprocess/shared/server/logger';
import { closeOnSignals } from '@bioprocess/shared/server/shutdown';
import { LiveFedBatch } from './live-fed-batch.ts';
import { startDemoOpcuaServer, type DemoOpcuaServer } from './opcua-bioreactor-server.ts';
import { startDemoMqttPublisher, type DemoMqttPublisher } from './mqtt-publisher.ts';

const env = loadEnvOrExit(baseEnvSchema);
const logger = createLogger('integrations-demo', env.LOG_LEVEL);

/** The demo seed's running fermentation was inoculated 20 hours before the seed: the live culture is as old. */
const DEMO_RUN_AGE_MS = 20 * 3_600_000;
const culture = new LiveFedBatch({ batchStartMs: Date.now() - DEMO_RUN_AGE_MS });
const reactors = [{ name: 'BR-01', read: (timeMs: number) => culture.at(timeMs) }];

let opcua: DemoOpcuaServer | null = null;
let publisher: DemoMqttPublisher | null = null;

try {
  opcua = await startDemoOpcuaServer({ port: env.DEMO_OPCUA_PORT, reactors });
  logger.info({ endpoint: opcua.endpointUrl }, 'demo OPC UA server listening');
} catch (error) {
  logger.warn({ err: error, port: env.DEMO_OPCUA_PORT }, 'demo OPC UA server could not start (set DEMO_OPCUA_PORT to a free port)');
}

try {
  publisher = await startDemoMqttPublisher({
    url: env.DEMO_MQTT_URL, topicRoot: env.DEMO_MQTT_TOPIC_ROOT, sparkplugGroup: env.DEMO_SPARKPLUG_GROUP, reactors,
    onError: (error) => logger.warn({ err: error }, 'demo MQTT publisher'),
  });
  logger.info({ json: publisher.jsonTopic('BR-01'), sparkplug: publisher.sparkplugTopic('BR-01') }, 'demo MQTT publisher started');
} catch (error) {
  logger.warn({ err: error, url: env.DEMO_MQTT_URL }, 'demo MQTT publisher could not reach the broker');
}

// Keeps the process (and so the stack) alive even when neither side could start.
const keepAlive = setInterval(() => undefined, 60_000);
closeOnSignals('integrations-demo', logger, async () => {
  clearInterval(keepAlive);
  await Promise.allSettled([opcua?.stop(), publisher?.stop()]);
}, 10_000);

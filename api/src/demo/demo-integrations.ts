/**
 * The demo organisation's integrations: a connection to the demo's simulated OPC UA bioreactor
 * controller and one to the MQTT broker the demo publisher posts to, mapped to the probes of the
 * running fermentation's bioreactor, so a fresh `npm start` shows readings arriving live. Created
 * through the integrations endpoints as the demo admin, like an admin on the Integrations page.
 */
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';

/** What the demo seed knows of the running fermentation: its bioreactor's instruments by key. */
export interface LiveDemoBioreactor { instruments: Map<string, number> }

/** The demo controller's node ids (ns=1 is the server's own namespace) by instrument key. */
const OPCUA_NODES: Record<string, string> = {
  temperature: 'ns=1;s=BR-01.Temperature',
  ph: 'ns=1;s=BR-01.pH',
  dissolvedO2: 'ns=1;s=BR-01.DissolvedOxygen',
  stirRate: 'ns=1;s=BR-01.Agitation',
  feedRate: 'ns=1;s=BR-01.FeedRate',
};

type Inject = (method: 'POST', url: string, payload: unknown) => Promise<{ id: number }>;

export async function seedDemoIntegrations(app: App, deps: AppDeps, authorization: string, reactor: LiveDemoBioreactor): Promise<void> {
  const env = deps.env;
  const inject: Inject = async (method, url, payload) => {
    const response = await app.inject({ method, url, headers: { authorization }, payload: payload as Record<string, unknown> });
    if (response.statusCode >= 300) throw new Error(`${url} answered ${response.statusCode}: ${response.body.slice(0, 300)}`);
    return response.json() as { id: number };
  };
  const instrument = (key: string) => {
    const id = reactor.instruments.get(key);
    if (!id) throw new Error(`the demo bioreactor has no ${key} instrument`);
    return id;
  };

  const opcua = await inject('POST', '/api/v1/integrations/connections', {
    kind: 'opcua', name: 'BR-01 controller (OPC UA)', endpoint_url: `opc.tcp://127.0.0.1:${env.DEMO_OPCUA_PORT}/bioprocess-demo`,
    settings: { security_mode: 'None', security_policy: 'None', username: null },
  });
  await inject('POST', `/api/v1/integrations/connections/${opcua.id}/mappings/bulk`, {
    mappings: Object.entries(OPCUA_NODES).map(([key, source]) => ({ source, instrument_id: instrument(key), bad_quality: 'missing' })),
  });

  const mqtt = await inject('POST', '/api/v1/integrations/connections', {
    kind: 'mqtt', name: 'Lab MQTT broker', endpoint_url: env.DEMO_MQTT_URL,
    settings: { client_id: `bioprocess-demo-${env.DEMO_MQTT_TOPIC_ROOT}`, username: null, tls: { reject_unauthorized: true, ca_pem: null } },
  });
  const offgas = `${env.DEMO_MQTT_TOPIC_ROOT}/BR-01/offgas`;
  const gateway = `spBv1.0/${env.DEMO_SPARKPLUG_GROUP}/DDATA/demo-gateway/BR-01`;
  await inject('POST', `/api/v1/integrations/connections/${mqtt.id}/mappings/bulk`, {
    mappings: [
      { source: offgas, payload_format: 'json', value_path: '$.co2', timestamp_path: '$.time', instrument_id: instrument('exhaustCo2') },
      { source: offgas, payload_format: 'json', value_path: '$.o2', timestamp_path: '$.time', instrument_id: instrument('exhaustO2') },
      { source: gateway, payload_format: 'sparkplug', value_path: 'OD600', instrument_id: instrument('opticalDensity') },
      { source: gateway, payload_format: 'sparkplug', value_path: 'AirFlow', instrument_id: instrument('airFlow') },
    ],
  });
}

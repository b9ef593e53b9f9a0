/**
 * A simulated bioreactor controller speaking OPC UA, as plant equipment does: Objects/Bioreactors/<name>
 * holds five AnalogItems (temperature, pH, dissolved oxygen, agitation, feed rate) with their
 * EngineeringUnits, updated once a second from the live fed-batch with the source timestamp of the
 * update. The demo runs it beside the product; the tests run it in-process to connect the OPC UA source to.
 */
import os from 'node:os';
import path from 'node:path';
import { OPCUAServer } from 'node-opcua-server';
import { OPCUACertificateManager } from 'node-opcua-certificate-manager';
import { makeEUInformation } from 'node-opcua-data-access';
import { DataType, StatusCodes, Variant, type StatusCode } from 'node-opcua-client';
import type { LiveReading, LiveTag } from './live-fed-batch.ts';

export interface DemoTag { tag: LiveTag; browseName: string; displayName: string; unit: ReturnType<typeof makeEUInformation>; range: { low: number; high: number } }

/** The controller's tags, named as a Sartorius or Eppendorf controller's OPC UA server names them. */
export const DEMO_TAGS: DemoTag[] = [
  { tag: 'temperature', browseName: 'Temperature', displayName: 'TIC-101 Temperature', unit: makeEUInformation('CEL', '°C', 'degree Celsius'), range: { low: 0, high: 60 } },
  { tag: 'ph', browseName: 'pH', displayName: 'AIC-102 pH', unit: makeEUInformation('Q30', 'pH', 'pH (potential of hydrogen)'), range: { low: 0, high: 14 } },
  { tag: 'dissolvedO2', browseName: 'DissolvedOxygen', displayName: 'AIC-103 Dissolved O2', unit: makeEUInformation('P1', '%', 'percent'), range: { low: 0, high: 100 } },
  { tag: 'stirRate', browseName: 'Agitation', displayName: 'SIC-104 Agitation', unit: makeEUInformation('RPM', 'r/min', 'revolutions per minute'), range: { low: 0, high: 1500 } },
  { tag: 'feedRate', browseName: 'FeedRate', displayName: 'FIC-105 Feed rate', unit: makeEUInformation('41', 'mL/min', 'millilitre per minute'), range: { low: 0, high: 10 } },
];

export interface DemoOpcuaServerOptions {
  /** 0 picks a free port. */
  port: number;
  /** The bioreactors the server offers, each with its own values (by default one, BR-01). */
  reactors?: Array<{ name: string; read: (timeMs: number) => LiveReading }>;
  /** Accepted user names and passwords. */
  users?: Record<string, string>;
  /** Whether anonymous sessions are allowed (by default they are). */
  allowAnonymous?: boolean;
  /** Where the server keeps its certificate and the client certificates it trusts. */
  pkiFolder?: string;
  /**
   * Where the server keeps the user certificates it trusts for sign-in (trusted/) and those it refused
   * (rejected/, where an admin finds a new one to trust); by default beside pkiFolder.
   */
  userPkiFolder?: string;
  /** User certificates (DER) trusted at start, as an admin would move them from rejected/ to trusted/. */
  trustedUserCertificates?: Buffer[];
  updateIntervalMs?: number;
}

export interface DemoOpcuaServer {
  endpointUrl: string;
  /** Node ids of the tags, by reactor name then tag. */
  nodeIds: Map<string, Map<LiveTag, string>>;
  /** Sets a tag's value and status now (tests use it for bad quality and exact values). */
  set(reactor: string, tag: LiveTag, value: number, status?: StatusCode, sourceTimestamp?: Date): void;
  /** Stops the periodic updates; tests then drive the values with set(). */
  pause(): void;
  /** Trusts a user certificate (DER) from now on, as an admin moving it from rejected/ to trusted/ does. */
  trustUserCertificate(certificate: Buffer): Promise<void>;
  stop(): Promise<void>;
}

/** The node id of a reactor's tag: readable, stable across restarts, so mappings survive one. */
export function demoNodeId(namespaceIndex: number, reactor: string, browseName: string): string {
  return `ns=${namespaceIndex};s=${reactor}.${browseName}`;
}

export async function startDemoOpcuaServer(options: DemoOpcuaServerOptions): Promise<DemoOpcuaServer> {
  const pkiFolder = options.pkiFolder ?? path.join(os.tmpdir(), 'bioprocess-demo-opcua-pki');
  const serverCertificateManager = new OPCUACertificateManager({ rootFolder: pkiFolder, automaticallyAcceptUnknownCertificate: true });
  // A store of its own: user certificates are trusted one by one, never automatically.
  const userCertificateManager = new OPCUACertificateManager({ rootFolder: options.userPkiFolder ?? `${pkiFolder}-users`, automaticallyAcceptUnknownCertificate: false });
  await userCertificateManager.initialize();
  for (const certificate of options.trustedUserCertificates ?? []) await userCertificateManager.trustCertificate(certificate);
  const users = options.users ?? {};
  const server = new OPCUAServer({
    port: options.port,
    hostname: '127.0.0.1',
    resourcePath: '/bioprocess-demo',
    serverCertificateManager,
    userCertificateManager,
    allowAnonymous: options.allowAnonymous ?? true,
    userManager: { isValidUser: (userName: string, password: string) => users[userName] !== undefined && users[userName] === password },
    buildInfo: { productName: 'Bioprocess demo bioreactor controller', manufacturerName: 'Bioprocess platform demo' },
  });
  await server.initialize();
  const addressSpace = server.engine.addressSpace!;
  const namespace = addressSpace.getOwnNamespace();
  const folder = namespace.addFolder(addressSpace.rootFolder.objects, { browseName: 'Bioreactors' });
  const reactors = options.reactors ?? [];
  const variables = new Map<string, Map<LiveTag, ReturnType<typeof namespace.addAnalogDataItem>>>();
  const nodeIds = new Map<string, Map<LiveTag, string>>();
  for (const reactor of reactors) {
    const object = namespace.addObject({ organizedBy: folder, browseName: reactor.name });
    const byTag = new Map<LiveTag, ReturnType<typeof namespace.addAnalogDataItem>>();
    const idsByTag = new Map<LiveTag, string>();
    for (const tag of DEMO_TAGS) {
      const nodeId = demoNodeId(namespace.index, reactor.name, tag.browseName);
      const variable = namespace.addAnalogDataItem({
        componentOf: object, nodeId, browseName: tag.browseName, displayName: tag.displayName,
        dataType: 'Double', engineeringUnits: tag.unit, engineeringUnitsRange: tag.range, minimumSamplingInterval: 100,
      });
      byTag.set(tag.tag, variable);
      idsByTag.set(tag.tag, nodeId);
    }
    variables.set(reactor.name, byTag);
    nodeIds.set(reactor.name, idsByTag);
  }

  const set = (reactor: string, tag: LiveTag, value: number, status: StatusCode = StatusCodes.Good, sourceTimestamp = new Date()) => {
    const variable = variables.get(reactor)?.get(tag);
    if (!variable) throw new Error(`no tag ${tag} on ${reactor}`);
    variable.setValueFromSource(new Variant({ dataType: DataType.Double, value }), status, sourceTimestamp);
  };
  const update = () => {
    const now = Date.now();
    for (const reactor of reactors) {
      const reading = reactor.read(now);
      for (const { tag } of DEMO_TAGS) set(reactor.name, tag, reading[tag], StatusCodes.Good, new Date(now));
    }
  };
  update();
  let timer: NodeJS.Timeout | null = setInterval(update, options.updateIntervalMs ?? 1000);
  await server.start();
  const endpointUrl = `opc.tcp://127.0.0.1:${server.endpoints[0]!.port}/bioprocess-demo`;
  return {
    endpointUrl,
    nodeIds,
    set,
    pause() {
      if (timer) clearInterval(timer);
      timer = null;
    },
    trustUserCertificate: (certificate) => userCertificateManager.trustCertificate(certificate),
    async stop() {
      if (timer) clearInterval(timer);
      timer = null;
      await server.shutdown(0);
    },
  };
}

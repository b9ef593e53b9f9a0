/** The source of each kind of connection. */
import type { IntegrationKind } from '@bioprocess/shared/integrations';
import type { SourceFactory } from '../source.ts';
import { createMqttSource } from './mqtt.ts';
import { createOpcuaSource } from './opcua.ts';

export const SOURCE_FACTORIES: Record<IntegrationKind, SourceFactory> = {
  mqtt: createMqttSource,
  opcua: createOpcuaSource,
};

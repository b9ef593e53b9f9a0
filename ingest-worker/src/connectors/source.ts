/**
 * The contract between the connector and its sources (one module per protocol under sources/): a
 * source subscribes to its server, turns what arrives into readings of mapped instruments, and answers
 * browse requests. Buffering, delivery, leases and status live in the connector, not in a source.
 */
import type { Logger } from '@bioprocess/shared/server/logger';
import type { IntegrationConnection, IntegrationMapping } from '@bioprocess/shared/integrations';

/**
 * A reading of a mapped instrument. `quality`: the source's code when it did not call the reading good
 * (an OPC UA StatusCode's value, a Sparkplug Quality), as an unsigned 32-bit integer (quality-codes.ts).
 * `measuredAtMicros`: the microseconds within `measuredAtMs` when the source's time has them (OPC UA's
 * 100 ns DateTime); absent otherwise.
 */
export interface SourceReading {
  mappingId: number; instrumentId: number; measuredAtMs: number; measuredAtMicros?: number; value: number | null; quality: number | null; historical: boolean;
}
export interface BrowseItem { id: string; name: string; kind: 'folder' | 'variable' | 'topic'; unit: string | null; dataType: string | null; hasChildren: boolean; sample: string | null }
export interface SourceStatusSink { connected(): void; disconnected(reason: string): void; error(message: string): void; message(): void }
export interface ConnectorSource {
  /** Starts delivering readings; resolves once subscribed. onReadings must be awaited before acknowledging the source where the protocol allows. */
  start(onReadings: (readings: SourceReading[]) => Promise<void>): Promise<void>;
  browse(nodeId: string | null): Promise<BrowseItem[]>;
  /** Applies a changed mapping list without reconnecting where possible. */
  updateMappings(mappings: IntegrationMapping[]): Promise<void>;
  stop(): Promise<void>;
}
export type SourceFactory = (connection: IntegrationConnection, secret: string | null, mappings: IntegrationMapping[], status: SourceStatusSink, log: Logger) => ConnectorSource;

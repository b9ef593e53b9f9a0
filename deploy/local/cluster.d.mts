/** Types of cluster.mjs for the TypeScript that imports it (the fault matrix, the bench, the cluster tests). */
export declare const CLUSTER_NAME: string;
export declare const ZOOKEEPER_NODES: ReadonlyArray<{ id: number; clientPort: number; peerPort: number; electionPort: number }>;
export declare const CLICKHOUSE_NODES: ReadonlyArray<{ n: number; shard: number; replica: string; httpPort: number; tcpPort: number; interserverPort: number }>;
export declare const API_PORTS: readonly number[];
export declare const PROXY_PORT: number;
/** The fault matrix's own Redis, which its `redis` fault kills. */
export declare const FAULTS_REDIS_PORT: number;

export interface ClusterServices {
  dataDir: string;
  /** kill -9 (or `signal`) a service: zk1..zk3, ch1..ch4. */
  kill(name: string, signal?: NodeJS.Signals): Promise<void>;
  restart(name: string): Promise<void>;
  stop(): Promise<void>;
}
export declare function startClusterServices(options?: { dataDir?: string | undefined; fresh?: boolean }): Promise<ClusterServices>;

export interface ClusterProduct {
  names: string[];
  proxyUrl: string;
  apiUrls: string[];
  /** kill -9 a product process: api1, api2, ingest1, ingest2, audit, export. */
  kill(name: string): Promise<void>;
  restart(name: string): Promise<void>;
  stop(): Promise<void>;
}
export declare function startClusterProduct(env: NodeJS.ProcessEnv, options?: { compiled?: boolean; apis?: number; ingestWorkers?: number; others?: boolean }): Promise<ClusterProduct>;

export declare function clusterEnvironment(
  services: { DATABASE_URL: string; REDIS_URL: string },
  options?: { database?: string; queuePrefix?: string; extra?: Record<string, string> },
): NodeJS.ProcessEnv & { DATABASE_URL: string; CLICKHOUSE_URL: string; CLICKHOUSE_DATABASE: string; CLICKHOUSE_CLUSTER: string };

/** Answers a ZooKeeper four-letter command (mntr, srvr); null when the node does not answer. */
export declare function zooKeeperCommand(port: number, command: string, timeoutMs?: number): Promise<string | null>;

/** Kills -9 whatever cluster service this process started and still runs. */
export declare function killSpawnedServices(): void;

/**
 * Configuration from environment variables, parsed once at start-up. A missing or malformed
 * variable stops the process with its name (ConfigError), never with a stack trace from deep inside.
 */
import { isIP } from 'node:net';
import { availableParallelism } from 'node:os';
import { z } from 'zod';

const booleanFromString = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((value) => value === 'true' || value === '1' || value === 'yes');

const positiveInt = z.coerce.number().int().positive();
const nonNegativeInt = z.coerce.number().int().min(0);

/** proxy-addr's names for address ranges. */
const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

function isAddressOrRange(entry: string): boolean {
  if (NAMED_RANGES.has(entry)) return true;
  const [address, prefix, ...rest] = entry.split('/');
  const family = isIP(address ?? '');
  if (family === 0 || rest.length > 0) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

/**
 * Which proxies may say who the client is (X-Forwarded-For): none unless named. A hop count trusts
 * that many proxies in front of the api; a list trusts those addresses, CIDR ranges or proxy-addr's
 * names (loopback, linklocal, uniquelocal). `true` (trust anyone) is refused: any client could then
 * write the address that the audit trail and the rate limits record.
 */
export const trustProxySchema = z
  .string()
  .optional()
  .transform((value, context): false | number | string[] => {
    const text = value?.trim() ?? '';
    if (text === '' || text === 'false' || text === '0') return false;
    if (/^\d+$/.test(text)) return Number(text);
    const entries = text.split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
    const bad = entries.filter((entry) => !isAddressOrRange(entry));
    if (entries.length === 0 || bad.length > 0) {
      context.addIssue({ code: 'custom', message: `expected a hop count or a comma-separated list of proxy addresses or CIDR ranges, got ${bad.join(', ') || 'nothing'}` });
      return z.NEVER;
    }
    return entries;
  });

export const baseEnvSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).default('postgres://postgres@127.0.0.1:5432/bioprocess'),
  REDIS_URL: z.url({ protocol: /^rediss?$/ }).default('redis://127.0.0.1:6379'),
  CLICKHOUSE_URL: z.url({ protocol: /^https?$/ }).default('http://127.0.0.1:8123'),
  CLICKHOUSE_DATABASE: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/).default('bioprocess'),
  // A cluster named in ClickHouse's remote_servers: migrations run ON CLUSTER with replicated local
  // tables and Distributed tables over them (docs/scale.md). Unset: the single-node schema.
  CLICKHOUSE_CLUSTER: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/).optional(),
  // Replicas of a shard that must hold an insert before it is acknowledged (cluster only; 0 or 1: the
  // replica written to). 2 keeps a write through the loss of a server but stops writes while one is down.
  CLICKHOUSE_INSERT_QUORUM: nonNegativeInt.default(0),
  // Namespaces every BullMQ key so tests (and several stacks on one Redis) never see each other's jobs.
  QUEUE_PREFIX: z.string().regex(/^[A-Za-z0-9_:-]+$/).default('bioprocess'),
  // Spool folder shared by the api (writes uploads) and the ingest-worker (reads them).
  UPLOAD_DIR: z.string().default('.data/uploads'),
  CSV_MAX_BYTES: positiveInt.default(2 * 1024 * 1024 * 1024),
  CSV_MAX_ROWS: positiveInt.default(50_000_000),
  // Read limits that keep reading a CSV linear in its size (shared/src/csv/limits.ts): the widest
  // header, and the longest line or quoted field running over lines.
  CSV_MAX_COLUMNS: positiveInt.default(10_000),
  CSV_MAX_LINE_BYTES: positiveInt.default(1024 * 1024),
  // Folder of finished export files, shared by the export-worker (writes them) and the api (serves them).
  EXPORT_DIR: z.string().default('.data/exports'),
  // How long a finished export file stays downloadable before the sweep removes it: long enough to
  // fetch it after a weekend, short enough that copies of the organisation's data do not pile up.
  EXPORT_FILE_TTL_HOURS: z.coerce.number().positive().default(72),
  // Encrypts integration secrets at rest (shared/src/server/integration-secrets.ts): 64 hex digits or
  // base64 of 32 bytes. The api needs it to store a connection, the connector to use one; npm start
  // generates one into .data when it is not set.
  INTEGRATIONS_SECRET_KEY: z.string().regex(/^([0-9a-fA-F]{64}|[A-Za-z0-9+/]{43}=)$/, 'expected 64 hex digits or base64 of 32 bytes').optional(),
  // The demo integrations (npm start, the end-to-end stack): a simulated OPC UA bioreactor controller and
  // an MQTT publisher run beside the product, and the demo seed maps them to the running demo run.
  DEMO_INTEGRATIONS: booleanFromString.default(false),
  DEMO_OPCUA_PORT: z.coerce.number().int().min(1).max(65535).default(4841),
  DEMO_MQTT_URL: z.url({ protocol: /^mqtts?$/ }).default('mqtt://127.0.0.1:1883'),
  // Roots of the demo's topics, so several stacks can share one broker without reading each other's.
  DEMO_MQTT_TOPIC_ROOT: z.string().regex(/^[A-Za-z0-9_-]+$/).default('bioprocess-demo'),
  DEMO_SPARKPLUG_GROUP: z.string().regex(/^[A-Za-z0-9_-]+$/).default('BioprocessDemo'),
});

export const apiEnvSchema = baseEnvSchema.extend({
  PORT: z.coerce.number().int().min(1).max(65535).default(8080),
  HOST: z.string().default('0.0.0.0'),
  PUBLIC_URL: z.url().default('http://localhost:8080'),
  CONSOLE_DIST: z.string().default('console/dist'),
  SESSION_TTL_HOURS: z.coerce.number().positive().default(12),
  LOGIN_MAX_FAILURES: positiveInt.default(5),
  LOGIN_WINDOW_MINUTES: z.coerce.number().positive().default(15),
  // Failures of one account from all addresses together within LOGIN_WINDOW_MINUTES past which each
  // further attempt waits for a delay that doubles from LOGIN_ACCOUNT_DELAY_MIN_SECONDS up to
  // LOGIN_ACCOUNT_DELAY_MAX_SECONDS: far above LOGIN_MAX_FAILURES (which blocks one address), so only a
  // distributed guessing campaign meets it, and it slows that campaign without ever locking the owner out.
  LOGIN_ACCOUNT_MAX_FAILURES: positiveInt.default(100),
  LOGIN_ACCOUNT_DELAY_MIN_SECONDS: positiveInt.default(1),
  LOGIN_ACCOUNT_DELAY_MAX_SECONDS: positiveInt.default(60),
  RESET_TOKEN_TTL_MINUTES: z.coerce.number().positive().default(60),
  SIGNUP_ENABLED: booleanFromString.default(true),
  SMTP_URL: z.url({ protocol: /^smtps?$/ }).optional(),
  // Keeps mail in the dev_outbox table, readable by a superuser at /api/v1/dev/outbox. Off unless
  // switched on (npm start does), and refused under NODE_ENV=production (see the refinement below).
  DEV_OUTBOX: booleanFromString.default(false),
  MAIL_FROM: z.string().default('Bioprocess Platform <no-reply@localhost>'),
  SUPERUSER_EMAIL: z.email().optional(),
  SUPERUSER_PASSWORD: z.string().optional(),
  TRUST_PROXY: trustProxySchema,
  // Slow or stalled clients: the whole request (body included) must arrive within REQUEST_TIMEOUT_MS
  // and its headers within HEADERS_TIMEOUT_MS (else 408); an idle keep-alive connection closes after
  // KEEP_ALIVE_TIMEOUT_MS; a connection silent both ways for CONNECTION_TIMEOUT_MS closes (longer
  // than the longest answer the api makes a client wait for, a `?wait=true` of five minutes).
  REQUEST_TIMEOUT_MS: positiveInt.default(300_000),
  HEADERS_TIMEOUT_MS: positiveInt.default(30_000),
  KEEP_ALIVE_TIMEOUT_MS: positiveInt.default(72_000),
  CONNECTION_TIMEOUT_MS: nonNegativeInt.default(360_000),
  // CSV uploads per organisation (every user and API key of it together).
  UPLOAD_RATE_LIMIT_PER_MINUTE: positiveInt.default(5),
  UPLOADS_IN_FLIGHT_PER_ORGANIZATION: positiveInt.default(4),
  UPLOAD_SPOOL_BYTES_PER_ORGANIZATION: positiveInt.default(4 * 1024 * 1024 * 1024),
  // Per-address limits on the account calls, counted in Redis so every api process shares them.
  // Generous enough for an office behind one NAT address, far too few for guessing passwords.
  RATE_LIMIT_WINDOW_MINUTES: z.coerce.number().positive().default(15),
  RATE_LIMIT_SIGN_IN_PER_ADDRESS: positiveInt.default(100),
  RATE_LIMIT_SIGNUP_PER_ADDRESS: positiveInt.default(10),
  RATE_LIMIT_PASSWORD_RESET_PER_ADDRESS: positiveInt.default(20),
  RATE_LIMIT_BAD_TOKENS_PER_ADDRESS: positiveInt.default(50),
  // Reset mails one account may receive per hour; further requests answer the same and send nothing.
  FORGOT_PASSWORD_MAILS_PER_HOUR: positiveInt.default(3),
  // Invitation mails (new or resent) per organisation, and per organisation and address, within a day
  // (429 beyond); an address receives at most INVITATION_MAILS_PER_ADDRESS_PER_DAY from all
  // organisations together, further invitations are recorded but not mailed (no answer tells).
  INVITATIONS_PER_ORGANIZATION_PER_DAY: positiveInt.default(50),
  INVITATIONS_PER_ADDRESS_PER_DAY: positiveInt.default(3),
  INVITATION_MAILS_PER_ADDRESS_PER_DAY: positiveInt.default(5),
  INVITATION_TTL_HOURS: z.coerce.number().positive().default(7 * 24),
  // Worker threads that parse bulk posts (default: one fewer than the cores, at least one).
  BULK_PARSE_THREADS: positiveInt.default(() => Math.max(1, availableParallelism() - 1)),
  // How long a commit of small bulk posts waits at most for the posts already being read, so that a
  // wave of feeds' posts shares one statement, delivery and worker job (0: commit at once).
  BULK_BATCH_WAIT_MS: z.coerce.number().int().min(0).max(1_000).default(10),
  // Bytes of bulk post bodies taken in at once; further posts wait their turn before their body is read.
  BULK_BYTES_IN_FLIGHT: positiveInt.default(32 * 1024 * 1024),
  // At most this much of that budget held by one organisation (default: half of it).
  BULK_BYTES_PER_ORGANIZATION: positiveInt.optional(),
  // Points a time-series export streams in one answer; a larger request becomes an export job (written
  // to EXPORT_DIR by the export-worker, downloaded once ready), so a download never holds a connection for hours.
  EXPORT_STREAM_MAX_POINTS: positiveInt.default(5_000_000),
  // Streamed answers (exports, time-series reads) one organisation may have open at once, and the bytes
  // of them the api may hold unsent for it; one more answers 429. A client that stops reading keeps its
  // answer's last chunks in the api's memory, so unread streams are bounded per organisation.
  STREAMS_PER_ORGANIZATION: positiveInt.default(4),
  STREAM_BUFFERED_BYTES_PER_ORGANIZATION: positiveInt.default(8 * 1024 * 1024),
  // A streamed answer whose client takes nothing for this long is ended (its slot freed), instead of
  // holding its slot and memory until the connection timeout.
  STREAM_STALL_TIMEOUT_MS: z.coerce.number().int().min(10).default(30_000),
  // Live charts (docs/live.md): event streams one organisation may hold open on one api process, the
  // instruments one stream follows, the points an event carries itself (a larger write tells the
  // client to read its range), and how long a stream lasts before the client reconnects (and so
  // authenticates again, resuming with Last-Event-ID).
  LIVE_CONNECTIONS_PER_ORGANIZATION: positiveInt.default(200),
  LIVE_INSTRUMENTS_PER_CONNECTION: positiveInt.default(1_000),
  LIVE_INLINE_POINTS: positiveInt.default(5_000),
  LIVE_CONNECTION_MAX_MS: z.coerce.number().int().min(1_000).default(10 * 60_000),
  // Export jobs one organisation may have queued or running at once; more answer 429. Each holds an
  // export-worker for minutes, so one organisation cannot queue enough to delay everybody else's.
  EXPORT_MAX_ACTIVE_JOBS: positiveInt.default(3),
  // The audit relay's sleep between passes when no notification wakes it (a safety net: commits notify).
  AUDIT_RELAY_POLL_MS: z.coerce.number().int().min(10).default(1_000),
  // Longest wait before an audit event still in the outbox is handed to the queue again (the queue
  // may have lost it); re-sends start after 5 s and double up to this.
  AUDIT_RELAY_RESEND_MS: z.coerce.number().int().min(100).default(30_000),
  SEED_DEMO: booleanFromString.default(false),
  DEMO_EMAIL: z.email().default('scientist@demo.bioprocess.local'),
  DEMO_PASSWORD: z.string().default('Demo-Bioprocess1!'),
}).refine((env) => !(env.DEV_OUTBOX && env.NODE_ENV === 'production'), {
  // The outbox holds live reset and invitation links: a production server must never keep them.
  path: ['DEV_OUTBOX'],
  message: 'must not be true when NODE_ENV=production (the outbox keeps password reset links)',
});

export const workerEnvSchema = baseEnvSchema.extend({
  WORKER_CONCURRENCY: positiveInt.default(2),
});

export const auditWorkerEnvSchema = workerEnvSchema.extend({
  // Ed25519 private key (PKCS#8 PEM) that signs the audit chain's checkpoints; without it no checkpoint
  // is written (the chain is still linked and verifiable, but a full rewrite would go unnoticed).
  AUDIT_CHECKPOINT_KEY: z.string().min(1).optional(),
  // A chain is checkpointed after this many new entries, and at least this often while it grows.
  AUDIT_CHECKPOINT_EVERY: positiveInt.default(1_000),
  AUDIT_CHECKPOINT_INTERVAL_MS: z.coerce.number().int().min(1_000).default(3_600_000),
  // A killed audit-worker's events are taken up by another after this long (BullMQ lock duration).
  AUDIT_LOCK_MS: z.coerce.number().int().min(1_000).default(30_000),
});
export type AuditWorkerEnv = z.infer<typeof auditWorkerEnvSchema>;

/** The alert-worker's own settings, read beside the api's (it runs the api's envelope and mail code). */
export const alertWorkerEnvSchema = z.object({
  // An announcement taken by a worker that never acknowledged it (killed) is claimed by another after this long.
  ALERT_CLAIM_IDLE_MS: z.coerce.number().int().min(100).default(30_000),
  // How often no-data rules are checked: the lateness of a no-data alert beyond its period.
  ALERT_SILENCE_CHECK_MS: z.coerce.number().int().min(100).default(15_000),
  // How often due deliveries (and those held by quiet hours) are handed to the queue when no firing wakes the relay.
  ALERT_RELAY_MS: z.coerce.number().int().min(100).default(5_000),
  // Run the evaluator (off: this process only delivers).
  ALERT_EVALUATE: z.enum(['true', 'false']).default('true').transform((text) => text === 'true'),
});

export const ingestWorkerEnvSchema = workerEnvSchema.extend({
  // A crashed worker's job is resumed by another after this long (BullMQ lock duration).
  INGEST_LOCK_MS: z.coerce.number().int().min(1_000).default(30_000),
  // CSV uploads and range deletions of one organisation running at once across every ingest-worker: kept
  // below the slots of the queue `ingest`, so one organisation's slow uploads never hold them all while
  // another organisation's upload waits (shared/src/server/organization-slots.ts).
  INGEST_RUNNING_PER_ORGANIZATION: positiveInt.default(1),
  // Bulk chunks in progress at once (queue ingest-bulk); those waiting together share one ClickHouse insert
  // and one rollup pass. Above the 32 clients a line of feeds typically keeps in flight, so one pass
  // takes all their posts; a chunk holds at most about 2.5 MB of rows, which bounds the memory.
  INGEST_BULK_CONCURRENCY: z.coerce.number().int().min(1).max(256).default(48),
  // How long a job keeps retrying while a service it needs (ClickHouse, PostgreSQL) is down before it
  // fails with a message: long enough to ride out a restart or a maintenance window, short enough that
  // a sender learns the data was not written the same day. Fractions allowed (tests shorten it).
  INGEST_RETRY_MINUTES: z.coerce.number().positive().default(60),
  // The longest pause between two attempts of a failing job: what recovery after an outage can take.
  INGEST_BACKOFF_MAX_MS: z.coerce.number().int().min(100).default(30_000),
  // How often the reconciler queues again, from PostgreSQL, the unfinished jobs whose queue entry is gone.
  INGEST_RECONCILE_MS: z.coerce.number().int().min(100).default(5_000),
  // How often the sweeper removes what finished jobs left (spooled files, stored bulk data) and
  // delivers again, or fails, the jobs no live worker drives.
  INGEST_SWEEP_MS: z.coerce.number().int().min(100).default(60_000),
});

export const exportWorkerEnvSchema = workerEnvSchema.extend({
  // Exports written at once by one export-worker (each is one ClickHouse read and one file). Two, with
  // one export per organisation at a time (EXPORT_RUNNING_PER_ORGANIZATION): an organisation's long
  // export never holds the worker while another organisation's export waits.
  EXPORT_WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(32).default(2),
  // Exports of one organisation written at once across every export-worker (organization-slots.ts).
  EXPORT_RUNNING_PER_ORGANIZATION: positiveInt.default(1),
  // A killed worker's export is delivered again after this long (BullMQ lock duration).
  EXPORT_LOCK_MS: z.coerce.number().int().min(1_000).default(30_000),
  // How often the sweep removes expired and abandoned export files and delivers again the jobs Redis lost.
  EXPORT_SWEEP_MS: z.coerce.number().int().min(100).default(60_000),
});

export const connectorEnvSchema = baseEnvSchema.extend({
  // Where the connector posts readings (the bulk endpoint), with each connection's own API key.
  CONNECTOR_API_URL: z.url({ protocol: /^https?$/ }).default('http://127.0.0.1:8080'),
  // Store-and-forward buffers, one folder per connection. Connectors on one host share it, so a
  // connection that moves to another connector takes its unsent readings along.
  CONNECTOR_DATA_DIR: z.string().default('.data/connector'),
  // How often a connector reads the connections and their mappings, and claims free ones.
  CONNECTOR_POLL_MS: z.coerce.number().int().min(50).default(2_000),
  // A connection's lease: a killed connector's connections move to another after this long.
  CONNECTOR_LEASE_MS: z.coerce.number().int().min(500).default(15_000),
  // Readings per bulk post (the api records posts of up to 5,000 points in one statement).
  CONNECTOR_BATCH_POINTS: z.coerce.number().int().min(1).max(50_000).default(5_000),
  // The longest pause between two attempts to deliver while the api is away.
  CONNECTOR_RETRY_MAX_MS: z.coerce.number().int().min(50).default(10_000),
});

export type BaseEnv = z.infer<typeof baseEnvSchema>;
export type ConnectorEnv = z.infer<typeof connectorEnvSchema>;
export type ApiEnv = z.infer<typeof apiEnvSchema>;
export type WorkerEnv = z.infer<typeof workerEnvSchema>;
export type IngestWorkerConfig = z.infer<typeof ingestWorkerEnvSchema>;
export type ExportWorkerConfig = z.infer<typeof exportWorkerEnvSchema>;

/** One organisation's share of the bulk byte budget. */
export function bulkBytesPerOrganization(env: Pick<ApiEnv, 'BULK_BYTES_IN_FLIGHT' | 'BULK_BYTES_PER_ORGANIZATION'>): number {
  return Math.min(env.BULK_BYTES_IN_FLIGHT, env.BULK_BYTES_PER_ORGANIZATION ?? Math.max(1, Math.floor(env.BULK_BYTES_IN_FLIGHT / 2)));
}

export class ConfigError extends Error {}

export function parseEnv<S extends z.ZodType>(schema: S, source: NodeJS.ProcessEnv = process.env): z.infer<S> {
  // Empty strings mean "not set", as in most .env files.
  const cleaned = Object.fromEntries(Object.entries(source).filter(([, value]) => value !== ''));
  const result = schema.safeParse(cleaned);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`);
    throw new ConfigError(`Invalid configuration: ${problems.join('; ')}`);
  }
  return result.data;
}

/** Parses the environment or exits the process with a message naming the bad variable. */
export function loadEnvOrExit<S extends z.ZodType>(schema: S): z.infer<S> {
  try {
    return parseEnv(schema);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(78);
    }
    throw error;
  }
}

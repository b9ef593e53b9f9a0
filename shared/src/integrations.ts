/**
 * Wire contracts of integrations: connections to plant and lab data sources (an MQTT broker, an OPC UA
 * server) and the mappings that turn a topic or node into an instrument's series. The api validates and
 * documents its routes with these schemas, the connector parses what it loads with them and the console
 * parses what it receives, so they stay browser-safe (zod only).
 *
 * A connection's secret (password or private key) is written, never read: responses say `has_secret`.
 * Updates are partial: a field left out keeps its value, `secret: null` removes the stored secret.
 *
 * An OPC UA connection signs in as anonymous, with a user name (the secret is the password) or with an
 * X.509 user certificate (the certificate, public, is in its settings; the secret is its private key in
 * PEM). The api parses the PEMs with node:crypto on save; here they are only text.
 */
import { z } from 'zod';
import { entityIdSchema } from './entities.ts';
import { instrumentUnitProblem } from './instruments/units.ts';

export const INTEGRATION_KINDS = ['mqtt', 'opcua'] as const;
export type IntegrationKind = (typeof INTEGRATION_KINDS)[number];
export const PAYLOAD_FORMATS = ['json', 'sparkplug', 'number'] as const;
export type PayloadFormat = (typeof PAYLOAD_FORMATS)[number];
export const BAD_QUALITY_POLICIES = ['missing', 'drop'] as const;
export type BadQualityPolicy = (typeof BAD_QUALITY_POLICIES)[number];
export const OPCUA_SECURITY_MODES = ['None', 'Sign', 'SignAndEncrypt'] as const;
export type OpcuaSecurityMode = (typeof OPCUA_SECURITY_MODES)[number];
export const OPCUA_SECURITY_POLICIES = ['None', 'Basic256Sha256', 'Aes128_Sha256_RsaOaep', 'Aes256_Sha256_RsaPss'] as const;
export const OPCUA_USER_IDENTITIES = ['anonymous', 'username', 'certificate'] as const;
export type OpcuaUserIdentity = (typeof OPCUA_USER_IDENTITIES)[number];
export const CONNECTION_STATES = ['connected', 'connecting', 'disconnected', 'error', 'disabled'] as const;
export type ConnectionState = (typeof CONNECTION_STATES)[number];
export const BROWSE_ITEM_KINDS = ['folder', 'variable', 'topic'] as const;

/** 1 GiB: a day of 1,000 tags at 1 Hz fits many times over; the page lets an admin change it. */
export const BUFFER_LIMIT_DEFAULT_BYTES = 1024 ** 3;
export const BUFFER_LIMIT_MIN_BYTES = 1024 ** 2;
/** Far above a disk the connector would be given; keeps the number a safe integer. */
export const BUFFER_LIMIT_MAX_BYTES = 1024 ** 4;
/** A reactor's tags or a wildcard's topics fit; bounds one bulk request's transaction. */
export const MAPPINGS_PER_BULK_MAX = 1000;
/** How long the api waits for a connector to answer a browse. */
export const BROWSE_TIMEOUT_MS = 10_000;
/** MQTT topics seen within this window are offered by a browse. */
export const MQTT_BROWSE_WINDOW_MS = 10 * 60_000;

export const INTEGRATION_MESSAGES = {
  notFound: 'Connection not found',
  mappingNotFound: 'Mapping not found',
  duplicateName: 'A connection with this name already exists.',
  duplicateMapping: 'This source is already mapped to this instrument.',
  endpointScheme: (kind: IntegrationKind) =>
    kind === 'mqtt' ? 'Endpoint URL must start with mqtt:// or mqtts://.' : 'Endpoint URL must start with opc.tcp://.',
  endpointInvalid: 'Endpoint URL is not a valid URL.',
  kindChange: 'A connection cannot change its kind; create a new connection.',
  instrumentRequired: 'A mapping needs instrument_id or instrument (to create one), not both.',
  instrumentNotFound: 'Instrument not found',
  unitOperationNotFound: 'Unit operation not found',
  unitOperationWithoutEquipment: 'The unit operation has no equipment to attach the instrument to.',
  payloadFormatRequired: 'An MQTT mapping needs payload_format (json, sparkplug or number).',
  valuePathRequired: (format: PayloadFormat) =>
    format === 'sparkplug' ? 'A Sparkplug mapping needs value_path: the metric name.' : 'A JSON mapping needs value_path, such as $.temp.',
  opcuaPayloadFields: 'An OPC UA mapping has no payload_format, value_path or timestamp_path.',
  noConnector: 'No connector answered within 10 seconds; check that the connector is running.',
  browseFailed: (message: string) => `Browse failed: ${message}`,
  secretKeyMissing: 'INTEGRATIONS_SECRET_KEY is not set: connection secrets cannot be stored.',
  usernameRequired: 'A user name sign-in needs a username.',
  usernameWithoutUserNameIdentity: 'Username is only used when user_identity is username.',
  userCertificateRequired: 'A certificate sign-in needs user_certificate_pem: the user certificate in PEM.',
  userCertificateWithoutCertificateIdentity: 'User certificate is only used when user_identity is certificate.',
  userCertificateInvalid: 'User certificate is not a PEM certificate (-----BEGIN CERTIFICATE-----).',
  userCertificateNotRsa: (type: string) => `User certificate holds a ${type} key; OPC UA user certificates need an RSA key.`,
  userCertificateExpired: (date: string) => `User certificate expired on ${date}.`,
  userCertificateNotYetValid: (date: string) => `User certificate is not valid before ${date}.`,
  privateKeyRequired: "A certificate sign-in needs the certificate's private key in PEM as the secret.",
  privateKeyInvalid: 'Private key is not a PEM private key (-----BEGIN PRIVATE KEY----- or -----BEGIN RSA PRIVATE KEY-----).',
  privateKeyEncrypted: 'Private key is protected by a passphrase; give it unencrypted (the platform stores it encrypted).',
  privateKeyMismatch: "Private key does not match the user certificate's public key.",
  storedPrivateKeyUnreadable: 'The stored private key does not decrypt with INTEGRATIONS_SECRET_KEY; give the private key again.',
} as const;

const MQTT_SCHEMES = ['mqtt:', 'mqtts:'];
const OPCUA_SCHEMES = ['opc.tcp:'];

/** The problem with an endpoint URL for a kind of connection, or null when it is usable. */
export function endpointProblem(kind: IntegrationKind, url: string): string | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return INTEGRATION_MESSAGES.endpointInvalid;
  }
  const schemes = kind === 'mqtt' ? MQTT_SCHEMES : OPCUA_SCHEMES;
  if (!schemes.includes(parsed.protocol)) return INTEGRATION_MESSAGES.endpointScheme(kind);
  if (!parsed.hostname) return INTEGRATION_MESSAGES.endpointInvalid;
  // Credentials belong in the secret, which is encrypted; a URL is stored and shown as written.
  if (parsed.username || parsed.password) return 'Endpoint URL must not carry a user or password; use the username and password fields.';
  return null;
}

const optionalShortText = (label: string, max = 200) =>
  z.string({ error: `${label} must be text.` }).trim().max(max, `${label} must be at most ${max} characters.`)
    .nullable().optional().transform((value) => (value === '' || value === undefined ? null : value));

export const mqttSettingsSchema = z.object({
  /** The broker keeps a persistent session's messages by client id: a stable id is what makes a restart lose nothing. */
  client_id: optionalShortText('Client ID', 23 * 4),
  username: optionalShortText('Username'),
  tls: z.object({
    reject_unauthorized: z.boolean({ error: 'TLS verification must be true or false.' }).default(true),
    ca_pem: optionalShortText('CA certificate', 100_000),
  }).default({ reject_unauthorized: true, ca_pem: null }),
});
export type MqttSettings = z.infer<typeof mqttSettingsSchema>;

export const opcuaSettingsSchema = z.object({
  security_mode: z.enum(OPCUA_SECURITY_MODES, { error: `Security mode must be one of: ${OPCUA_SECURITY_MODES.join(', ')}.` }).default('None'),
  security_policy: z.enum(OPCUA_SECURITY_POLICIES, { error: `Security policy must be one of: ${OPCUA_SECURITY_POLICIES.join(', ')}.` }).default('None'),
  user_identity: z.enum(OPCUA_USER_IDENTITIES, { error: `User identity must be one of: ${OPCUA_USER_IDENTITIES.join(', ')}.` }).optional()
    .describe('How the connector signs in; when left out, username if a username is given, else anonymous'),
  username: optionalShortText('Username'),
  user_certificate_pem: optionalShortText('User certificate', 100_000).describe('The X.509 user certificate in PEM; its private key is the secret'),
}).transform((settings, context) => {
  // Rows and clients from before certificates existed said only a username, or nothing.
  const userIdentity: OpcuaUserIdentity = settings.user_identity ?? (settings.username ? 'username' : 'anonymous');
  const problem = (message: string, field: string) => context.addIssue({ code: 'custom', message, path: [field] });
  if (userIdentity === 'username' && !settings.username) problem(INTEGRATION_MESSAGES.usernameRequired, 'username');
  if (userIdentity !== 'username' && settings.username) problem(INTEGRATION_MESSAGES.usernameWithoutUserNameIdentity, 'username');
  if (userIdentity === 'certificate' && !settings.user_certificate_pem) problem(INTEGRATION_MESSAGES.userCertificateRequired, 'user_certificate_pem');
  if (userIdentity !== 'certificate' && settings.user_certificate_pem) problem(INTEGRATION_MESSAGES.userCertificateWithoutCertificateIdentity, 'user_certificate_pem');
  return { ...settings, user_identity: userIdentity };
});
export type OpcuaSettings = z.output<typeof opcuaSettingsSchema>;
export const OPCUA_SETTINGS_DEFAULT: OpcuaSettings = {
  security_mode: 'None', security_policy: 'None', user_identity: 'anonymous', username: null, user_certificate_pem: null,
};

const nameSchema = z.string({ error: 'Name is required.' }).trim().min(1, 'Name is required.').max(200, 'Name must be at most 200 characters.');
const endpointSchema = z.string({ error: 'Endpoint URL is required.' }).trim().min(1, 'Endpoint URL is required.').max(2000, 'Endpoint URL must be at most 2000 characters.');
const secretSchema = z.string({ error: 'Secret must be text.' }).max(100_000, 'Secret must be at most 100000 characters.').nullable().optional()
  .describe('Password (or private key in PEM); written only, never returned. null removes it, absent keeps it.');
const bufferLimitSchema = z.number({ error: 'Buffer limit must be a number of bytes.' }).int('Buffer limit must be a whole number of bytes.')
  .min(BUFFER_LIMIT_MIN_BYTES, `Buffer limit must be at least ${BUFFER_LIMIT_MIN_BYTES} bytes.`)
  .max(BUFFER_LIMIT_MAX_BYTES, `Buffer limit must be at most ${BUFFER_LIMIT_MAX_BYTES} bytes.`);

function withEndpointCheck<T extends z.ZodType<{ kind: IntegrationKind; endpoint_url: string }>>(schema: T) {
  return schema.superRefine((value, context) => {
    const problem = endpointProblem(value.kind, value.endpoint_url);
    if (problem) context.addIssue({ code: 'custom', message: problem, path: ['endpoint_url'] });
  });
}

const commonCreateFields = {
  name: nameSchema,
  endpoint_url: endpointSchema,
  secret: secretSchema,
  enabled: z.boolean({ error: 'Enabled must be true or false.' }).default(true),
  buffer_limit_bytes: bufferLimitSchema.default(BUFFER_LIMIT_DEFAULT_BYTES),
};

export const connectionCreateSchema = withEndpointCheck(z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('mqtt'), ...commonCreateFields, settings: mqttSettingsSchema.default({ client_id: null, username: null, tls: { reject_unauthorized: true, ca_pem: null } }) }),
  z.object({ kind: z.literal('opcua'), ...commonCreateFields, settings: opcuaSettingsSchema.default(OPCUA_SETTINGS_DEFAULT) }),
], { error: `Kind must be one of: ${INTEGRATION_KINDS.join(', ')}.` }));
export type ConnectionCreate = z.infer<typeof connectionCreateSchema>;

/** Settings are checked against the stored kind by the api, which knows it. */
export const connectionUpdateSchema = z.object({
  name: nameSchema.optional(),
  endpoint_url: endpointSchema.optional(),
  settings: z.record(z.string(), z.unknown()).optional().describe('The settings of the connection\'s kind, whole'),
  secret: secretSchema,
  enabled: z.boolean({ error: 'Enabled must be true or false.' }).optional(),
  buffer_limit_bytes: bufferLimitSchema.optional(),
  kind: z.enum(INTEGRATION_KINDS).optional().describe('Accepted only when unchanged'),
});
export type ConnectionUpdate = z.infer<typeof connectionUpdateSchema>;

const timestampOutput = z.string().describe('ISO 8601 date-time');
const connectionCommon = {
  id: entityIdSchema,
  organization_id: entityIdSchema,
  name: z.string(),
  endpoint_url: z.string(),
  has_secret: z.boolean(),
  enabled: z.boolean(),
  buffer_limit_bytes: z.number().int(),
  created_at: timestampOutput,
  updated_at: timestampOutput,
};
/** Settings as answered: what the input schemas produce, without their transforms (answers are encoded, not parsed). */
export const mqttSettingsOutputSchema = z.object({
  client_id: z.string().nullable(),
  username: z.string().nullable(),
  tls: z.object({ reject_unauthorized: z.boolean(), ca_pem: z.string().nullable() }),
});
/** What a stored user certificate says, so an admin can tell which one is set (read by the api from the PEM). */
export const opcuaUserCertificateSchema = z.object({
  subject: z.string(),
  issuer: z.string(),
  thumbprint: z.string().describe('SHA-1 of the DER certificate in hex, as OPC UA servers list trusted certificates'),
  not_before: timestampOutput,
  not_after: timestampOutput,
});
export type OpcuaUserCertificate = z.infer<typeof opcuaUserCertificateSchema>;
export const opcuaSettingsOutputSchema = z.object({
  security_mode: z.enum(OPCUA_SECURITY_MODES),
  security_policy: z.enum(OPCUA_SECURITY_POLICIES),
  user_identity: z.enum(OPCUA_USER_IDENTITIES),
  username: z.string().nullable(),
  user_certificate_pem: z.string().nullable(),
  user_certificate: opcuaUserCertificateSchema.nullable(),
});
export const integrationConnectionSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('mqtt'), ...connectionCommon, settings: mqttSettingsOutputSchema }),
  z.object({ kind: z.literal('opcua'), ...connectionCommon, settings: opcuaSettingsOutputSchema }),
]);
export type IntegrationConnection = z.infer<typeof integrationConnectionSchema>;
export type MqttConnection = Extract<IntegrationConnection, { kind: 'mqtt' }>;
export type OpcuaConnection = Extract<IntegrationConnection, { kind: 'opcua' }>;

// ---------------------------------------------------------------------------------------------
// Mappings
// ---------------------------------------------------------------------------------------------

const unitSchema = z.string({ error: 'Unit must be text.' }).trim().max(50, 'Unit must be at most 50 characters.')
  .refine((unit) => instrumentUnitProblem(unit) === null, { error: (issue) => instrumentUnitProblem(String(issue.input).trim()) ?? 'Unit is not valid.' })
  .nullable().optional().transform((value) => (value === '' || value === undefined ? null : value));
const pathSchema = (label: string) => z.string({ error: `${label} must be text.` }).trim().max(500, `${label} must be at most 500 characters.`)
  .nullable().optional().transform((value) => (value === '' || value === undefined ? null : value));

export const newInstrumentSchema = z.object({
  unit_operation_id: entityIdSchema.describe("The instrument is created on this unit operation's equipment"),
  name: nameSchema,
  unit: unitSchema,
  type: z.string().trim().min(1).max(64).optional().describe("An instrument type (default 'other')"),
});

const mappingFields = {
  source: z.string({ error: 'Source is required (a topic filter or node id).' }).trim().min(1, 'Source is required (a topic filter or node id).')
    .max(1000, 'Source must be at most 1000 characters.'),
  payload_format: z.enum(PAYLOAD_FORMATS, { error: `Payload format must be one of: ${PAYLOAD_FORMATS.join(', ')}.` }).nullable().optional()
    .transform((value) => value ?? null),
  value_path: pathSchema('Value path').describe('JSON path such as $.temp, or a Sparkplug metric name'),
  timestamp_path: pathSchema('Timestamp path').describe("JSON path to the reading's time; null takes the source's own timestamp"),
  unit: unitSchema,
  bad_quality: z.enum(BAD_QUALITY_POLICIES, { error: 'Bad quality must be missing or drop.' }).default('missing'),
};
export const mappingCreateSchema = z.object({
  ...mappingFields,
  instrument_id: entityIdSchema.nullable().optional(),
  instrument: newInstrumentSchema.nullable().optional(),
}).refine((value) => (value.instrument_id == null) !== (value.instrument == null), { error: INTEGRATION_MESSAGES.instrumentRequired });
export type MappingCreate = z.infer<typeof mappingCreateSchema>;

export const mappingBulkSchema = z.object({
  mappings: z.array(mappingCreateSchema).min(1, 'At least one mapping is required.')
    .max(MAPPINGS_PER_BULK_MAX, `At most ${MAPPINGS_PER_BULK_MAX} mappings at once.`),
});

export const mappingUpdateSchema = z.object({
  source: mappingFields.source.optional(),
  payload_format: z.enum(PAYLOAD_FORMATS, { error: `Payload format must be one of: ${PAYLOAD_FORMATS.join(', ')}.` }).nullable().optional(),
  value_path: z.string().trim().max(500, 'Value path must be at most 500 characters.').nullable().optional(),
  timestamp_path: z.string().trim().max(500, 'Timestamp path must be at most 500 characters.').nullable().optional(),
  unit: z.string().trim().max(50, 'Unit must be at most 50 characters.')
    .refine((unit) => instrumentUnitProblem(unit) === null, { error: (issue) => instrumentUnitProblem(String(issue.input).trim()) ?? 'Unit is not valid.' })
    .nullable().optional(),
  bad_quality: z.enum(BAD_QUALITY_POLICIES, { error: 'Bad quality must be missing or drop.' }).optional(),
  instrument_id: entityIdSchema.optional(),
});
export type MappingUpdate = z.infer<typeof mappingUpdateSchema>;

export const integrationMappingSchema = z.object({
  id: entityIdSchema,
  connection_id: entityIdSchema,
  organization_id: entityIdSchema,
  source: z.string(),
  payload_format: z.enum(PAYLOAD_FORMATS).nullable(),
  value_path: z.string().nullable(),
  timestamp_path: z.string().nullable(),
  instrument_id: entityIdSchema,
  unit: z.string().nullable(),
  bad_quality: z.enum(BAD_QUALITY_POLICIES),
  created_at: timestampOutput,
});
export type IntegrationMapping = z.infer<typeof integrationMappingSchema>;

/** The problem with a mapping's fields for its connection's kind, or null. */
export function mappingProblem(
  kind: IntegrationKind,
  mapping: { payload_format: PayloadFormat | null; value_path: string | null; timestamp_path: string | null },
): string | null {
  if (kind === 'opcua') {
    return mapping.payload_format || mapping.value_path || mapping.timestamp_path ? INTEGRATION_MESSAGES.opcuaPayloadFields : null;
  }
  if (!mapping.payload_format) return INTEGRATION_MESSAGES.payloadFormatRequired;
  if (mapping.payload_format !== 'number' && !mapping.value_path) return INTEGRATION_MESSAGES.valuePathRequired(mapping.payload_format);
  return null;
}

// ---------------------------------------------------------------------------------------------
// Status and browse
// ---------------------------------------------------------------------------------------------

export const connectionStatusSchema = z.object({
  state: z.enum(CONNECTION_STATES),
  last_message_at: z.string().nullable(),
  messages_per_minute: z.number(),
  points_per_minute: z.number(),
  errors: z.array(z.object({ at: z.string(), message: z.string() })),
  buffered_bytes: z.number(),
  buffer_limit_bytes: z.number(),
});
export type ConnectionStatus = z.infer<typeof connectionStatusSchema>;

export const browseRequestSchema = z.object({
  node_id: z.string().max(1000, 'Node id must be at most 1000 characters.').nullable().optional().transform((value) => value ?? null),
});
export const browseItemSchema = z.object({
  id: z.string(),
  name: z.string(),
  kind: z.enum(BROWSE_ITEM_KINDS),
  unit: z.string().nullable(),
  data_type: z.string().nullable(),
  has_children: z.boolean(),
  sample: z.string().nullable(),
});
export const browseResponseSchema = z.object({ items: z.array(browseItemSchema) });
export type BrowseResponse = z.infer<typeof browseResponseSchema>;

export const connectionIdParamsSchema = z.object({
  id: z.string().regex(/^[1-9]\d{0,14}$/, 'Invalid id').transform(Number),
});
export const mappingIdParamsSchema = z.object({
  id: z.string().regex(/^[1-9]\d{0,14}$/, 'Invalid id').transform(Number),
  mappingId: z.string().regex(/^[1-9]\d{0,14}$/, 'Invalid mapping id').transform(Number),
});

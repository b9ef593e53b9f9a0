/**
 * The MQTT converter: a message's payload and its mappings in, readings out. JSON payloads are read at
 * the mapping's path (`$.reactor.temp`, `$.values[0]`, or plain `reactor.temp`); Sparkplug B payloads
 * by metric name (aliases learnt from the edge node's and device's BIRTH); `number` payloads are the
 * number itself. A reading's time is, in order: the mapping's timestamp path, the Sparkplug metric's
 * (or payload's) timestamp, the moment the message arrived.
 *
 * Sparkplug's historical flag travels with the reading; a metric's `Quality` property other than 192
 * (OPC DA "good", as Ignition and most edge nodes write it) makes the reading bad quality: stored as
 * missing with its code, or dropped, per the mapping.
 */
import { createRequire } from 'node:module';
import type { IntegrationMapping } from '@bioprocess/shared/integrations';
import type { SourceReading } from '../source.ts';
import { unsignedQualityCode } from '../quality-codes.ts';

const require = createRequire(import.meta.url);
interface SparkplugMetric {
  name?: string | null;
  alias?: unknown;
  timestamp?: unknown;
  type?: string;
  value?: unknown;
  isNull?: boolean | null;
  isHistorical?: boolean | null;
  properties?: Record<string, { type?: string; value?: unknown }> | null;
}
export interface SparkplugPayload { timestamp?: unknown; metrics?: SparkplugMetric[]; seq?: unknown }
interface SparkplugCodec {
  decodePayload(bytes: Uint8Array): SparkplugPayload;
  encodePayload(payload: SparkplugPayload): Uint8Array;
}
// sparkplug-payload is CommonJS without types: its decoder is the one the Eclipse Tahu project publishes.
export const sparkplug = (require('sparkplug-payload') as { get(version: string): SparkplugCodec }).get('spBv1.0');

const GOOD_QUALITY = 192;

/** Whether a topic matches an MQTT topic filter (`+` one level, `#` the rest). */
export function topicMatches(filter: string, topic: string): boolean {
  if (filter === topic) return true;
  const filterLevels = filter.split('/');
  const topicLevels = topic.split('/');
  // Wildcards at the first level do not match topics starting with $ (the broker's own, $SYS).
  if (topic.startsWith('$') && (filterLevels[0] === '#' || filterLevels[0] === '+')) return false;
  for (let index = 0; index < filterLevels.length; index += 1) {
    const level = filterLevels[index]!;
    if (level === '#') return true;
    if (index >= topicLevels.length) return false;
    if (level !== '+' && level !== topicLevels[index]) return false;
  }
  return filterLevels.length === topicLevels.length;
}

/** Reads `$.a.b[0]` (or `a.b[0]`) from a parsed JSON value; undefined when absent. */
export function readJsonPath(value: unknown, jsonPath: string): unknown {
  const text = jsonPath.trim().replace(/^\$\.?/, '');
  if (text === '') return value;
  const steps: Array<string | number> = [];
  for (const part of text.match(/[^.[\]]+|\[(\d+)\]|\["([^"]*)"\]|\['([^']*)'\]/g) ?? []) {
    const index = /^\[(\d+)\]$/.exec(part);
    const quoted = /^\[["'](.*)["']\]$/.exec(part);
    steps.push(index ? Number(index[1]) : quoted ? quoted[1]! : part);
  }
  let current: unknown = value;
  for (const step of steps) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string | number, unknown>)[step];
  }
  return current;
}

function longToNumber(value: unknown): number | null {
  if (typeof value === 'number') return value;
  if (typeof value === 'bigint') return Number(value);
  if (value && typeof value === 'object' && 'low' in value && 'high' in value) {
    const long = value as { low: number; high: number; unsigned?: boolean; toNumber?: () => number };
    if (typeof long.toNumber === 'function') return long.toNumber();
    return long.high * 2 ** 32 + (long.low >>> 0);
  }
  return null;
}

/** A reading's value from what a payload holds: numbers, numeric text, booleans (1/0), null. */
export function numericOf(raw: unknown): { value: number | null } | { problem: string } {
  if (raw === null) return { value: null };
  if (typeof raw === 'boolean') return { value: raw ? 1 : 0 };
  if (typeof raw === 'string' && raw.trim() !== '' && Number.isFinite(Number(raw))) return { value: Number(raw) };
  const number = longToNumber(raw);
  if (number !== null && Number.isFinite(number)) return { value: number };
  return { problem: `${JSON.stringify(raw)?.slice(0, 50) ?? String(raw)} is not a number` };
}

/** Epoch milliseconds from a payload's time: ISO 8601 text, epoch ms, or epoch seconds (below 10^11). */
export function timestampOf(raw: unknown): number | null {
  if (typeof raw === 'string') {
    if (/^\d+(\.\d+)?$/.test(raw.trim())) return timestampOf(Number(raw));
    const parsed = Date.parse(raw);
    return Number.isNaN(parsed) ? null : parsed;
  }
  const number = longToNumber(raw);
  if (number === null || !Number.isFinite(number) || number <= 0) return null;
  return Math.round(number < 1e11 ? number * 1000 : number);
}

/** A Sparkplug timestamp: always epoch milliseconds (an unsigned 64-bit integer), never seconds. */
function sparkplugTime(raw: unknown): number | null {
  const number = longToNumber(raw);
  return number !== null && Number.isFinite(number) && number > 0 ? number : null;
}

/** Metric names by alias, per Sparkplug edge node or device, from their BIRTH messages. */
export class SparkplugAliases {
  private readonly byNode = new Map<string, Map<string, string>>();

  /** `spBv1.0/group/NBIRTH/edge` and `.../DBIRTH/edge/device` teach; the DATA topics read. */
  static nodeOf(topic: string): { node: string; messageType: string } | null {
    const levels = topic.split('/');
    if (levels[0] !== 'spBv1.0' || levels.length < 4) return null;
    return { node: [levels[1], levels[3], levels[4] ?? ''].join('/'), messageType: levels[2]! };
  }

  learn(topic: string, payload: SparkplugPayload): void {
    const node = SparkplugAliases.nodeOf(topic);
    if (!node || !/BIRTH$/.test(node.messageType)) return;
    const names = new Map<string, string>();
    for (const metric of payload.metrics ?? []) {
      const alias = longToNumber(metric.alias);
      if (metric.name && alias !== null) names.set(String(alias), metric.name);
    }
    this.byNode.set(node.node, names);
  }

  nameOf(topic: string, metric: SparkplugMetric): string | null {
    if (metric.name) return metric.name;
    const alias = longToNumber(metric.alias);
    const node = SparkplugAliases.nodeOf(topic);
    return alias === null || !node ? null : this.byNode.get(node.node)?.get(String(alias)) ?? null;
  }
}

export interface ConvertedMessage {
  readings: SourceReading[];
  problems: string[];
}

/**
 * The readings a message gives its matching mappings. Problems (a payload that does not parse, a path
 * that is absent) are reported, not thrown: one bad payload never holds the others.
 */
export function convertMessage(
  topic: string, payload: Buffer, mappings: readonly IntegrationMapping[], receivedAtMs: number, aliases: SparkplugAliases,
): ConvertedMessage {
  const readings: SourceReading[] = [];
  const problems: string[] = [];
  let json: { value: unknown } | null | undefined;
  let sparkplugPayload: SparkplugPayload | null | undefined;
  const jsonPayload = () => {
    if (json === undefined) {
      try {
        json = { value: JSON.parse(payload.toString('utf8')) };
      } catch {
        json = null;
        problems.push(`${topic}: the payload is not JSON`);
      }
    }
    return json;
  };
  const sparkplugPayloadOf = () => {
    if (sparkplugPayload === undefined) {
      try {
        sparkplugPayload = sparkplug.decodePayload(payload);
        aliases.learn(topic, sparkplugPayload);
      } catch {
        sparkplugPayload = null;
        problems.push(`${topic}: the payload is not Sparkplug B`);
      }
    }
    return sparkplugPayload;
  };
  // Births teach the aliases later DATA messages use, whether or not a mapping reads the birth itself.
  if (/^spBv1\.0\/[^/]+\/[ND]BIRTH\//.test(topic)) sparkplugPayloadOf();
  const push = (mapping: IntegrationMapping, measuredAtMs: number, value: number | null, quality: number | null, historical: boolean) => {
    if (quality !== null && mapping.bad_quality === 'drop') return;
    readings.push({ mappingId: mapping.id, instrumentId: mapping.instrument_id, measuredAtMs, value: quality !== null ? null : value, quality, historical });
  };

  for (const mapping of mappings) {
    if (!topicMatches(mapping.source, topic)) continue;
    if (mapping.payload_format === 'number') {
      const parsed = numericOf(payload.toString('utf8').trim());
      if ('problem' in parsed) problems.push(`${topic}: ${parsed.problem}`);
      else push(mapping, receivedAtMs, parsed.value, null, false);
    } else if (mapping.payload_format === 'json') {
      const document = jsonPayload();
      if (!document) continue;
      const raw = readJsonPath(document.value, mapping.value_path ?? '$');
      if (raw === undefined) { problems.push(`${topic}: ${mapping.value_path} is absent`); continue; }
      const parsed = numericOf(raw);
      if ('problem' in parsed) { problems.push(`${topic}: ${mapping.value_path}: ${parsed.problem}`); continue; }
      let measuredAtMs = receivedAtMs;
      if (mapping.timestamp_path) {
        const time = timestampOf(readJsonPath(document.value, mapping.timestamp_path));
        if (time === null) { problems.push(`${topic}: ${mapping.timestamp_path} is not a time`); continue; }
        measuredAtMs = time;
      }
      push(mapping, measuredAtMs, parsed.value, null, false);
    } else if (mapping.payload_format === 'sparkplug') {
      const decoded = sparkplugPayloadOf();
      if (!decoded) continue;
      const payloadTime = sparkplugTime(decoded.timestamp);
      for (const metric of decoded.metrics ?? []) {
        if (aliases.nameOf(topic, metric) !== mapping.value_path) continue;
        const parsed = metric.isNull ? { value: null } : numericOf(metric.value ?? null);
        if ('problem' in parsed) { problems.push(`${topic}: metric ${mapping.value_path}: ${parsed.problem}`); continue; }
        const qualityCode = longToNumber(metric.properties?.Quality?.value ?? metric.properties?.quality?.value);
        const quality = qualityCode !== null && qualityCode !== GOOD_QUALITY ? unsignedQualityCode(qualityCode) : null;
        push(mapping, sparkplugTime(metric.timestamp) ?? payloadTime ?? receivedAtMs, parsed.value, quality, Boolean(metric.isHistorical));
      }
    }
  }
  return { readings, problems };
}

/** A short, readable sample of a payload for browsing: text as is, Sparkplug decoded to its metrics. */
export function samplePayload(topic: string, payload: Buffer): { sample: string; dataType: string } {
  if (topic.startsWith('spBv1.0/')) {
    try {
      const decoded = sparkplug.decodePayload(payload);
      const metrics = (decoded.metrics ?? []).map((metric) => ({ name: metric.name ?? `alias ${String(longToNumber(metric.alias))}`, value: numericOf(metric.value ?? null) }));
      return { sample: JSON.stringify(metrics.map((metric) => ({ name: metric.name, value: 'value' in metric.value ? metric.value.value : null }))).slice(0, 500), dataType: 'sparkplug' };
    } catch {
      // Not Sparkplug after all: shown as text below.
    }
  }
  const text = payload.toString('utf8');
  const trimmed = text.trim();
  if (trimmed !== '' && Number.isFinite(Number(trimmed))) return { sample: trimmed.slice(0, 500), dataType: 'number' };
  try {
    JSON.parse(text);
    return { sample: text.slice(0, 500), dataType: 'json' };
  } catch {
    return { sample: text.slice(0, 500), dataType: 'text' };
  }
}

/**
 * What a sample MQTT payload offers to map: the JSON paths of its numbers ($.reactor.temperature), or
 * the metric names of a Sparkplug B payload (shown decoded: a JSON list of metrics, possibly cut
 * short, or name=value pairs), or a bare number.
 */
export interface OfferedPaths { format: 'json' | 'sparkplug' | 'number'; paths: string[] }

const MAX_PATHS = 200;
const TIMESTAMP_KEYS = ['time', 'timestamp', 'ts', 'measured_at', 'datetime', 'date'];

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isNumeric(value: unknown): boolean {
  return (typeof value === 'number' && Number.isFinite(value)) || (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)));
}

function numericPaths(value: unknown, path: string, into: string[]): void {
  if (into.length >= MAX_PATHS) return;
  if (isNumeric(value) && path !== '$') {
    into.push(path);
  } else if (Array.isArray(value)) {
    value.slice(0, 20).forEach((item, index) => numericPaths(item, `${path}[${index}]`, into));
  } else if (value && typeof value === 'object') {
    for (const [key, child] of Object.entries(value)) {
      numericPaths(child, /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? `${path}.${key}` : `${path}['${key.replace(/'/g, "\\'")}']`, into);
    }
  }
}

function sparkplugMetrics(sample: string): string[] {
  const parsed = parseJson(sample);
  const metrics = Array.isArray(parsed) ? parsed : parsed && typeof parsed === 'object' && 'metrics' in parsed ? (parsed as { metrics: unknown }).metrics : undefined;
  if (Array.isArray(metrics)) {
    return metrics.map((metric) => (metric && typeof metric === 'object' && 'name' in metric ? String((metric as { name: unknown }).name) : ''))
      .filter((name) => name !== '' && name !== 'bdSeq');
  }
  if (metrics && typeof metrics === 'object') return Object.keys(metrics);
  // A sample cut short is no longer JSON: its metric names are still readable.
  const named = [...sample.matchAll(/"name"\s*:\s*"([^"]+)"/g)].map((match) => match[1]!);
  if (named.length > 0) return named.filter((name) => name !== 'bdSeq');
  return [...sample.matchAll(/([^\s,{}=:"]+)\s*[=:]\s*-?\d/g)].map((match) => match[1]!).filter((name) => name !== 'bdSeq' && name !== 'seq' && name !== 'timestamp');
}

export function payloadValuePaths(sample: string | null, topic = '', dataType: string | null = null): OfferedPaths {
  if (topic.startsWith('spBv1.0/') || dataType === 'sparkplug') return { format: 'sparkplug', paths: sample ? [...new Set(sparkplugMetrics(sample))] : [] };
  if (sample === null) return { format: 'json', paths: [] };
  const parsed = parseJson(sample);
  if (typeof parsed === 'number') return { format: 'number', paths: [] };
  if (parsed && typeof parsed === 'object' && 'metrics' in parsed) return { format: 'sparkplug', paths: [...new Set(sparkplugMetrics(sample))] };
  if (parsed && typeof parsed === 'object') {
    const paths: string[] = [];
    numericPaths(parsed, '$', paths);
    return { format: 'json', paths };
  }
  return { format: isNumeric(sample) ? 'number' : 'json', paths: [] };
}

/** The path of a top-level field that names the reading's time, when the sample has one. */
export function timestampPathOf(sample: string | null): string | null {
  const parsed = sample ? parseJson(sample) : undefined;
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return null;
  const key = Object.keys(parsed).find((candidate) => TIMESTAMP_KEYS.includes(candidate.toLowerCase()));
  return key ? `$.${key}` : null;
}

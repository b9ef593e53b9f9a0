/**
 * The MQTT converter alone: topic filters, JSON paths and timestamps, Sparkplug B metrics by name and
 * by alias learnt from a birth, the historical flag and bad quality, and problems reported without
 * stopping the other mappings.
 */
import { describe, expect, it } from 'vitest';
import type { IntegrationMapping } from '@bioprocess/shared/integrations';
import { convertMessage, readJsonPath, sparkplug, SparkplugAliases, timestampOf, topicMatches } from '../src/connectors/sources/mqtt-payloads.ts';

let nextId = 1;
function mapping(fields: Partial<IntegrationMapping>): IntegrationMapping {
  const id = nextId++;
  return {
    id, connection_id: 1, organization_id: 1, source: '#', payload_format: 'json', value_path: null, timestamp_path: null,
    instrument_id: 100 + id, unit: null, bad_quality: 'missing', created_at: '2025-01-01T00:00:00.000Z', ...fields,
  };
}

describe('MQTT payloads', () => {
  it('matches topic filters as MQTT does', () => {
    expect(topicMatches('plant/+/temp', 'plant/r1/temp')).toBe(true);
    expect(topicMatches('plant/+/temp', 'plant/r1/x/temp')).toBe(false);
    expect(topicMatches('plant/#', 'plant')).toBe(true);
    expect(topicMatches('plant/#', 'plant/r1/temp')).toBe(true);
    expect(topicMatches('#', '$SYS/broker/uptime')).toBe(false);
    expect(topicMatches('plant/r1', 'plant/r1/temp')).toBe(false);
  });

  it('reads JSON paths and the times payloads carry', () => {
    const document = { a: { b: [10, 20] }, 'odd key': 3 };
    expect(readJsonPath(document, '$.a.b[1]')).toBe(20);
    expect(readJsonPath(document, 'a.b[0]')).toBe(10);
    expect(readJsonPath(document, "$['odd key']")).toBe(3);
    expect(readJsonPath(document, '$.a.c')).toBeUndefined();
    expect(timestampOf('2025-03-01T08:00:00.250Z')).toBe(Date.UTC(2025, 2, 1, 8, 0, 0, 250));
    expect(timestampOf(1_740_816_000)).toBe(1_740_816_000_000);
    expect(timestampOf(1_740_816_000_123)).toBe(1_740_816_000_123);
    expect(timestampOf('yesterday')).toBeNull();
  });

  it('converts JSON with its timestamp path and reports what it cannot read', () => {
    const value = mapping({ source: 'lab/+/od', value_path: '$.od', timestamp_path: '$.time' });
    const missing = mapping({ source: 'lab/+/od', value_path: '$.absent' });
    const payload = Buffer.from(JSON.stringify({ od: '0.75', time: '2025-03-01T08:00:00Z' }));
    const converted = convertMessage('lab/u1/od', payload, [value, missing], 42, new SparkplugAliases());
    expect(converted.readings).toEqual([{ mappingId: value.id, instrumentId: value.instrument_id, measuredAtMs: Date.UTC(2025, 2, 1, 8), value: 0.75, quality: null, historical: false }]);
    expect(converted.problems).toEqual(['lab/u1/od: $.absent is absent']);
    expect(convertMessage('lab/u1/od', Buffer.from('not json'), [value], 42, new SparkplugAliases()).problems).toEqual(['lab/u1/od: the payload is not JSON']);
  });

  it('reads Sparkplug metrics by alias after a birth, with their timestamps, historical flag and quality', () => {
    const aliases = new SparkplugAliases();
    const topic = 'spBv1.0/plant/DDATA/edge/r1';
    const birth = sparkplug.encodePayload({ timestamp: 1, metrics: [{ name: 'Temp', alias: 7, type: 'Double', value: 0 }, { name: 'pH', alias: 8, type: 'Double', value: 0 }] });
    convertMessage('spBv1.0/plant/DBIRTH/edge/r1', Buffer.from(birth), [], 0, aliases);
    const temp = mapping({ source: topic, payload_format: 'sparkplug', value_path: 'Temp' });
    const ph = mapping({ source: topic, payload_format: 'sparkplug', value_path: 'pH', bad_quality: 'drop' });
    const data = sparkplug.encodePayload({
      timestamp: 5_000,
      metrics: [
        { alias: 7, type: 'Double', value: 37.5, timestamp: 4_000, isHistorical: true },
        { alias: 8, type: 'Double', value: 7.1, properties: { Quality: { type: 'Int32', value: 0 } } },
      ],
    });
    const converted = convertMessage(topic, Buffer.from(data), [temp, ph], 9_000, aliases);
    // pH is bad quality and its mapping drops it; Temp keeps its own timestamp and the historical flag.
    expect(converted.readings).toEqual([{ mappingId: temp.id, instrumentId: temp.instrument_id, measuredAtMs: 4_000, value: 37.5, quality: null, historical: true }]);
    const kept = convertMessage(topic, Buffer.from(data), [{ ...ph, bad_quality: 'missing' }], 9_000, aliases);
    expect(kept.readings).toEqual([{ mappingId: ph.id, instrumentId: ph.instrument_id, measuredAtMs: 5_000, value: null, quality: 0, historical: false }]);
  });
});

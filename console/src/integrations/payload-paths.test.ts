import { describe, expect, it } from 'vitest';
import { payloadValuePaths, timestampPathOf } from './payload-paths.ts';

describe('values offered by a sample payload', () => {
  it('lists the numbers of a JSON payload by path, nested and odd keys included', () => {
    expect(payloadValuePaths('{"time":"2026-01-01T00:00:00Z","co2":3.2,"o2":17,"reactor":{"temp":"37.1","id":"BR-01"},"odd key":1}'))
      .toEqual({ format: 'json', paths: ['$.co2', '$.o2', '$.reactor.temp', "$['odd key']"] });
    expect(timestampPathOf('{"time":"2026-01-01T00:00:00Z","co2":3.2}')).toBe('$.time');
    expect(timestampPathOf('{"co2":3.2}')).toBeNull();
  });

  it('reads a bare number and Sparkplug metrics, whichever way the sample shows them', () => {
    expect(payloadValuePaths('42.5')).toEqual({ format: 'number', paths: [] });
    expect(payloadValuePaths('{"timestamp":1,"metrics":[{"name":"OD600","value":1.2},{"name":"AirFlow","value":2}]}', 'spBv1.0/G/DDATA/e/d'))
      .toEqual({ format: 'sparkplug', paths: ['OD600', 'AirFlow'] });
    expect(payloadValuePaths('OD600=1.2, AirFlow=2.0', 'spBv1.0/G/DDATA/e/d')).toEqual({ format: 'sparkplug', paths: ['OD600', 'AirFlow'] });
    expect(payloadValuePaths(null, 'spBv1.0/G/DDATA/e/d')).toEqual({ format: 'sparkplug', paths: [] });
    expect(payloadValuePaths('[{"name":"OD600","value":1.2},{"name":"AirFlow","value":2}]', 'any/topic', 'sparkplug'))
      .toEqual({ format: 'sparkplug', paths: ['OD600', 'AirFlow'] });
    expect(payloadValuePaths('[{"name":"OD600","value":1.2},{"name":"AirFlow","val', 'spBv1.0/G/DDATA/e/d')).toEqual({ format: 'sparkplug', paths: ['OD600', 'AirFlow'] });
  });
});

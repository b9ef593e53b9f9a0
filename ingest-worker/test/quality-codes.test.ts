/**
 * Quality codes as the connector delivers them: unsigned 32-bit, verbatim, and the text codes of
 * buffers written before codes were numbers (Sparkplug decimals, OPC UA StatusCode names) read back
 * to the same numbers, never to "good".
 */
import { describe, expect, it } from 'vitest';
import { StatusCodes } from 'node-opcua-client';
import { deliveredQualityCode, unsignedQualityCode } from '../src/connectors/quality-codes.ts';

describe('quality codes', () => {
  it('keeps a code as its unsigned 32-bit integer, a signed Int32 by its bits', () => {
    expect(unsignedQualityCode(0)).toBe(0);
    expect(unsignedQualityCode(500)).toBe(500);
    const sensorFailure = StatusCodes.BadSensorFailure.value;
    expect(sensorFailure).toBeGreaterThan(2 ** 31);
    expect(unsignedQualityCode(sensorFailure)).toBe(sensorFailure);
    expect(unsignedQualityCode(sensorFailure - 2 ** 32)).toBe(sensorFailure);
  });

  it('delivers the codes of older buffers: decimals as numbers, OPC UA names as their values, an unknown name as Bad', () => {
    expect(deliveredQualityCode(null)).toBeNull();
    expect(deliveredQualityCode(0)).toBe(0);
    expect(deliveredQualityCode('0')).toBe(0);
    expect(deliveredQualityCode('500')).toBe(500);
    expect(deliveredQualityCode('BadSensorFailure')).toBe(StatusCodes.BadSensorFailure.value);
    expect(deliveredQualityCode('UncertainLastUsableValue')).toBe(StatusCodes.UncertainLastUsableValue.value);
    expect(deliveredQualityCode('NoSuchStatus')).toBe(0x8000_0000);
  });
});

import { describe, expect, it } from 'vitest';
import { snakeToCamel, toCamelCase } from './case.ts';

describe('snakeToCamel', () => {
  it('converts snake_case keys and leaves camelCase keys alone', () => {
    expect(snakeToCamel('organization_id')).toBe('organizationId');
    expect(snakeToCamel('uv_absorbance_260')).toBe('uvAbsorbance260');
    expect(snakeToCamel('created_at')).toBe('createdAt');
    expect(snakeToCamel('organizationId')).toBe('organizationId');
    expect(snakeToCamel('id')).toBe('id');
  });
});

describe('toCamelCase', () => {
  it('converts keys recursively through nested objects and arrays', () => {
    const wire = {
      run_id: 1,
      unit_operations: [{ unit_op_id: 2, start_time: '2025-01-01', instruments: [{ equipment_id: 3, alias: null }] }],
      scale: { scale_grams: 10, scale_liters: null },
    };
    expect(toCamelCase(wire)).toEqual({
      runId: 1,
      unitOperations: [{ unitOpId: 2, startTime: '2025-01-01', instruments: [{ equipmentId: 3, alias: null }] }],
      scale: { scaleGrams: 10, scaleLiters: null },
    });
  });

  it('keeps primitives, null and arrays of primitives as they are', () => {
    expect(toCamelCase(null)).toBeNull();
    expect(toCamelCase(5)).toBe(5);
    expect(toCamelCase('some_text')).toBe('some_text');
    expect(toCamelCase(['a_b', 1])).toEqual(['a_b', 1]);
  });

  it('does not change the values of string fields, only keys', () => {
    expect(toCamelCase({ instrument_type: 'dissolved_o2' })).toEqual({ instrumentType: 'dissolved_o2' });
  });
});

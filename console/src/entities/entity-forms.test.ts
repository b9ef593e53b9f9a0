import { describe, expect, it } from 'vitest';
import { buildEntityBody, ENTITY_DEFINITIONS, initialValues } from './entity-forms.ts';
import { formatDate, titleCaseType } from './format.ts';

describe('buildEntityBody', () => {
  const run = ENTITY_DEFINITIONS.run;
  const valid = { name: 'Batch 1', facility_id: '3', target: 'GFP', strain: '', start_time: '', end_time: '', scale_liters: '1.5', scale_grams: '', description: '' };

  it('says which required field is empty', () => {
    expect(buildEntityBody(run, { ...valid, name: ' ' })).toEqual({ error: 'Name is required.', fieldErrors: { name: 'Name is required.' } });
    expect(buildEntityBody(run, { ...valid, target: '' })).toMatchObject({ error: 'Target is required.' });
  });
  it('marks every invalid field at once', () => {
    const result = buildEntityBody(run, { ...valid, name: '', target: '', scale_liters: '-2', scale_grams: 'lots' });
    expect(result).toEqual({
      error: 'Name is required.',
      fieldErrors: {
        name: 'Name is required.', target: 'Target is required.', scale_liters: 'Scale (L) must be at least 0.', scale_grams: 'Scale (g) must be a number.',
      },
    });
  });
  it('sends numbers, ids and null for empty optional fields', () => {
    const result = buildEntityBody(run, valid);
    expect(result).toEqual({ body: { name: 'Batch 1', facility_id: 3, target: 'GFP', strain: null, start_time: null, end_time: null, scale_liters: 1.5, scale_grams: null, description: null } });
  });
  it('checks the date range with the shared messages', () => {
    expect(buildEntityBody(run, { ...valid, start_time: '2025-03-02T10:00', end_time: '2025-03-01T10:00' })).toEqual({ error: 'End time must be after start time.', fieldErrors: { end_time: 'End time must be after start time.' } });
    const result = buildEntityBody(run, { ...valid, start_time: '2025-03-01T10:00', end_time: '2025-03-02T10:00' });
    expect('body' in result && result.body.start_time).toBe(new Date('2025-03-01T10:00').toISOString());
  });
  it('rejects negative scales', () => {
    expect(buildEntityBody(run, { ...valid, scale_liters: '-1' })).toMatchObject({ error: 'Scale (L) must be at least 0.' });
  });
});

describe('initialValues', () => {
  it('fills an edit form from the camelCase record', () => {
    const values = initialValues(ENTITY_DEFINITIONS.instrument, { id: 4, name: 'pH probe', type: 'pH', equipmentId: 7, unit: null, alias: 'PH1', drawAsSteps: true, organizationId: 1 });
    expect(values).toEqual({ name: 'pH probe', type: 'pH', equipment_id: '7', unit: '', alias: 'PH1', draw_as_steps: 'true' });
  });

  it('sends draw_as_steps only once the box was touched, so the type decides on a new instrument', () => {
    const base = { name: 'Stirrer', type: 'stir_rate', equipment_id: '7', unit: 'rpm', alias: '' };
    const untouched = buildEntityBody(ENTITY_DEFINITIONS.instrument, { ...base, draw_as_steps: '' });
    expect('body' in untouched && 'draw_as_steps' in untouched.body).toBe(false);
    const unticked = buildEntityBody(ENTITY_DEFINITIONS.instrument, { ...base, draw_as_steps: 'false' });
    expect('body' in unticked && unticked.body.draw_as_steps).toBe(false);
    const field = ENTITY_DEFINITIONS.instrument.fields.find((f) => f.key === 'draw_as_steps')!;
    expect([field.checkedByDefault?.(base), field.checkedByDefault?.({ ...base, type: 'pH' })]).toEqual([true, false]);
  });
});

describe('format', () => {
  it('title-cases unit operation types', () => {
    expect(titleCaseType('spray_drying')).toBe('Spray Drying');
    expect(titleCaseType('isoelectric_precipitation')).toBe('Isoelectric Precipitation');
  });
  it('formats dates or shows a dash', () => {
    expect(formatDate(null)).toBe('-');
    expect(formatDate('2025-03-01T10:05:00', 'dateTime')).toBe('2025-03-01 10:05');
    expect(formatDate('2025-03-01T10:05:00', 'date')).toBe('2025-03-01');
  });
});

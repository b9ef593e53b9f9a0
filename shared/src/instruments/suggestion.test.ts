import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { REAL_EXPORT_NAMES, realExportPath } from '../../test-data/real-exports.ts';
import { ARBITRARY_UNIT, headerUnit, sameUnitSpelling } from './header-unit.ts';
import { suggestInstrument } from './suggestion.ts';
import { instrumentUnitProblem, unitConversionFactor } from './units.ts';

/** Enough decoding to see the headers: a BOM names UTF-16, else UTF-8 when valid, else Latin-1. */
function decode(bytes: Buffer): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return new TextDecoder('utf-16le').decode(bytes);
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return new TextDecoder('latin1').decode(bytes);
  }
}

/**
 * Every field of every text file in the corpus that ends in a bracket: the headers with a unit part
 * (and preamble lines such as `[Setups]`, which must not break the rule either). Spreadsheets are
 * left out: their cells are read by the upload's XLSX reader, not here.
 */
function bracketedFields(): { file: string; field: string }[] {
  const found: { file: string; field: string }[] = [];
  for (const file of REAL_EXPORT_NAMES.filter((name) => !name.endsWith('.xlsx'))) {
    const text = decode(fs.readFileSync(realExportPath(file)));
    for (const line of text.split(/\r?\n/)) {
      for (const cell of line.split(/[,;\t]/)) {
        const field = cell.replace(/^"|"$/g, '').trim();
        if (field.length < 80 && /[\])]$/.test(field)) found.push({ file, field });
      }
    }
  }
  return found;
}

const corpus = bracketedFields();

describe('units from the real corpus headers', () => {
  it('reads the headers of the text files', () => {
    const literals = new Set(corpus.map(({ field }) => headerUnit(field).literal));
    for (const unit of ['mL/h', 'mV', '', '%', '°C', 'sL/h', 'pH', 'rpm', 'cells/ml', 'psi', 'h', 'nm', 'g', 'mL']) {
      expect(literals, unit).toContain(unit);
    }
  });

  it.each(corpus)('$file: $field', ({ field }) => {
    const stated = headerUnit(field);
    const suggestion = suggestInstrument(field);
    expect(suggestion.headerUnit).toBe(stated.literal);
    if (stated.literal === null) return;
    if (stated.literal === '') {
      expect(suggestion.unit).toBe(ARBITRARY_UNIT);
    } else if (instrumentUnitProblem(stated.literal) === null) {
      // Taken literally: the header's unit is the suggestion, as written.
      expect(suggestion.unit).toBe(stated.literal);
      expect(suggestion.unitNote).toBeNull();
    } else if (sameUnitSpelling(stated.literal)) {
      expect(suggestion.unit).toBe(sameUnitSpelling(stated.literal));
      expect(suggestion.unitNote).toContain(`'${stated.literal}'`);
    } else {
      expect(suggestion.unit).toBe('');
      expect(suggestion.unitNote).toContain(`'${stated.literal}' is not a UCUM code`);
    }
    if (suggestion.unit) expect(instrumentUnitProblem(suggestion.unit)).toBeNull();
    // Never another unit of the same dimension: where both convert, the factor is one.
    const factor = stated.literal && suggestion.unit ? unitConversionFactor(stated.literal, suggestion.unit) : null;
    if (factor !== null) expect(factor).toBe(1);
    // Inlet gas is never an exhaust type (OUR and CER read only [exhaust_o2] and [exhaust_co2]);
    // DASGIP's analyzer readings (`XO2 1.Out`) always are.
    if (/(^|[^a-z])xc?o2\s*\d*\.(pv|sp)\b|inlet/i.test(field)) expect(suggestion.type).not.toMatch(/^exhaust_/);
    if (/(^|[^a-z])xc?o2\s*\d*\.out\b/i.test(field)) expect(suggestion.type).toMatch(/^exhaust_/);
  });
});

describe('suggestInstrument', () => {
  it('keeps the header unit as written, never a unit 1,000 times larger', () => {
    expect(suggestInstrument('Unit 1.FA1.PV [mL/h]')).toMatchObject({ type: 'feed_rate', unit: 'mL/h', unitNote: null });
    expect(unitConversionFactor('mL/h', 'L/h')).toBe(0.001);
    expect(suggestInstrument('Unit 1.RD1.PV [mV]')).toMatchObject({ type: 'redox_potential', unit: 'mV' });
    expect(suggestInstrument('Redox (mV)')).toMatchObject({ type: 'redox_potential', unit: 'mV' });
    expect(suggestInstrument('Glucose (mmol/L)')).toMatchObject({ type: 'metabolite_concentration', unit: 'mmol/L' });
    expect(suggestInstrument('LDH [U/L]')).toMatchObject({ unit: 'U/L' });
    expect(suggestInstrument('VCD [10*6/mL]')).toMatchObject({ type: 'cell_density', unit: '10*6/mL' });
  });

  it('reads [] and a header without a unit as arbitrary units, never OD600', () => {
    expect(suggestInstrument('Unit 1.ODAU1.PV []')).toEqual({ type: 'optical_density', unit: ARBITRARY_UNIT, headerUnit: '', unitNote: null });
    expect(suggestInstrument('od_reading')).toEqual({ type: 'optical_density', unit: ARBITRARY_UNIT, headerUnit: null, unitNote: null });
  });

  it('maps only spellings of the same unit, and says so', () => {
    expect(suggestInstrument('Unit 1.T1.PV [°C]')).toMatchObject({ type: 'temperature', unit: 'celsius', headerUnit: '°C' });
    expect(suggestInstrument('Unit 1.FAir1.PV [sL/h]')).toMatchObject({ type: 'gas_flow_rate', unit: 'L{STP}/h' });
    expect(suggestInstrument('ACT HUMIDITY [rH]').unit).toBe('%{RH}');
    expect(suggestInstrument('Stirrer [rev/s]')).toMatchObject({ unit: '', unitNote: "The header's 'rev/s' is not a UCUM code: pick the unit it means." });
  });

  it('tells inlet gas from exhaust gas, and leaves a gas column that names neither untyped', () => {
    expect(suggestInstrument('Unit 1.XO21.PV [%]').type).toBe('inlet_o2');
    expect(suggestInstrument('Unit 1.XCO21.PV [%]').type).toBe('inlet_co2');
    expect(suggestInstrument('O2 in [%]').type).toBe('inlet_o2');
    expect(suggestInstrument('Exhaust O2 [%]').type).toBe('exhaust_o2');
    expect(suggestInstrument('Off-gas CO2 (%)').type).toBe('exhaust_co2');
    expect(suggestInstrument('CO2 out [%]').type).toBe('exhaust_co2');
    expect(suggestInstrument('ACT O2 [%]').type).toBe('');
    // DASGIP's off-gas analyzer (GA4) readings, beside the gas mix's inlet fractions.
    expect(suggestInstrument('Unit 1.XO2 1.Out [%]')).toMatchObject({ type: 'exhaust_o2', unit: '%' });
    expect(suggestInstrument('Unit 1.XCO2 1.Out [%]')).toMatchObject({ type: 'exhaust_co2', unit: '%' });
    expect(suggestInstrument('Presens_data.O2_value').type).toBe('dissolved_o2');
  });

  it('suggests the new types', () => {
    expect(suggestInstrument('Unit 1.T1.Out [%]').type).toBe('heater_duty');
    expect(suggestInstrument('heating_rate').type).toBe('heater_duty');
    expect(suggestInstrument('FP1_emit1').type).toBe('fluorescence');
    expect(suggestInstrument('VIABILITY (%)')).toMatchObject({ type: 'viability', unit: '%' });
    expect(suggestInstrument('TOTAL (cells/ml)')).toMatchObject({ type: 'cell_density', unit: '{cells}/mL' });
  });

  it("takes an organisation's own type named in the column, with its default unit when the header has none", () => {
    const types = [{ name: 'Capacitance', defaultUnit: 'pF/cm' }];
    expect(suggestInstrument('capacitance_probe', types)).toMatchObject({ type: 'Capacitance', unit: 'pF/cm' });
    expect(suggestInstrument('Capacitance [nF/cm]', types)).toMatchObject({ type: 'Capacitance', unit: 'nF/cm' });
  });

  it('refuses property names the UCUM library would take for units', () => {
    for (const name of ['Value [constructor]', 'Value [__proto__]', 'Value [toString]']) {
      expect(suggestInstrument(name).unit).toBe('');
    }
  });
});

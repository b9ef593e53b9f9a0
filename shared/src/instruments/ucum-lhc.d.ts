/** The part of @lhncbc/ucum-lhc (which ships no types) that unit validation and conversion use. */
declare module '@lhncbc/ucum-lhc' {
  interface UnitValidation {
    status: 'valid' | 'invalid' | 'error';
    ucumCode: string | null;
    msg: string[];
  }
  interface UnitConversion {
    status: 'succeeded' | 'failed' | 'error';
    toVal: number | null;
    msg: string[];
  }
  interface UcumLhcUtils {
    validateUnitString(unit: string, suggest?: boolean): UnitValidation;
    convertUnitTo(fromUnit: string, fromValue: number, toUnit: string): UnitConversion;
  }
  const ucum: { UcumLhcUtils: { getInstance(): UcumLhcUtils } };
  export default ucum;
}

/**
 * An instrument unit from the engineering units a server declares (the display name of an OPC UA
 * EUInformation, such as '°C' or 'r/min'): kept when it is one of our units or a UCUM code, else the
 * unit it commonly stands for, else none (the admin types one).
 */
import { instrumentUnitProblem } from '@bioprocess/shared/instruments/units';

const COMMON_SYMBOLS: Record<string, string> = {
  '°C': 'celsius',
  '℃': 'celsius',
  degC: 'celsius',
  'r/min': 'rpm',
  RPM: 'rpm',
  'ml/min': 'mL/min',
  'ml/h': 'mL/h',
  'l/min': 'L/min',
  'l/h': 'L/h',
  'g/l': 'g/L',
  '% sat': '%',
  '%DO': '%',
  mbar: 'mbar',
};

export function instrumentUnitFor(engineeringUnit: string | null | undefined): string {
  const text = engineeringUnit?.trim() ?? '';
  if (!text) return '';
  if (instrumentUnitProblem(text) === null) return text;
  const known = COMMON_SYMBOLS[text];
  return known && instrumentUnitProblem(known) === null ? known : '';
}

/**
 * What the report import proposes for a report, before the person changes anything: the sample ID
 * column, the measured-time column, and each numeric column as an analyte with its unit, chosen for
 * import when it is a result the analyzer reports (cell density, viability, diameter, aggregates,
 * metabolites, OD) and its unit is known. The console's dialog starts from it, and the corpus tests
 * import each real report by accepting it, so what a person sees first is what is tested.
 *
 * A unit is taken from the header (`VIABILITY (%)`, `Live (cells/ml)`, `(%) of cells in ...`,
 * `Total cells / ml (x 10^6)`), or, for a vendor whose export names none, from the unit that vendor
 * documents for the column (Roche Cedex HiRes). Never guessed from a value. Instrument settings
 * (a key/value report's Settings section, minimum and maximum diameters, volumes, dilutions) are
 * offered but not chosen. A spectrum (a scan over wavelength) is refused with why.
 */
import { detectTimestampFormat, isLowConfidence } from './csv/timestamps.ts';
import { headerUnit, sameUnitSpelling } from './instruments/header-unit.ts';
import { ucumUnitProblem } from './instruments/ucum.ts';
import { readReportCell } from './samples-import.ts';

export interface ReportShape {
  headers: readonly string[];
  /** The first rows (one for a key/value report). */
  rows: readonly (readonly string[])[];
  /** The time column the file's detection found, when its times are absolute (dates), else null. */
  timeColumn: string | null;
  keyValue: boolean;
  /** Keys of a key/value report's settings section. */
  settingColumns?: readonly string[];
}

export interface SuggestedAnalyte {
  column: string;
  include: boolean;
  analyte: string;
  unit: string;
  method: string | null;
}

export interface ReportSuggestion {
  sampleIdColumn: string;
  /** '' when none is proposed. */
  measuredAtColumn: string;
  wide: SuggestedAnalyte[];
  /** Why the report cannot be imported as samples, or null. */
  refusal: string | null;
}

/** Checked in order: a sample's own id before a generic id or name (NC-View writes both `SAMPLE ID` and `NAME`). */
const SAMPLE_ID_NAMES = [/^sample\s*(id|identifier|identifer)$/i, /^sample(\s*name)?$/i, /^(tube|tx|id|name)$/i];
const MEASURED_NAMES = /finish|measur|analy[sz]|run\s*date|date\s*time|^date$/i;
/** `Glucose [g/L]`, optionally `(Cedex Bio)`: the grid's own export. */
const GRID_RESULT = /^(.+?)\s*\[([^\]]+)\]\s*(?:\((.+)\))?$/;
/** Results analyzers and cell counters report. */
const RESULT_NAMES = /viab|cells?\s*\/\s*ml|cell\s*(conc|density)|\b[vt]cd\b|^\s*(live|dead|total|viable)\b|diam|aggregat|glucose|lactate|glutamine|glutamate|ammoni|acetate|formate|ethanol|\b(glc|lac|gln|glu|nh4)\b|\bod\d*\b|optical\s*density|tit(er|re)/i;
/** An instrument's settings written beside its results. */
const SETTING_NAMES = /\b(min(imum)?|max(imum)?|volume|dilution|brightness|frames?|cycles?|depth|sharpness|bins?|spot|factor)\b/i;

/** Columns a vendor's export writes without a unit, with the unit the vendor documents for them. */
const VENDOR_UNITS: { vendor: string; matches: (headers: readonly string[]) => boolean; units: Record<string, string> }[] = [
  {
    vendor: 'Roche Cedex HiRes',
    matches: (headers) => headers.includes('Cedex ID') && headers.includes('Viable Cell Conc.'),
    units: {
      'Viable Cell Conc.': '{cells}/mL', 'Dead Cell Conc.': '{cells}/mL', 'Total Cell Conc.': '{cells}/mL',
      'Viability': '%', 'Avg Diameter': 'um', 'Aggregate Rate': '%',
    },
  },
];

export const REPORT_SUGGESTION_MESSAGES = {
  spectrum: (first: number, column: string) =>
    `This report is a scan over wavelength ('${column}', from ${first} nm): one spectrum, not samples with results and not a time series. `
    + 'Export the readings at the wavelengths you need as a report with a sample ID and a column per wavelength.',
} as const;

/** A scan over wavelength: the first column names a wavelength and its numbers rise. */
export function spectrumRefusal(headers: readonly string[], rows: readonly (readonly string[])[]): string | null {
  const axis = headers[0] ?? '';
  if (!/wavelength|\(nm\)|\[nm\]|^\s*nm\s*$/i.test(axis)) return null;
  const values = rows.map((row) => Number((row[0] ?? '').trim())).filter((value) => Number.isFinite(value));
  if (values.length < 3 || values.some((value, index) => index > 0 && value <= values[index - 1]!)) return null;
  return REPORT_SUGGESTION_MESSAGES.spectrum(values[0]!, axis.trim());
}

function parsesAsTimes(values: readonly string[]): boolean {
  const written = values.filter((value) => value.trim() !== '');
  if (written.length === 0) return false;
  const detection = detectTimestampFormat(written, {});
  return detection.format !== 'unknown' && detection.format !== 'spreadsheet-serial' && !isLowConfidence(detection);
}

/** A unit the header states: at its end (`Viability (%)`), at its start (`(%) of cells ...`), or as a scale of cells per mL. */
function unitOfHeader(header: string): { unit: string; analyte: string } | null {
  const found = statedUnit(header);
  if (!found) return null;
  // The import stores UCUM codes: a spelling of one (`μm`) becomes it, anything else is the person's to choose.
  if (ucumUnitProblem(found.unit) === null) return found;
  const spelling = sameUnitSpelling(found.unit);
  return { analyte: found.analyte, unit: spelling && ucumUnitProblem(spelling) === null ? spelling : '' };
}

function statedUnit(header: string): { unit: string; analyte: string } | null {
  const trimmed = header.trim();
  const scaled = /^(.*?)\s*\/\s*ml\s*\(\s*x\s*10\^(\d+)\s*\)$/i.exec(trimmed) ?? /^(.*?)\s*\(\s*x\s*10\^(\d+)\s*\)\s*cells\s*\/\s*ml$/i.exec(trimmed);
  if (scaled) return { unit: `10*${scaled[2]}/mL`, analyte: scaled[1]!.trim() || trimmed };
  const stated = headerUnit(trimmed);
  if (stated.literal !== null && stated.unit !== '') {
    return { unit: stated.unit, analyte: trimmed.replace(/\s*[[(][^\][()]*[\])]\s*$/, '').trim() || trimmed };
  }
  const leading = /^\(([^()]{1,24})\)\s*(?:of\s+)?(.+)$/i.exec(trimmed);
  if (leading) {
    const unit = headerUnit(`x (${leading[1]})`);
    if (unit.literal !== null && unit.unit !== '') return { unit: unit.unit, analyte: leading[2]!.charAt(0).toUpperCase() + leading[2]!.slice(1) };
  }
  return null;
}

function sampleIdOf(shape: ReportShape): string {
  const { headers } = shape;
  for (const pattern of SAMPLE_ID_NAMES) {
    const named = headers.find((header) => pattern.test(header.trim()));
    if (named) return named;
  }
  if (shape.keyValue) {
    // A count names its sample in its first worded value (NucleoView's `Image`), after any title.
    const values = shape.rows[0] ?? [];
    const at = headers.findIndex((_, index) => {
      const value = (values[index] ?? '').trim();
      return value !== '' && readReportCell(value).kind === 'error' && !parsesAsTimes([value]);
    });
    if (at >= 0) return headers[at]!;
  }
  return headers.find((header) => /sample|\bid\b/i.test(header)) ?? headers[0] ?? '';
}

function measuredOf(shape: ReportShape, taken: string): string {
  const { headers, rows, timeColumn } = shape;
  if (timeColumn && timeColumn !== taken && !/draw/i.test(timeColumn)) return timeColumn;
  // The detected time says when the sample was drawn (Cedex HiRes's `Sample draw Time`): when it was measured is another column.
  const named = headers.findIndex((header) => header !== taken && header !== timeColumn && MEASURED_NAMES.test(header)
    && parsesAsTimes(rows.map((row) => row[headers.indexOf(header)] ?? '')));
  return named >= 0 ? headers[named]! : '';
}

/** The report import's first proposal for a report's shape. */
export function suggestReportImport(shape: ReportShape): ReportSuggestion {
  const { headers, rows } = shape;
  const refusal = shape.keyValue ? null : spectrumRefusal(headers, rows);
  const sampleIdColumn = sampleIdOf(shape);
  const measuredAtColumn = measuredOf(shape, sampleIdColumn);
  const vendor = VENDOR_UNITS.find((entry) => entry.matches(headers));
  const settings = new Set(shape.settingColumns ?? []);
  const wide: SuggestedAnalyte[] = [];
  headers.forEach((column, index) => {
    if (column === sampleIdColumn || column === measuredAtColumn) return;
    const grid = GRID_RESULT.exec(column.trim());
    if (grid) {
      // The product's own wide export: every result column, with its unit and method.
      wide.push({ column, include: true, analyte: grid[1]!.trim(), unit: grid[2]!.trim(), method: grid[3]?.trim() || null });
      return;
    }
    const numeric = rows.some((row) => readReportCell(row[index] ?? '').kind === 'value');
    if (!numeric) return;
    const stated = unitOfHeader(column);
    const vendorUnit = vendor?.units[column.trim()];
    const unit = stated?.unit ?? vendorUnit ?? '';
    const analyte = stated?.analyte ?? column.trim();
    const include = unit !== '' && refusal === null && RESULT_NAMES.test(column) && !SETTING_NAMES.test(column) && !settings.has(column);
    wide.push({ column, include, analyte, unit, method: null });
  });
  return { sampleIdColumn, measuredAtColumn, wide, refusal };
}

/** The Roche Cedex HiRes and other vendors whose units the suggestion knows without a header. */
export const VENDORS_WITH_KNOWN_UNITS = VENDOR_UNITS.map((entry) => entry.vendor);

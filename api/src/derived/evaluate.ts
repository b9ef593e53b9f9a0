/**
 * Evaluates a parsed formula over a common time grid of its inputs. Every series is a Float64Array
 * aligned with the grid, NaN where there is no reading: a gap in an input is a gap in the result
 * (arithmetic on NaN stays NaN), and time functions never bridge a gap with invented readings.
 */
import type { DerivedNode } from '@bioprocess/shared/derived/expression';

const HOUR_MS = 3_600_000;

export interface EvaluationInputs {
  /** Grid times in ms, strictly increasing. */
  times: Float64Array;
  /** Each reference's readings on the grid (NaN where it has none). */
  references: ReadonlyMap<string, Float64Array>;
  /** Each sample reference's values on the grid, by its key (interpolated or held between samples). */
  samples?: ReadonlyMap<string, Float64Array>;
  /** Each property's value (null when not set: the result is then all gaps). */
  properties: ReadonlyMap<string, number | null>;
}

type Value = number | Float64Array;

function lift(value: Value, length: number): Float64Array {
  return typeof value === 'number' ? new Float64Array(length).fill(value) : value;
}

function map2(a: Value, b: Value, length: number, f: (x: number, y: number) => number): Value {
  if (typeof a === 'number' && typeof b === 'number') return f(a, b);
  const left = lift(a, length);
  const right = lift(b, length);
  const out = new Float64Array(length);
  for (let i = 0; i < length; i++) out[i] = f(left[i]!, right[i]!);
  return out;
}

function mapN(values: Value[], length: number, f: (xs: number[]) => number): Value {
  if (values.every((value) => typeof value === 'number')) return f(values as number[]);
  const arrays = values.map((value) => lift(value, length));
  const out = new Float64Array(length);
  const row = new Array<number>(arrays.length);
  for (let i = 0; i < length; i++) {
    for (let k = 0; k < arrays.length; k++) row[k] = arrays[k]![i]!;
    out[i] = f(row);
  }
  return out;
}

/** NaN stays NaN through comparisons too (a gap is neither true nor false). */
const compare = (test: (x: number, y: number) => boolean) => (x: number, y: number) =>
  Number.isNaN(x) || Number.isNaN(y) ? Number.NaN : test(x, y) ? 1 : 0;

// Maps, not object literals: a name is found only if it was put here, never one every object inherits.
const BINARY = new Map<string, (x: number, y: number) => number>(Object.entries({
  '+': (x, y) => x + y,
  '-': (x, y) => x - y,
  '*': (x, y) => x * y,
  '/': (x, y) => (y === 0 ? Number.NaN : x / y),
  '^': (x, y) => x ** y,
  '<': compare((x, y) => x < y),
  '<=': compare((x, y) => x <= y),
  '>': compare((x, y) => x > y),
  '>=': compare((x, y) => x >= y),
  '==': compare((x, y) => x === y),
  '!=': compare((x, y) => x !== y),
}));

/** Non-finite results (log of a negative, overflow) are gaps, never Infinity on a chart. */
const finite = (value: number) => (Number.isFinite(value) ? value : Number.NaN);

const POINTWISE = new Map<string, (xs: number[]) => number>(Object.entries({
  log: ([x]) => finite(Math.log10(x!)),
  ln: ([x]) => finite(Math.log(x!)),
  exp: ([x]) => finite(Math.exp(x!)),
  sqrt: ([x]) => finite(Math.sqrt(x!)),
  abs: ([x]) => Math.abs(x!),
  min: (xs) => (xs.some(Number.isNaN) ? Number.NaN : Math.min(...xs)),
  max: (xs) => (xs.some(Number.isNaN) ? Number.NaN : Math.max(...xs)),
  clamp: ([x, lo, hi]) => (Number.isNaN(x!) || Number.isNaN(lo!) || Number.isNaN(hi!) ? Number.NaN : Math.min(Math.max(x!, lo!), hi!)),
  if: ([condition, whenTrue, whenFalse]) => (Number.isNaN(condition!) ? Number.NaN : condition !== 0 ? whenTrue! : whenFalse!),
}));

/** Rate of change per `unitMs` between neighbouring grid times; the first reading and any next to a gap have none. */
export function timeDerivative(times: Float64Array, x: Float64Array, unitMs: number): Float64Array {
  const out = new Float64Array(x.length).fill(Number.NaN);
  for (let i = 1; i < x.length; i++) out[i] = (x[i]! - x[i - 1]!) / ((times[i]! - times[i - 1]!) / unitMs);
  return out;
}

/**
 * Running trapezoid integral in value x `unitMs`, from the first reading. An interval touching a gap
 * adds nothing (the gap is not guessed); the result is a gap where the input is.
 */
export function timeIntegral(times: Float64Array, x: Float64Array, unitMs: number): Float64Array {
  const out = new Float64Array(x.length).fill(Number.NaN);
  let total = 0;
  for (let i = 0; i < x.length; i++) {
    if (i > 0 && Number.isFinite(x[i]!) && Number.isFinite(x[i - 1]!)) {
      total += ((x[i]! + x[i - 1]!) / 2) * ((times[i]! - times[i - 1]!) / unitMs);
    }
    if (Number.isFinite(x[i]!)) out[i] = total;
  }
  return out;
}

/** Mean of the readings in the window (t - w, t]; a gap where the input has one. */
export function rollingMean(times: Float64Array, x: Float64Array, windowMs: number): Float64Array {
  const out = new Float64Array(x.length).fill(Number.NaN);
  let start = 0;
  let sum = 0;
  let count = 0;
  for (let i = 0; i < x.length; i++) {
    if (Number.isFinite(x[i]!)) { sum += x[i]!; count += 1; }
    while (times[start]! <= times[i]! - windowMs) {
      if (Number.isFinite(x[start]!)) { sum -= x[start]!; count -= 1; }
      start += 1;
    }
    if (Number.isFinite(x[i]!) && count > 0) out[i] = sum / count;
  }
  return out;
}

/** The reading at t - w (the last grid time at or before it), a gap when there is none. */
export function lag(times: Float64Array, x: Float64Array, lagMs: number): Float64Array {
  const out = new Float64Array(x.length).fill(Number.NaN);
  let j = -1;
  for (let i = 0; i < x.length; i++) {
    const target = times[i]! - lagMs;
    while (j + 1 < x.length && times[j + 1]! <= target) j += 1;
    if (j >= 0) out[i] = x[j]!;
  }
  return out;
}

/**
 * Least-squares slope of ln x against time in hours over the window (t - w, t]: the specific growth
 * rate when x is a biomass signal. Needs two positive readings in the window and one at t.
 */
export function logLinearSlope(times: Float64Array, x: Float64Array, windowMs: number): Float64Array {
  const out = new Float64Array(x.length).fill(Number.NaN);
  let start = 0;
  // Sums over the window of the usable readings, in hours relative to the first grid time (for precision).
  const origin = times.length > 0 ? times[0]! : 0;
  let n = 0, st = 0, sy = 0, stt = 0, sty = 0;
  const add = (k: number, sign: number) => {
    if (!(x[k]! > 0)) return;
    const t = (times[k]! - origin) / HOUR_MS;
    const y = Math.log(x[k]!);
    n += sign; st += sign * t; sy += sign * y; stt += sign * t * t; sty += sign * t * y;
  };
  for (let i = 0; i < x.length; i++) {
    add(i, 1);
    while (times[start]! <= times[i]! - windowMs) { add(start, -1); start += 1; }
    const denominator = n * stt - st * st;
    if (x[i]! > 0 && n >= 2 && denominator > 0) out[i] = (n * sty - st * sy) / denominator;
  }
  return out;
}

const TIME = new Map<string, (times: Float64Array, x: Float64Array, ms: number) => Float64Array>(Object.entries({
  time_derivative: timeDerivative,
  time_integral: timeIntegral,
  rolling_mean: rollingMean,
  lag,
  log_linear_slope: logLinearSlope,
}));

/** The parser admits only names these tables hold; a tree from elsewhere naming another is a bug, not a formula. */
function known<T>(table: Map<string, T>, name: string): T {
  const found = table.get(name);
  if (found === undefined) throw new Error(`The evaluator has no ${name}`);
  return found;
}

export function evaluate(tree: DerivedNode, inputs: EvaluationInputs): Float64Array {
  const length = inputs.times.length;
  const visit = (node: DerivedNode): Value => {
    switch (node.kind) {
      case 'number': return node.value;
      case 'reference': return inputs.references.get(node.name) ?? new Float64Array(length).fill(Number.NaN);
      case 'sample': return inputs.samples?.get(node.key) ?? new Float64Array(length).fill(Number.NaN);
      case 'property': return inputs.properties.get(node.name) ?? Number.NaN;
      case 'negate': { const value = visit(node.argument); return map2(value, 0, length, (x) => -x); }
      case 'binary': return map2(visit(node.left), visit(node.right), length, known(BINARY, node.operator));
      case 'call': return mapN(node.args.map(visit), length, known(POINTWISE, node.name));
      case 'time': return known(TIME, node.name)(inputs.times, lift(visit(node.argument), length), node.ms);
    }
  };
  // A copy: a formula that is one reference must not hand back (and alter) its input.
  const out = Float64Array.from(lift(visit(tree), length));
  for (let i = 0; i < out.length; i++) if (!Number.isFinite(out[i]!)) out[i] = Number.NaN;
  return out;
}

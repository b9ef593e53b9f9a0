/**
 * The formula language of derived parameters, parsed into a small tree the server evaluates (never
 * `eval`). Numbers; + - * / ^ (right-associative; a leading minus binds tighter, as in spreadsheets:
 * -2^2 is 4); comparisons < <= > >= == != giving 1 or 0; parentheses; functions; references to the
 * equipment's instruments in brackets, by instrument type, alias or name (`[exhaust_o2]`,
 * `["Feed pump"]`); sample analytes of the unit operation by name, optionally with their unit
 * (`sample("Glucose")`, `sample("Glucose", "g/L")`); and unit-operation properties by their bare name
 * (`working_volume`).
 *
 * The parse is shared by the api (which answers 400 with the position) and the console (which marks
 * the error as the user types).
 */
import jsep from 'jsep';
import { UNIT_OPERATION_PROPERTY_NAMES, type UnitOperationPropertyName } from './properties.ts';

export type ComparisonOperator = '<' | '<=' | '>' | '>=' | '==' | '!=';
export type ArithmeticOperator = '+' | '-' | '*' | '/' | '^';

export type DerivedNode =
  | { kind: 'number'; value: number }
  | { kind: 'reference'; name: string }
  | { kind: 'sample'; key: string }
  | { kind: 'property'; name: UnitOperationPropertyName }
  | { kind: 'negate'; argument: DerivedNode }
  | { kind: 'binary'; operator: ArithmeticOperator | ComparisonOperator; left: DerivedNode; right: DerivedNode }
  | { kind: 'call'; name: PointwiseFunction; args: DerivedNode[] }
  | { kind: 'time'; name: TimeFunction; argument: DerivedNode; ms: number };

/** Functions applied reading by reading, with how many arguments each takes. */
const POINTWISE_FUNCTIONS = {
  log: [1, 1], ln: [1, 1], exp: [1, 1], sqrt: [1, 1], abs: [1, 1],
  min: [2, Infinity], max: [2, Infinity], clamp: [3, 3], if: [3, 3],
} as const;
export type PointwiseFunction = keyof typeof POINTWISE_FUNCTIONS;

/**
 * Functions of a series over time. The second argument is a time unit for rates and integrals
 * ('s', 'min', 'h', 'd') and a window for the others ('10min', '2h').
 */
const TIME_FUNCTIONS = {
  time_derivative: 'unit', time_integral: 'unit', rolling_mean: 'window', lag: 'window', log_linear_slope: 'window',
} as const;
export type TimeFunction = keyof typeof TIME_FUNCTIONS;

const UNIT_MS: Record<string, number> = { s: 1_000, min: 60_000, h: 3_600_000, d: 86_400_000 };
const DURATION = /^\s*(\d+(?:\.\d+)?)?\s*(s|min|h|d)\s*$/;

export interface ExpressionError {
  /** Zero-based character offset in the expression. */
  position: number;
  message: string;
}

/** A sample analyte a formula reads: by name (compared ignoring case) and, when several units are stored, its unit. */
export interface SampleReference {
  key: string;
  analyte: string;
  unit: string | null;
}

/** How a sample reference is written back in messages: sample("Glucose", "g/L"). */
export function sampleReferenceText(reference: Pick<SampleReference, 'analyte' | 'unit'>): string {
  return reference.unit === null ? `sample("${reference.analyte}")` : `sample("${reference.analyte}", "${reference.unit}")`;
}

export const SAMPLE_FUNCTION = 'sample';

export type ParsedExpression =
  | { ok: true; tree: DerivedNode; references: string[]; samples: SampleReference[]; properties: UnitOperationPropertyName[] }
  | { ok: false; error: ExpressionError };

export const MAX_EXPRESSION_LENGTH = 2_000;

// The parser is configured once for this language: no bitwise, modulo or logical operators, ^ is power.
for (const operator of ['|', '&', '<<', '>>', '>>>', '%', '||', '&&', '===', '!==', '^']) jsep.removeBinaryOp(operator);
for (const operator of ['~', '!']) jsep.removeUnaryOp(operator);
jsep.addBinaryOp('^', 11, true);

class ExpressionProblem extends Error {
  constructor(message: string, readonly position: number) {
    super(message);
  }
}

/** Where `needle` first appears, to point at a problem the parser's tree does not locate. */
function positionOf(text: string, needle: string): number {
  const index = text.indexOf(needle);
  return index < 0 ? 0 : index;
}

/** Milliseconds of a time unit ('h') or, when `window` is set, of a window ('10min'); null if not one. */
export function parseDuration(text: string, window: boolean): number | null {
  const match = DURATION.exec(text);
  if (!match) return null;
  if (!window && match[1] !== undefined && Number(match[1]) !== 1) return null;
  const amount = match[1] === undefined ? 1 : Number(match[1]);
  const ms = amount * UNIT_MS[match[2]!]!;
  return ms > 0 ? ms : null;
}

export function parseExpression(text: string): ParsedExpression {
  if (text.trim() === '') return { ok: false, error: { position: 0, message: 'The expression is empty' } };
  if (text.length > MAX_EXPRESSION_LENGTH) {
    return { ok: false, error: { position: MAX_EXPRESSION_LENGTH, message: `The expression is longer than ${MAX_EXPRESSION_LENGTH} characters` } };
  }
  let parsed: jsep.Expression;
  try {
    parsed = jsep(text);
  } catch (error) {
    const problem = error as { index?: number; description?: string; message: string };
    return { ok: false, error: { position: problem.index ?? 0, message: problem.description ?? problem.message } };
  }
  const references = new Set<string>();
  const samples = new Map<string, SampleReference>();
  const properties = new Set<UnitOperationPropertyName>();
  try {
    const tree = convert(parsed, text, { references, samples, properties });
    return { ok: true, tree, references: [...references], samples: [...samples.values()], properties: [...properties] };
  } catch (error) {
    if (error instanceof ExpressionProblem) return { ok: false, error: { position: error.position, message: error.message } };
    throw error;
  }
}

interface Found {
  references: Set<string>;
  samples: Map<string, SampleReference>;
  properties: Set<UnitOperationPropertyName>;
}

function stringLiteral(node: jsep.Expression | undefined): string | null {
  return node?.type === 'Literal' && typeof (node as jsep.Literal).value === 'string' ? String((node as jsep.Literal).value).trim() : null;
}

function convert(node: jsep.Expression, text: string, found: Found): DerivedNode {
  const { references, properties } = found;
  const recurse = (child: jsep.Expression) => convert(child, text, found);
  switch (node.type) {
    case 'Literal': {
      const value = (node as jsep.Literal).value;
      if (typeof value === 'number' && Number.isFinite(value)) return { kind: 'number', value };
      throw new ExpressionProblem(`${(node as jsep.Literal).raw} is not a number here`, positionOf(text, String((node as jsep.Literal).raw)));
    }
    case 'ArrayExpression': {
      const elements = (node as jsep.ArrayExpression).elements;
      const only = elements.length === 1 ? elements[0] : null;
      const name = only?.type === 'Identifier' ? (only as jsep.Identifier).name
        : only?.type === 'Literal' && typeof (only as jsep.Literal).value === 'string' ? String((only as jsep.Literal).value) : null;
      if (name === null || name.trim() === '') {
        throw new ExpressionProblem('A reference in brackets names one instrument: [exhaust_o2] or ["Feed pump"]', positionOf(text, '['));
      }
      references.add(name.trim());
      return { kind: 'reference', name: name.trim() };
    }
    case 'Identifier': {
      const name = (node as jsep.Identifier).name;
      if ((UNIT_OPERATION_PROPERTY_NAMES as readonly string[]).includes(name)) {
        properties.add(name as UnitOperationPropertyName);
        return { kind: 'property', name: name as UnitOperationPropertyName };
      }
      throw new ExpressionProblem(
        `Unknown name ${name}: instruments go in brackets ([${name}]); unit-operation properties are ${UNIT_OPERATION_PROPERTY_NAMES.join(', ')}`,
        positionOf(text, name),
      );
    }
    case 'UnaryExpression': {
      const unary = node as jsep.UnaryExpression;
      const argument = recurse(unary.argument);
      return unary.operator === '-' ? { kind: 'negate', argument } : argument;
    }
    case 'BinaryExpression': {
      const binary = node as jsep.BinaryExpression;
      return {
        kind: 'binary', operator: binary.operator as ArithmeticOperator | ComparisonOperator,
        left: recurse(binary.left), right: recurse(binary.right),
      };
    }
    case 'CallExpression': {
      const call = node as jsep.CallExpression;
      const callee = call.callee.type === 'Identifier' ? (call.callee as jsep.Identifier).name : null;
      if (callee === null) throw new ExpressionProblem('Only named functions can be called', positionOf(text, '('));
      const at = positionOf(text, `${callee}(`);
      if (callee === SAMPLE_FUNCTION) {
        const [analyte, unit] = call.arguments.map(stringLiteral);
        if (call.arguments.length < 1 || call.arguments.length > 2 || !analyte || (call.arguments.length === 2 && !unit)) {
          throw new ExpressionProblem('sample takes an analyte and, optionally, its unit, in quotes: sample("Glucose") or sample("Glucose", "g/L")', at);
        }
        const reference = { key: `${analyte.toLowerCase()}\u0000${unit ?? ''}`, analyte, unit: unit ?? null };
        if (!found.samples.has(reference.key)) found.samples.set(reference.key, reference);
        return { kind: 'sample', key: reference.key };
      }
      // Own properties only: `in` would also find what every object inherits (constructor, toString, __proto__).
      if (Object.hasOwn(TIME_FUNCTIONS, callee)) {
        const name = callee as TimeFunction;
        const kind = TIME_FUNCTIONS[name];
        const example = kind === 'unit' ? `${name}(x, 'h')` : `${name}(x, '10min')`;
        if (call.arguments.length !== 2) throw new ExpressionProblem(`${name} takes a series and a ${kind === 'unit' ? 'time unit' : 'window'}: ${example}`, at);
        const duration = call.arguments[1]!;
        const ms = duration.type === 'Literal' && typeof (duration as jsep.Literal).value === 'string'
          ? parseDuration(String((duration as jsep.Literal).value), kind === 'window') : null;
        if (ms === null) {
          throw new ExpressionProblem(
            kind === 'unit' ? `${name} needs a time unit 's', 'min', 'h' or 'd': ${example}` : `${name} needs a window such as '30s', '10min', '2h' or '1d': ${example}`,
            at,
          );
        }
        return { kind: 'time', name, argument: recurse(call.arguments[0]!), ms };
      }
      if (Object.hasOwn(POINTWISE_FUNCTIONS, callee)) {
        const name = callee as PointwiseFunction;
        const [least, most] = POINTWISE_FUNCTIONS[name];
        const count = call.arguments.length;
        if (count < least || count > most) {
          const wanted = least === most ? `${least}` : `at least ${least}`;
          throw new ExpressionProblem(`${name} takes ${wanted} argument${least === 1 && most === 1 ? '' : 's'}, not ${count}`, at);
        }
        return { kind: 'call', name, args: call.arguments.map(recurse) };
      }
      const known = [...Object.keys(POINTWISE_FUNCTIONS), ...Object.keys(TIME_FUNCTIONS), SAMPLE_FUNCTION].join(', ');
      throw new ExpressionProblem(`Unknown function ${callee}; the functions are ${known}`, at);
    }
    default:
      throw new ExpressionProblem('This is not part of the formula language', 0);
  }
}

/**
 * The wire format is snake_case and the console's TypeScript is camelCase; server objects are
 * converted once, here, recursively through nested objects and arrays.
 */

export function snakeToCamel(key: string): string {
  return key.replace(/_+([a-z0-9])/g, (_match, letter: string) => letter.toUpperCase());
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== 'object') return false;
  const prototype = Object.getPrototypeOf(value) as unknown;
  return prototype === Object.prototype || prototype === null;
}

export function toCamelCase<T = unknown>(value: unknown): T {
  if (Array.isArray(value)) return value.map((item) => toCamelCase(item)) as T;
  if (isPlainObject(value)) {
    const converted: Record<string, unknown> = {};
    for (const [key, nested] of Object.entries(value)) converted[snakeToCamel(key)] = toCamelCase(nested);
    return converted as T;
  }
  return value as T;
}

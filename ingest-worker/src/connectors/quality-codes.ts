/**
 * Quality codes as the connector stores and delivers them: the source's own code, verbatim, as the
 * unsigned 32-bit integer the bulk contract takes (an OPC UA StatusCode's value, a Sparkplug metric's
 * `Quality` property). A reading whose source called it good carries none.
 */
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
/** OPC UA's StatusCodes by name, loaded only for buffers that hold names (node-opcua is large). */
let statusCodesByName: Record<string, { value: number } | undefined> | null = null;
const OPCUA_BAD = 0x8000_0000;

/**
 * A code as an unsigned 32-bit integer: a signed 32-bit one (Sparkplug's Int32 property) keeps its
 * bits; anything else that does not fit (a fraction, a code past 32 bits) is cut to its low 32 bits,
 * so the reading still arrives bad, with the code's bits that fit.
 */
export function unsignedQualityCode(code: number): number {
  return Number.isFinite(code) ? Math.trunc(code) >>> 0 : 0;
}

/**
 * The code a buffered reading delivers. Buffers written before codes were numbers hold text: a
 * Sparkplug code in decimal, or an OPC UA StatusCode's name (`BadSensorFailure`), looked up here.
 * A name node-opcua does not know delivers as OPC UA's plain Bad (0x80000000): still bad, never good.
 */
export function deliveredQualityCode(stored: number | string | null): number | null {
  if (stored === null) return null;
  if (typeof stored === 'number') return unsignedQualityCode(stored);
  if (/^-?\d+$/.test(stored)) return unsignedQualityCode(Number(stored));
  statusCodesByName ??= (require('node-opcua-client') as { StatusCodes: Record<string, { value: number } | undefined> }).StatusCodes;
  return unsignedQualityCode(statusCodesByName[stored]?.value ?? OPCUA_BAD);
}

/**
 * Counts as the console writes them, with thousands separators in one fixed style ('10,944')
 * whatever the browser's locale, as dates are written one way (`dates/date-time-format.ts`).
 */
const COUNT = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

export function formatCount(value: number): string {
  return Number.isFinite(value) ? COUNT.format(value) : '-';
}

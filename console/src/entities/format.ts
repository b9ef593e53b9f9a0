/** The type labels of the run screens; dates come from the console's one date module, re-exported here for the entity screens. */
export { formatDate, toDateTimeLocal, type DateTimeStyle as DateFormatName } from '../dates/date-time-format.ts';

/** 'spray_drying' -> 'Spray Drying': underscores become spaces, each word capitalised. */
export function titleCaseType(type: string): string {
  return type
    .split('_')
    .filter((word) => word.length > 0)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(' ');
}

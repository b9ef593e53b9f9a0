/** The type labels of the run screens; dates come from the console's one date module, re-exported here for the entity screens. */
import { formatDate } from '../dates/date-time-format.ts';

export { formatDate, toDateTimeLocal, type DateTimeStyle as DateFormatName } from '../dates/date-time-format.ts';

/** 'spray_drying' -> 'Spray Drying': underscores become spaces, each word capitalised. */
export function titleCaseType(type: string): string {
  return type
    .split('_')
    .filter((word) => word.length > 0)
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(' ');
}

/**
 * A unit operation as pickers list it: '<run name> · Fermentation #41 · 2021-05-02'. The run's name
 * comes first because it is what a user knows the operation by; type and id tell the run's steps apart.
 */
export function unitOperationLabel(
  unitOperation: { id: number; type: string; startTime?: string | null },
  runName: string | null | undefined,
): string {
  const parts = [runName?.trim() || null, `${titleCaseType(unitOperation.type)} #${unitOperation.id}`, unitOperation.startTime ? formatDate(unitOperation.startTime, 'date') : null];
  return parts.filter((part): part is string => part !== null).join(' · ');
}

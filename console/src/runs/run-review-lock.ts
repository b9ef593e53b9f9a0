/** What the run page says on its edit buttons while a run is locked by review (the api refuses such changes with 409). */
import { LOCKED_REVIEW_STATES, REVIEW_STATE_LABELS, type ReviewState } from '@bioprocess/shared/run-review';

export function runLockedText(runName: string, state: ReviewState | undefined): string | null {
  if (!state || !LOCKED_REVIEW_STATES.includes(state)) return null;
  return `Run "${runName}" is ${REVIEW_STATE_LABELS[state]}: reopen it with a reason to change it`;
}

/**
 * The reason-for-change headers of a request: before a mutating request of a record kind whose
 * organisation setting is not "off", the console asks the person for a reason (ChangeReasonDialog) and
 * sends it as X-Change-Reason / X-Change-Reason-Code. Every request path goes through here (the JSON
 * client and the upload's XMLHttpRequest), so no form can forget it; the server is the guard.
 */
import {
  changeReasonHeaders, changeReasonKindOfRequest, changeReasonSettingsSchema,
  type ChangeReason, type ChangeReasonKind, type ChangeReasonSettings,
} from '@bioprocess/shared/change-reasons';
import { getToken } from '../auth/session-store.ts';

export const CHANGE_REASON_SETTINGS_PATH = '/api/v1/organization-settings/change-reasons';
/** The message of a change the person chose not to give a reason for. */
export const CHANGE_REASON_CANCELLED_MESSAGE = 'The change was not made: no reason for change was given';

export class ChangeReasonCancelled extends Error {
  constructor() {
    super(CHANGE_REASON_CANCELLED_MESSAGE);
    this.name = 'ChangeReasonCancelled';
  }
}

/** Asks the person; resolves with the reason (null: none given where optional) or rejects when they cancel. */
export type ChangeReasonPrompt = (request: { kind: ChangeReasonKind; required: boolean; reasons: readonly string[]; method: string }) => Promise<ChangeReason | null>;

let prompt: ChangeReasonPrompt | null = null;
/** The question open for each record kind: the requests one save sends together share one answer. */
const asking = new Map<ChangeReasonKind, Promise<ChangeReason | null>>();

/** Replaces the dialog (tests ask without a browser). */
export function setChangeReasonPrompt(next: ChangeReasonPrompt | null): void {
  prompt = next;
}

async function readSettings(): Promise<ChangeReasonSettings | null> {
  const token = getToken();
  if (!token) return null;
  const response = await fetch(CHANGE_REASON_SETTINGS_PATH, { headers: { Authorization: `Bearer ${token}`, Accept: 'application/json' } });
  if (!response.ok) return null;
  const parsed = changeReasonSettingsSchema.safeParse(await response.json());
  return parsed.success ? parsed.data : null;
}

/**
 * The headers to add to a request: none for reads, for routes of no record kind and where the
 * organisation's setting is off; else what the person gave. Read fresh each time, so an admin's change
 * of the setting applies at once.
 */
export async function changeReasonHeadersFor(method: string, path: string): Promise<Record<string, string>> {
  const kind = changeReasonKindOfRequest(method, path);
  if (!kind) return {};
  const settings = await readSettings();
  const policy = settings?.policies[kind] ?? 'off';
  if (policy === 'off') return {};
  let answer = asking.get(kind);
  if (!answer) {
    answer = (async () => {
      // The dialog's module (and React) loads the first time it is needed.
      prompt ??= (await import('../components/ChangeReasonDialog.tsx')).askForChangeReason;
      return prompt({ kind, required: policy === 'required', reasons: settings?.reasons ?? [], method: method.toUpperCase() });
    })();
    asking.set(kind, answer);
    void answer.then(() => asking.delete(kind), () => asking.delete(kind));
  }
  return changeReasonHeaders(await answer);
}

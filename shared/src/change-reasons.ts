/**
 * Reason for change: which record kinds ask for a reason when they are edited or deleted, the
 * organisation's pick-list of reasons, and how a request carries its reason (two headers, so DELETE and
 * multipart uploads carry it like any JSON request). The api enforces it (api/src/platform/change-reason.ts);
 * the console asks for it (ChangeReasonDialog).
 */
import { z } from 'zod';

export const CHANGE_REASON_KINDS = ['runs', 'unit_operations', 'samples', 'time_series', 'derived_parameters', 'golden_batches'] as const;
export type ChangeReasonKind = (typeof CHANGE_REASON_KINDS)[number];

export const CHANGE_REASON_KIND_LABELS: Record<ChangeReasonKind, string> = {
  runs: 'Runs',
  unit_operations: 'Unit operations',
  samples: 'Samples',
  time_series: 'Time-series uploads and deletions',
  derived_parameters: 'Derived parameters',
  golden_batches: 'Golden batches',
};

export const CHANGE_REASON_POLICIES = ['off', 'optional', 'required'] as const;
export type ChangeReasonPolicy = (typeof CHANGE_REASON_POLICIES)[number];

/**
 * Edits and deletions of the record kinds a reason can be asked for, by `METHOD route` as the api
 * registers its routes. Creating a record is its first entry, not a change, except time series, whose
 * uploads count as changes of the record of the run. The api enforces from it; the console asks from it.
 */
export const CHANGE_REASON_ROUTES: Readonly<Record<string, ChangeReasonKind>> = {
  'PUT /api/v1/runs/:id': 'runs',
  'DELETE /api/v1/runs/:id': 'runs',
  'PUT /api/v1/unit-operations/:id': 'unit_operations',
  'DELETE /api/v1/unit-operations/:id': 'unit_operations',
  'PUT /api/v1/unit-operations/:id/samples': 'samples',
  'PATCH /api/v1/samples/:id': 'samples',
  'DELETE /api/v1/samples/:id': 'samples',
  'POST /api/v1/unit-operations/:id/sample-imports': 'samples',
  'POST /api/v1/unit-operations/:id/csv-uploads': 'time_series',
  'POST /api/v1/unit-operations/csv-uploads': 'time_series',
  'DELETE /api/v1/time-series-data': 'time_series',
  'PUT /api/v1/derived-parameters/:id': 'derived_parameters',
  'DELETE /api/v1/derived-parameters/:id': 'derived_parameters',
  'PUT /api/v1/golden-batches/:id': 'golden_batches',
  'DELETE /api/v1/golden-batches/:id': 'golden_batches',
};

/** The record kind of a request to a concrete path (`/api/v1/runs/12?x=1`), or null. */
export function changeReasonKindOfRequest(method: string, path: string): ChangeReasonKind | null {
  const pathname = path.replace(/^https?:\/\/[^/]+/, '').split(/[?#]/)[0]!.replace(/\/(\d+)(?=\/|$)/g, '/:id');
  return CHANGE_REASON_ROUTES[`${method.toUpperCase()} ${pathname}`] ?? null;
}

/** Free text, percent-encoded UTF-8 (a header value is Latin-1 on the wire). */
export const CHANGE_REASON_HEADER = 'x-change-reason';
/** One entry of the organisation's pick-list. */
export const CHANGE_REASON_CODE_HEADER = 'x-change-reason-code';

export const CHANGE_REASON_MAX_LENGTH = 1000;
export const CHANGE_REASON_CODE_MAX_LENGTH = 100;
export const CHANGE_REASON_PICK_LIST_MAX = 50;

export const changeReasonSettingsSchema = z.object({
  policies: z.object(Object.fromEntries(CHANGE_REASON_KINDS.map((kind) => [kind, z.enum(CHANGE_REASON_POLICIES)])) as Record<ChangeReasonKind, z.ZodEnum<{ off: 'off'; optional: 'optional'; required: 'required' }>>),
  reasons: z.array(z.string()),
});
export type ChangeReasonSettings = z.infer<typeof changeReasonSettingsSchema>;

export const DEFAULT_CHANGE_REASON_SETTINGS: ChangeReasonSettings = {
  policies: Object.fromEntries(CHANGE_REASON_KINDS.map((kind) => [kind, 'off'])) as ChangeReasonSettings['policies'],
  reasons: [],
};

const policySchema = (kind: ChangeReasonKind) =>
  z.enum(CHANGE_REASON_POLICIES, { message: `policies.${kind} must be off, optional or required` });

export const changeReasonSettingsUpdateSchema = z.object({
  policies: z.object(Object.fromEntries(CHANGE_REASON_KINDS.map((kind) => [kind, policySchema(kind)])) as Record<ChangeReasonKind, ReturnType<typeof policySchema>>)
    .partial()
    .strict()
    .optional(),
  reasons: z.array(
    z.string().trim().min(1, 'A reason cannot be empty').max(CHANGE_REASON_CODE_MAX_LENGTH, `A reason must be at most ${CHANGE_REASON_CODE_MAX_LENGTH} characters`),
  )
    .max(CHANGE_REASON_PICK_LIST_MAX, `At most ${CHANGE_REASON_PICK_LIST_MAX} reasons`)
    .refine((list) => new Set(list).size === list.length, { message: 'Each reason may appear once' })
    .optional(),
});
export type ChangeReasonSettingsUpdate = z.infer<typeof changeReasonSettingsUpdateSchema>;

/** The reason a request gave, as stored with its audit events. */
export interface ChangeReason {
  text: string | null;
  code: string | null;
}

export const CHANGE_REASON_MESSAGES = {
  required: (kind: ChangeReasonKind) => `A reason for change is required for ${CHANGE_REASON_KIND_LABELS[kind].toLowerCase()} in this organisation`,
  badEncoding: 'X-Change-Reason must be percent-encoded UTF-8',
  tooLong: `A reason for change must be at most ${CHANGE_REASON_MAX_LENGTH} characters`,
  unknownCode: (code: string) => `'${code}' is not one of the organisation's reasons for change`,
} as const;

const headerText = z.string().optional();

/** The raw headers of a request (or the fields of a body that carries a reason) as received. */
export const changeReasonInputSchema = z.object({ text: headerText, code: headerText });

/**
 * Parses a reason: free text percent-decoded and trimmed, a code checked against the organisation's
 * pick-list. Answers the reason (null when none was given) or the message of what is wrong.
 */
export function parseChangeReason(
  input: { text?: string | null; code?: string | null },
  pickList: readonly string[],
  options: { encoded: boolean } = { encoded: true },
): { ok: true; reason: ChangeReason | null } | { ok: false; error: string } {
  let text: string | null = null;
  if (input.text) {
    try {
      text = (options.encoded ? decodeURIComponent(input.text) : input.text).trim() || null;
    } catch {
      return { ok: false, error: CHANGE_REASON_MESSAGES.badEncoding };
    }
  }
  if (text !== null && text.length > CHANGE_REASON_MAX_LENGTH) return { ok: false, error: CHANGE_REASON_MESSAGES.tooLong };
  let code: string | null = null;
  if (input.code) {
    try {
      code = (options.encoded ? decodeURIComponent(input.code) : input.code).trim() || null;
    } catch {
      return { ok: false, error: CHANGE_REASON_MESSAGES.badEncoding.replace('X-Change-Reason', 'X-Change-Reason-Code') };
    }
    if (code !== null && !pickList.includes(code)) return { ok: false, error: CHANGE_REASON_MESSAGES.unknownCode(code) };
  }
  return { ok: true, reason: text === null && code === null ? null : { text, code } };
}

/** The headers that carry a reason, percent-encoded as the api expects. */
export function changeReasonHeaders(reason: ChangeReason | null): Record<string, string> {
  if (!reason) return {};
  const headers: Record<string, string> = {};
  if (reason.text) headers['X-Change-Reason'] = encodeURIComponent(reason.text);
  if (reason.code) headers['X-Change-Reason-Code'] = encodeURIComponent(reason.code);
  return headers;
}

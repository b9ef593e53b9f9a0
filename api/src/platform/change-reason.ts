/**
 * Reason for change on every mutating route. A route's record kind comes from its `config.changeReason`
 * (a kind, or 'exempt') or else from RECORD_KIND_ROUTES below, one table an inspector can read. Before
 * validation, the hook reads X-Change-Reason / X-Change-Reason-Code, checks a code against the
 * organisation's pick-list, refuses with 400 when the organisation requires a reason for the kind and
 * none came, and leaves the reason on the request, where recordAudit picks it up for every audit event
 * of the request.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import {
  CHANGE_REASON_CODE_HEADER, CHANGE_REASON_HEADER, CHANGE_REASON_KINDS, CHANGE_REASON_ROUTES, CHANGE_REASON_MESSAGES, DEFAULT_CHANGE_REASON_SETTINGS,
  changeReasonSettingsSchema, parseChangeReason, type ChangeReason, type ChangeReasonKind, type ChangeReasonSettings,
} from '@bioprocess/shared/change-reasons';
import type { Queryable } from '@bioprocess/shared/server/postgres';
import type { AppDeps } from './deps.ts';
import { HttpError } from './http-error.ts';

export { parseChangeReason };

/** What a route declares: the record kind its changes belong to, or that no reason applies to it. */
export type ChangeReasonRoute = ChangeReasonKind | 'exempt';

declare module 'fastify' {
  interface FastifyRequest {
    /** The reason the request gave for its change (null: none). */
    changeReason: ChangeReason | null;
  }
  interface FastifyContextConfig {
    changeReason?: ChangeReasonRoute;
  }
}

const MUTATING_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Edits and deletions of the record kinds a reason can be asked for (the table lives in shared, which the console reads too). */
export const RECORD_KIND_ROUTES = CHANGE_REASON_ROUTES;

/**
 * Mutating routes no reason applies to, each with why. A test enumerates the OpenAPI document: a new
 * mutating route is in RECORD_KIND_ROUTES, declares config.changeReason, or is listed here.
 */
export const EXEMPT_ROUTES: Readonly<Record<string, string>> = {
  'POST /api/v1/runs': 'first entry of a record',
  'POST /api/v1/unit-operations': 'first entry of a record',
  'POST /api/v1/derived-parameters': 'first entry of a record',
  'POST /api/v1/golden-batches': 'first entry of a record',
  'POST /api/v1/time-series-data/bulk': 'original capture by an instrument feed (no person to give a reason)',
  'POST /api/v1/derived-parameters/preview': 'changes nothing',
  'POST /api/v1/csv-previews': 'changes nothing',
  'POST /api/v1/analysis/envelope': 'changes nothing',
  'POST /api/v1/analysis/deviation': 'changes nothing',
  'POST /api/v1/analysis/alignment': 'changes nothing',
  'POST /api/v1/exports/organization-archive': 'changes nothing',
  'POST /api/v1/facilities': 'not a record kind of the reason policy',
  'PUT /api/v1/facilities/:id': 'not a record kind of the reason policy',
  'DELETE /api/v1/facilities/:id': 'not a record kind of the reason policy',
  'POST /api/v1/equipment': 'not a record kind of the reason policy',
  'PUT /api/v1/equipment/:id': 'not a record kind of the reason policy',
  'DELETE /api/v1/equipment/:id': 'not a record kind of the reason policy',
  'POST /api/v1/instruments': 'not a record kind of the reason policy',
  'POST /api/v1/instruments/bulk': 'not a record kind of the reason policy',
  'PUT /api/v1/instruments/:id': 'not a record kind of the reason policy',
  'DELETE /api/v1/instruments/:id': 'not a record kind of the reason policy',
  'POST /api/v1/instrument-catalogue/types': 'not a record kind of the reason policy',
  'DELETE /api/v1/instrument-catalogue/types/:id': 'not a record kind of the reason policy',
  'POST /api/v1/instrument-catalogue/units': 'not a record kind of the reason policy',
  'DELETE /api/v1/instrument-catalogue/units/:id': 'not a record kind of the reason policy',
  'POST /api/v1/comments': 'annotation, not a record kind of the reason policy',
  'PUT /api/v1/comments/:id': 'annotation, not a record kind of the reason policy',
  'DELETE /api/v1/comments/:id': 'annotation, not a record kind of the reason policy',
  'POST /api/v1/auth/signup': 'account administration',
  'POST /api/v1/auth/login': 'account administration',
  'POST /api/v1/auth/logout': 'account administration',
  'PUT /api/v1/auth/profile': 'account administration',
  'POST /api/v1/auth/forgot-password': 'account administration',
  'POST /api/v1/auth/reset-password': 'account administration',
  'POST /api/v1/auth/switch-organization': 'account administration',
  'POST /api/v1/auth/invitations/lookup': 'account administration',
  'POST /api/v1/auth/invitations/accept': 'account administration',
  'POST /api/v1/auth/users/invite': 'account administration',
  'POST /api/v1/auth/invitations/:id/resend': 'account administration',
  'DELETE /api/v1/auth/invitations/:id': 'account administration',
  'POST /api/v1/auth/users/:id/roles': 'account administration',
  'DELETE /api/v1/auth/users/:id': 'account administration',
  'PUT /api/v1/auth/users/:id/superuser': 'account administration',
  'POST /api/v1/api-keys': 'account administration',
  'DELETE /api/v1/api-keys/:id': 'account administration',
  'POST /api/v1/organizations': 'organisation administration',
  'PUT /api/v1/organizations/:id': 'organisation administration',
  'DELETE /api/v1/organizations/:id': 'organisation administration',
  'PUT /api/v1/organization-settings': 'organisation administration',
  'PUT /api/v1/organization-settings/change-reasons': 'organisation administration',
  'PUT /api/v1/organization-settings/alert-acknowledgements': 'organisation administration',
  'PUT /api/v1/session-policy': 'organisation administration',
  'PUT /api/v1/signature-meanings': 'organisation administration',
  'DELETE /api/v1/auth/sessions/:id': 'account administration',
  'POST /api/v1/auth/sessions/end-others': 'account administration',
  'POST /api/v1/spreadsheet-conversions': 'changes nothing',
  'POST /api/v1/runs/:id/review': 'review transitions are signed, and reopening takes its reason in its body',
  'POST /api/v1/runs/:id/signatures': 'a signature, not a change of the record',
  'POST /api/v1/alert-rules': 'monitoring configuration, not a record kind of the reason policy',
  'PUT /api/v1/alert-rules/:id': 'monitoring configuration, not a record kind of the reason policy',
  'DELETE /api/v1/alert-rules/:id': 'monitoring configuration, not a record kind of the reason policy',
  'POST /api/v1/alert-events/:id/acknowledge': 'monitoring, not a record kind of the reason policy',
  'PUT /api/v1/alerts/quiet-hours': 'a personal preference',
  'DELETE /api/v1/alerts/quiet-hours': 'a personal preference',
  'POST /api/v1/integrations/connections': 'instrument connection configuration, not a record kind of the reason policy',
  'PATCH /api/v1/integrations/connections/:id': 'instrument connection configuration, not a record kind of the reason policy',
  'DELETE /api/v1/integrations/connections/:id': 'instrument connection configuration, not a record kind of the reason policy',
  'POST /api/v1/integrations/connections/:id/browse': 'changes nothing',
  'POST /api/v1/integrations/connections/:id/mappings': 'instrument connection configuration, not a record kind of the reason policy',
  'POST /api/v1/integrations/connections/:id/mappings/bulk': 'instrument connection configuration, not a record kind of the reason policy',
  'PATCH /api/v1/integrations/connections/:id/mappings/:mappingId': 'instrument connection configuration, not a record kind of the reason policy',
  'DELETE /api/v1/integrations/connections/:id/mappings/:mappingId': 'instrument connection configuration, not a record kind of the reason policy',
};

/** The record kind of a route (null: no reason applies). */
export function recordKindOfRoute(method: string, url: string, declared: ChangeReasonRoute | undefined): ChangeReasonKind | null {
  if (declared) return declared === 'exempt' ? null : declared;
  return RECORD_KIND_ROUTES[`${method} ${url}`] ?? null;
}

/** The organisation's reason settings (defaults: off everywhere, an empty pick-list). */
export async function readChangeReasonSettings(db: Queryable, organizationId: number): Promise<ChangeReasonSettings> {
  const { rows } = await db.query<{ policies: Record<string, unknown>; reasons: unknown }>(
    'SELECT policies, reasons FROM organization_change_reasons WHERE organization_id = $1', [organizationId]);
  if (!rows[0]) return DEFAULT_CHANGE_REASON_SETTINGS;
  const policies = Object.fromEntries(CHANGE_REASON_KINDS.map((kind) => [kind, rows[0]!.policies[kind] ?? 'off']));
  return changeReasonSettingsSchema.parse({ policies, reasons: rows[0].reasons });
}

function singleHeader(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  if (Array.isArray(value)) throw new HttpError(400, `${name} may be given once`);
  return value;
}

export const changeReasonPlugin = fp(async (app: FastifyInstance, deps: AppDeps) => {
  app.decorateRequest('changeReason', null);
  app.addHook('preValidation', async (request) => {
    if (!MUTATING_METHODS.has(request.method)) return;
    const kind = recordKindOfRoute(request.method, request.routeOptions.url ?? '', request.routeOptions.config?.changeReason);
    const text = singleHeader(request, CHANGE_REASON_HEADER);
    const code = singleHeader(request, CHANGE_REASON_CODE_HEADER);
    const principal = request.principal;
    if (!principal || (!kind && !text && !code)) return;
    const settings = await readChangeReasonSettings(deps.pg, principal.organizationId);
    const parsed = parseChangeReason({ text, code }, settings.reasons);
    if (!parsed.ok) throw new HttpError(400, parsed.error);
    if (kind && settings.policies[kind] === 'required' && !parsed.reason) throw new HttpError(400, CHANGE_REASON_MESSAGES.required(kind));
    request.changeReason = parsed.reason;
  });
}, { name: 'change-reason', dependencies: ['authentication'] });

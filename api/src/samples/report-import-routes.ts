/**
 * POST /api/v1/unit-operations/{id}/sample-imports: an analyzer report (CSV, TXT or an Excel workbook's
 * sheet) into the unit operation's samples. Multipart: the `mapping` JSON first, then the `file`. With
 * `?dry_run=true` it answers what it would do and writes nothing; without, it applies the same plan in
 * one transaction through the grid's save (all or nothing, each changed sample audited with before
 * and after), and answers the plan with what it wrote.
 */
import type { Readable } from 'node:stream';
import multipart from '@fastify/multipart';
import { checkCsvFile, isSpreadsheetName } from '@bioprocess/shared/csv/index';
import { errorResponseSchema, idParamsSchema } from '@bioprocess/shared/entities';
import { sampleGridSaveSchema } from '@bioprocess/shared/samples';
import {
  sampleImportPreviewSchema, sampleImportQuerySchema, sampleReportMappingSchema, SAMPLE_IMPORT_MESSAGES, SAMPLE_REPORT_MAPPING_FIELD,
  SAMPLE_REPORT_MAX_BYTES, type SampleImportPreview, type SampleReportMapping,
} from '@bioprocess/shared/samples-import';
import { withTransaction } from '@bioprocess/shared/server/postgres';
import type { App } from '../platform/app-type.ts';
import type { AppDeps } from '../platform/deps.ts';
import { badRequest, HttpError } from '../platform/http-error.ts';
import { principalOf } from '../auth/authenticate.ts';
import { recordAudit } from '../audit/record.ts';
import { requireUnitOperation } from '../unit-operations/repository.ts';
import { refuseLockedUnitOperation } from '../runs/review-lock.ts';
import { spreadsheetCsvLines } from '../timeseries/spreadsheet-csv.ts';
import { SampleGridError } from './grid-errors.ts';
import { saveSampleGrid } from './grid-save.ts';
import { listUnitOperationSamples, lockUnitOperationSamples } from './repository.ts';
import { planReportImport, readReportTable } from './report-import.ts';

const tooLarge = () => new HttpError(413, SAMPLE_IMPORT_MESSAGES.tooLarge);

function parseMapping(text: string): SampleReportMapping {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw badRequest(SAMPLE_IMPORT_MESSAGES.mappingNotJson);
  }
  const parsed = sampleReportMappingSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw badRequest(`mapping${issue.path.length > 0 ? `.${issue.path.join('.')}` : ''}: ${issue.message}`);
  }
  return parsed.data;
}

async function readBounded(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > SAMPLE_REPORT_MAX_BYTES) {
      stream.resume();
      throw tooLarge();
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

/** One sheet of a workbook as the CSV text the report reader takes, bounded like a text report. */
async function readSheet(stream: Readable, sheet: string | null): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const line of spreadsheetCsvLines(stream, sheet)) {
    const bytes = Buffer.from(line, 'utf8');
    size += bytes.length;
    if (size > SAMPLE_REPORT_MAX_BYTES) {
      stream.resume();
      throw tooLarge();
    }
    chunks.push(bytes);
  }
  stream.resume();
  return Buffer.concat(chunks, size);
}

export async function sampleReportImportRoutes(app: App, deps: AppDeps): Promise<void> {
  // The reader's own bound answers 413 first; the parser's is a backstop twice as far.
  await app.register(multipart, { limits: { fileSize: 2 * SAMPLE_REPORT_MAX_BYTES, files: 1, fields: 1, fieldSize: 256 * 1024, parts: 2 } });
  app.post('/api/v1/unit-operations/:id/sample-imports', {
    config: { access: 'edit' },
    schema: {
      tags: ['Samples'],
      summary: "Import an analyzer report into the unit operation's samples (multipart: `mapping` JSON, then the `file`)",
      description:
        'Reads a CSV or text report, or one sheet of an Excel workbook (`mapping.sheet`), with the shared detection (encoding, '
        + 'delimiter, header after a preamble; `header_line: 0` for a report without a header, whose columns are Column 1, ...). '
        + "Each row's sample id is matched to the unit operation's samples (case and surrounding spaces aside); a sample that is not "
        + 'there is created when `drawn_at_column` is mapped, else reported as unmatched. Calibrator, control and blank rows are left '
        + 'out (`exclude`); flagged results (< 0.5, > 50, LOQ with `limit_column`) keep their flag and limit. Layouts: wide (a column '
        + 'per analyte) or long (analyte, value and unit columns); `key_value: true` reads one sample written as key/value lines '
        + '(`Sample ID : CLB001`, `Viability (%);68.2`) as a one-row wide table. A scan over wavelength is refused as one spectrum. '
        + '`?dry_run=true` answers the plan and writes nothing; otherwise the '
        + 'plan is saved in one transaction, each changed sample audited, and the answer counts what was written. '
        + `At most ${SAMPLE_REPORT_MAX_BYTES / (1024 * 1024)} MiB (413 above).`,
      params: idParamsSchema, querystring: sampleImportQuerySchema,
      response: { 200: sampleImportPreviewSchema, 400: errorResponseSchema, 404: errorResponseSchema, 409: errorResponseSchema, 413: errorResponseSchema },
    },
  }, async (request): Promise<SampleImportPreview> => {
    const { organizationId } = principalOf(request);
    if (!request.isMultipart()) throw badRequest('Expected multipart/form-data with a mapping and a file');
    const dryRun = request.query.dry_run;
    let mapping: SampleReportMapping | null = null;
    let bytes: Buffer | null = null;
    for await (const part of request.parts()) {
      if (part.type === 'field') {
        if (part.fieldname !== SAMPLE_REPORT_MAPPING_FIELD) throw badRequest(`Unknown field '${part.fieldname}'`);
        mapping = parseMapping(String(part.value));
        continue;
      }
      if (part.fieldname !== 'file' || bytes) {
        part.file.resume();
        continue;
      }
      if (!mapping) {
        part.file.resume();
        throw badRequest(SAMPLE_IMPORT_MESSAGES.mappingRequired);
      }
      const name = part.filename ?? '';
      const problem = checkCsvFile({ name, size: 1, type: part.mimetype }, { maxBytes: SAMPLE_REPORT_MAX_BYTES });
      if (problem) {
        part.file.resume();
        throw badRequest(problem);
      }
      bytes = isSpreadsheetName(name) ? await readSheet(part.file, mapping.sheet ?? null) : await readBounded(part.file);
    }
    const chosen = mapping as SampleReportMapping | null;
    if (!chosen) throw badRequest(SAMPLE_IMPORT_MESSAGES.mappingRequired);
    if (!bytes) throw badRequest(SAMPLE_IMPORT_MESSAGES.fileRequired);
    const table = readReportTable(bytes, chosen, { maxColumns: deps.env.CSV_MAX_COLUMNS });
    const unitOperation = await requireUnitOperation(deps.pg, organizationId, request.params.id);

    if (dryRun) {
      const stored = await listUnitOperationSamples(deps.pg, unitOperation.id, { limit: Number.MAX_SAFE_INTEGER, offset: 0 });
      return { dry_run: true, ...planReportImport(table, chosen, stored.rows).preview, samples_created: 0, samples_updated: 0 };
    }
    return withTransaction(deps.pg, async (client) => {
      await refuseLockedUnitOperation(client, organizationId, unitOperation.id);
      // The plan is made against the samples as locked, so a concurrent grid save cannot slip between.
      const stored = await lockUnitOperationSamples(client, unitOperation.id);
      const plan = planReportImport(table, chosen, stored);
      const answer: SampleImportPreview = { dry_run: false, ...plan.preview, samples_created: 0, samples_updated: 0 };
      if (plan.save.samples.length === 0) return answer;
      const body = sampleGridSaveSchema.safeParse(plan.save);
      if (!body.success) {
        const issue = body.error.issues[0]!;
        const row = typeof issue.path[1] === 'number' ? plan.save.samples[issue.path[1]] : undefined;
        throw badRequest(`Nothing was imported: ${row ? `sample ${row.sample_id}: ` : ''}${issue.message}`);
      }
      try {
        const counts = await saveSampleGrid(client, organizationId, unitOperation.id, body.data, (action, id, before, after) =>
          recordAudit(client, request, { event_type: 'data', action, resource_type: 'sample', resource_id: id, changes: { before, after } }));
        return { ...answer, samples_created: counts.created, samples_updated: counts.updated };
      } catch (error) {
        if (error instanceof SampleGridError) throw badRequest(`Nothing was imported: ${error.message}`);
        throw error;
      }
    });
  });
}

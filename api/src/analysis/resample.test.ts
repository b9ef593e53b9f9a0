import { describe, expect, it } from 'vitest';
import type { ClickHouseClient } from '@bioprocess/shared/server/clickhouse';
import { HttpError } from '../platform/http-error.ts';
import { ANALYSIS_BUSY_MESSAGE, envelopeStatistics } from './resample.ts';

const member = { unitOperationId: 1, startMs: 0, endMs: 3_600_000, timeZeroMs: 0, instruments: [[5, 0]] as Array<[number, number]> };
const failing = (error: Error) => ({ query: () => Promise.reject(error) }) as unknown as ClickHouseClient;

describe('envelope statistics on a busy database', () => {
  it('answers 503 when the ClickHouse client gives up waiting, and passes other failures on', async () => {
    const band = { kind: 'percentiles', lower: 5, upper: 95 } as const;
    const busy = await envelopeStatistics(failing(new Error('Timeout error.')), 1, [member], 60_000, band).catch((error: unknown) => error);
    expect(busy).toBeInstanceOf(HttpError);
    expect(busy).toMatchObject({ statusCode: 503, message: ANALYSIS_BUSY_MESSAGE });
    const stopped = await envelopeStatistics(failing(new Error('Code: 159, e.displayText() = DB::Exception: Timeout exceeded: elapsed 25.1 seconds')), 1, [member], 60_000, band).catch((error: unknown) => error);
    expect(stopped).toMatchObject({ statusCode: 503 });
    const other = await envelopeStatistics(failing(new Error('Code: 60, table missing')), 1, [member], 60_000, band).catch((error: unknown) => error);
    expect(other).not.toBeInstanceOf(HttpError);
  });
});

/**
 * The run detail's golden-batch card: for each unit operation with a saved golden batch of its type,
 * the parameters flagged by the deviation endpoint (their excursion score reached the threshold),
 * worst first, each with why; "nothing flagged" otherwise. A running unit operation is compared up to
 * now; one that has not started is not asked about. A band of fewer than five references is warned about.
 */
import { Callout, Card, Elevation, H4, HTMLTable, Intent, Spinner, Tag } from '@blueprintjs/core';
import { useEffect, useMemo, useState } from 'react';
import { Link } from 'react-router-dom';
import { deviationSchema, goldenBatchSchema, type GoldenBatch } from '@bioprocess/shared/analysis';
import { z } from 'zod';
import { apiRequest } from '../api/client.ts';
import { useApi } from '../api/hooks.ts';
import { titleCaseType } from '../entities/format.ts';
import type { Camelize, UnitOperation } from '../entities/types.ts';
import { LEFT_OUT_LABELS, type CamelDeviation } from '../analyze/analyze-model.ts';
import { formatScore } from '../analyze/analyze-model.ts';
import { conformanceIntent, conformancePairs, conformanceRows, type ConformancePair } from './golden-conformance.ts';

const goldenBatchListSchema = z.array(goldenBatchSchema);

type Outcome = { state: 'loading' } | { state: 'done'; deviation: CamelDeviation } | { state: 'failed'; message: string };

const intentOf = { success: Intent.SUCCESS, danger: Intent.DANGER, none: Intent.NONE } as const;

function PairRow({ pair, outcome }: { pair: ConformancePair; outcome: Outcome | undefined }) {
  const [expanded, setExpanded] = useState(false);
  const label = `${titleCaseType(pair.unitOperationType)} · ${pair.goldenBatchName}`;
  if (!outcome || outcome.state === 'loading') {
    return <tr data-testid="conformance-row"><td>{label}</td><td><Spinner size={16} /></td></tr>;
  }
  if (outcome.state === 'failed') {
    return <tr data-testid="conformance-row"><td>{label}</td><td className="bp6-text-muted">{outcome.message}</td></tr>;
  }
  const leftOut = outcome.deviation.targetsLeftOut.find((entry) => entry.unitOperationId === pair.unitOperationId);
  const rows = conformanceRows(outcome.deviation, pair.unitOperationId);
  const flagged = rows.filter((row) => row.flagged);
  const others = rows.filter((row) => !row.flagged);
  const compared = rows.filter((row) => row.compared > 0).length;
  return (
    <tr data-testid="conformance-row">
      <td>{label}</td>
      <td>
        {outcome.deviation.warnings.map((warning) => (
          <div key={warning} className="app-conformance-warning bp6-text-muted" data-testid="conformance-warning">{warning}</div>
        ))}
        {leftOut ? <span className="bp6-text-muted">Not compared: {LEFT_OUT_LABELS[leftOut.reason] ?? leftOut.reason}</span>
          : rows.length === 0 ? <span className="bp6-text-muted">No parameter in common</span> : (
            <>
              {flagged.length === 0 ? (
                <Tag minimal intent={compared > 0 ? Intent.SUCCESS : Intent.NONE} data-testid="conformance-clear">
                  {compared > 0 ? `Nothing flagged (${compared} parameter${compared === 1 ? '' : 's'} compared)` : 'Nothing compared yet'}
                </Tag>
              ) : (
                <ul className="app-conformance-flagged">
                  {flagged.map((row) => (
                    <li key={row.parameter} data-testid="conformance-parameter">
                      <Tag minimal intent={Intent.DANGER} title={`Score ${formatScore(row.score)} band widths x hours`}>{row.label}</Tag>{' '}
                      <span data-testid="conformance-reason">{row.reason}</span>
                    </li>
                  ))}
                </ul>
              )}
              {others.length > 0 ? (
                <div className="app-conformance-tags">
                  <Tag minimal interactive onClick={() => setExpanded(!expanded)} data-testid="conformance-others">
                    {expanded ? 'fewer' : `${others.length} not flagged`}
                  </Tag>
                  {expanded ? others.map((row) => (
                    <Tag key={row.parameter} minimal intent={intentOf[conformanceIntent(row)]} title={row.reason}>
                      {row.label}: {formatScore(row.score)}
                    </Tag>
                  )) : null}
                </div>
              ) : null}
            </>
          )}
      </td>
    </tr>
  );
}

export function GoldenBatchConformanceCard({ unitOperations }: { unitOperations: readonly UnitOperation[] | undefined }) {
  const batches = useApi<Array<Camelize<GoldenBatch>>>('/api/v1/golden-batches', goldenBatchListSchema);
  const pairs = useMemo(() => conformancePairs(unitOperations ?? [], batches.data ?? []), [unitOperations, batches.data]);
  const [outcomes, setOutcomes] = useState<Record<string, Outcome>>({});
  const pairsKey = pairs.map((pair) => `${pair.unitOperationId}:${pair.goldenBatchId}`).join(',');

  useEffect(() => {
    let current = true;
    setOutcomes(Object.fromEntries(pairs.map((pair) => [`${pair.unitOperationId}:${pair.goldenBatchId}`, { state: 'loading' } as Outcome])));
    for (const pair of pairs) {
      const key = `${pair.unitOperationId}:${pair.goldenBatchId}`;
      apiRequest<CamelDeviation>('POST', '/api/v1/analysis/deviation',
        { golden_batch_id: pair.goldenBatchId, target_unit_operation_ids: [pair.unitOperationId] }, { schema: deviationSchema })
        .then((deviation): Outcome => ({ state: 'done', deviation }))
        .catch((failure: unknown): Outcome => ({ state: 'failed', message: failure instanceof Error ? failure.message : String(failure) }))
        .then((outcome) => { if (current) setOutcomes((previous) => ({ ...previous, [key]: outcome })); });
    }
    return () => { current = false; };
    // pairsKey names the pairs; the array itself is rebuilt on every render of the lists.
  }, [pairsKey]);

  if (batches.error) return null;
  if (!batches.data || pairs.length === 0) return null;
  return (
    <Card elevation={Elevation.ONE} className="app-section-card" data-testid="golden-conformance-card">
      <div className="app-section-card-header"><H4>Golden batches</H4></div>
      <Callout className="app-conformance-note" icon={null}>
        Parameters flagged against each golden batch, worst first: scored by how far and how long they were outside the band
        (band widths x hours); times are h:mm of process time. <Link to="/analyze">Analyze</Link> shows the envelopes.
      </Callout>
      <HTMLTable compact className="app-conformance-table">
        <tbody>{pairs.map((pair) => {
          const key = `${pair.unitOperationId}:${pair.goldenBatchId}`;
          return <PairRow key={key} pair={pair} outcome={outcomes[key]} />;
        })}</tbody>
      </HTMLTable>
    </Card>
  );
}

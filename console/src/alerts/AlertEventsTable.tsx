/**
 * Firings in a table: state, rule, what happened, where, when, and who acknowledged it (with an
 * Acknowledge button for editors), with the acknowledgement's signature where one was required.
 */
import { useState } from 'react';
import { Button, HTMLTable, Intent, NonIdealState, Spinner, Tag } from '@blueprintjs/core';
import { Link } from 'react-router-dom';
import { formatDate } from '../dates/date-time-format.ts';
import { AcknowledgeAlertDialog } from './AcknowledgeAlertDialog.tsx';
import { conditionWord, type AlertEventView } from './alert-queries.ts';

export interface AlertEventsTableProps {
  events: readonly AlertEventView[] | undefined;
  loading: boolean;
  error?: Error | null;
  canAcknowledge: boolean;
  /** Hides the run column (on a run's own page). */
  showRun?: boolean;
  onChanged: () => void;
  emptyText?: string;
}

type AcknowledgementSignatureView = NonNullable<AlertEventView['acknowledgementSignature']>;

/** Who signed, when (in the organisation's zone) and with what meaning, and whether the firing still hashes to what was signed. */
function AcknowledgementSignature({ signature }: { signature: AcknowledgementSignatureView }) {
  return (
    <div className="alert-acknowledgement-signature" data-testid="alert-acknowledgement-signature">
      <Tag minimal icon="draw" intent={signature.validity === 'valid' ? Intent.SUCCESS : Intent.WARNING}>
        {signature.validity === 'valid' ? 'Signed' : signature.validity === 'revoked' ? 'Signature revoked' : 'Signature no longer valid: the alert changed'}
      </Tag>
      <div className="bp6-text-muted bp6-text-small">
        {signature.meaningLabel} by {signature.signerName} ({signature.signerEmail}), {signature.signedAtLocal}
      </div>
    </div>
  );
}

export function AlertEventsTable({ events, loading, error, canAcknowledge, showRun = true, onChanged, emptyText = 'No alert has fired.' }: AlertEventsTableProps) {
  const [acknowledging, setAcknowledging] = useState<AlertEventView | null>(null);
  if (error) return <NonIdealState icon="error" description={`Alerts could not be loaded: ${error.message}`} />;
  if (loading && !events) return <Spinner size={24} />;
  if (!events || events.length === 0) return <NonIdealState icon="notifications" description={emptyText} />;
  return (
    <>
      <div className="alert-events-scroll">
        <HTMLTable compact striped className="alert-events-table" data-testid="alert-events-table">
          <thead>
            <tr>
              <th>State</th><th>Rule</th><th>What</th>{showRun ? <th>Run</th> : null}<th>Fired</th><th>Resolved</th><th>Acknowledged</th>
            </tr>
          </thead>
          <tbody>
            {events.map((event) => (
              <tr key={event.id} data-testid="alert-event-row">
                <td>
                  <Tag intent={event.state === 'firing' ? 'danger' : 'none'} minimal={event.state !== 'firing'} round>
                    {event.state === 'firing' ? 'Firing' : 'Resolved'}
                  </Tag>
                </td>
                <td>{event.ruleName}<div className="bp6-text-muted bp6-text-small">{conditionWord(event.conditionKind)}</div></td>
                <td>{event.message}</td>
                {showRun ? (
                  <td>
                    {event.runId !== null ? (
                      <Link to={event.unitOperationId !== null ? `/runs/${event.runId}/unit-operations/${event.unitOperationId}` : `/runs/${event.runId}`}>
                        {event.runName ?? `Run ${event.runId}`}
                      </Link>
                    ) : '—'}
                  </td>
                ) : null}
                <td>{formatDate(event.firedAt)}</td>
                <td>{event.resolvedAt ? formatDate(event.resolvedAt) : '—'}</td>
                <td>
                  {event.acknowledgedAt ? (
                    <span data-testid="alert-acknowledgement">
                      {event.acknowledgement}
                      <div className="bp6-text-muted bp6-text-small">{event.acknowledgedByName ?? 'A former user'}, {formatDate(event.acknowledgedAt)}</div>
                      {event.acknowledgementSignature ? <AcknowledgementSignature signature={event.acknowledgementSignature} /> : null}
                    </span>
                  ) : canAcknowledge ? (
                    <Button size="small" icon="tick" text="Acknowledge" onClick={() => setAcknowledging(event)} />
                  ) : <span className="bp6-text-muted">Not yet</span>}
                </td>
              </tr>
            ))}
          </tbody>
        </HTMLTable>
      </div>
      <AcknowledgeAlertDialog event={acknowledging} onClose={() => setAcknowledging(null)} onDone={() => { setAcknowledging(null); onChanged(); }} />
    </>
  );
}

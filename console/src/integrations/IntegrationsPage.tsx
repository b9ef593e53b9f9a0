/**
 * Integrations (/integrations): the organisation's connections to MQTT brokers and OPC UA servers, each
 * with its live state (refreshed every few seconds) and its mappings to instruments. Admins add, edit
 * and delete connections, browse a source and map it in one step, and delete mappings; editors and
 * viewers see the same page read-only.
 */
import { Button, Callout, Card, Elevation, HTMLTable, Intent, NonIdealState, Spinner, Tag } from '@blueprintjs/core';
import type { ConnectionState } from '@bioprocess/shared/integrations';
import { useState } from 'react';
import { z } from 'zod';
import { instrumentSchema } from '@bioprocess/shared/entities';
import { apiRequest } from '../api/client.ts';
import { useApi } from '../api/hooks.ts';
import { useAuth } from '../auth/useAuth.ts';
import { AppTooltip } from '../components/AppTooltip.tsx';
import { formatCount } from '../components/count-format.ts';
import { ConfirmDialog } from '../components/dialogs/ConfirmDialog.tsx';
import { PageHeader } from '../components/PageHeader.tsx';
import { formatDate } from '../dates/date-time-format.ts';
import type { Camelize } from '../entities/types.ts';
import { useSettingsAction } from '../settings/use-settings-action.ts';
import { BrowseMapDialog } from './BrowseMapDialog.tsx';
import { ConnectionDialog } from './ConnectionDialog.tsx';
import {
  connectionPath, mappingsPath, useConnections, useConnectionStatus, useMappings, type Connection, type Mapping, type Status,
} from './integration-queries.ts';
import '../settings/settings.css';
import './integrations.css';

type Instrument = Camelize<z.infer<typeof instrumentSchema>>;

const STATE_LABELS: Record<ConnectionState, { label: string; intent: Intent }> = {
  connected: { label: 'Connected', intent: Intent.SUCCESS },
  connecting: { label: 'Connecting', intent: Intent.WARNING },
  disconnected: { label: 'Disconnected', intent: Intent.NONE },
  error: { label: 'Error', intent: Intent.DANGER },
  disabled: { label: 'Disabled', intent: Intent.NONE },
};

const KIND_LABELS = { mqtt: 'MQTT', opcua: 'OPC UA' } as const;

/** Who the connector signs in as, after the endpoint. */
function signInText(connection: Connection): string {
  if (connection.kind === 'mqtt') return connection.settings.username ? ` as ${connection.settings.username}` : '';
  const { settings } = connection;
  if (settings.userIdentity === 'certificate') return ` with the user certificate ${settings.userCertificate?.subject ?? ''}`.trimEnd();
  return settings.userIdentity === 'username' ? ` as ${settings.username ?? ''}` : ' (anonymous)';
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${formatCount(bytes)} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value >= 10 ? Math.round(value) : value.toFixed(1)} ${units[unit]}`;
}

function StateTag({ status }: { status: Status | undefined }) {
  if (!status) return <Tag minimal round>Unknown</Tag>;
  const { label, intent } = STATE_LABELS[status.state];
  return <Tag minimal round intent={intent} data-testid="connection-state">{label}</Tag>;
}

/** The numbers of a connection's state, refreshed every few seconds. */
function StatusFacts({ status, error }: { status: Status | undefined; error: Error | undefined }) {
  if (error && !status) return <Callout intent={Intent.WARNING} compact>Status unavailable: {error.message}</Callout>;
  if (!status) return <Spinner size={20} />;
  return (
    <>
      <dl className="app-settings-facts app-integrations-facts" data-testid="connection-status">
        <dt>State</dt><dd><StateTag status={status} /></dd>
        <dt>Last message</dt><dd data-testid="last-message">{status.lastMessageAt ? formatDate(status.lastMessageAt, 'dateTime') : 'none yet'}</dd>
        <dt>Messages</dt><dd data-testid="messages-per-minute">{formatCount(status.messagesPerMinute)} per minute</dd>
        <dt>Points</dt><dd data-testid="points-per-minute">{formatCount(status.pointsPerMinute)} per minute</dd>
        <dt>Buffered</dt>
        <dd data-testid="buffered">
          {formatBytes(status.bufferedBytes)} of {formatBytes(status.bufferLimitBytes)}
          {status.bufferedBytes > 0 ? <span className="bp6-text-muted"> (waiting to be delivered)</span> : null}
        </dd>
      </dl>
      {status.errors.length > 0 ? (
        <Callout intent={Intent.DANGER} icon="error" title="Recent errors" compact className="app-integrations-errors" data-testid="connection-errors">
          <ul>
            {status.errors.slice(0, 5).map((item, index) => <li key={`${item.at}-${index}`}><span className="bp6-text-muted">{formatDate(item.at, 'dateTime')}</span> {item.message}</li>)}
          </ul>
        </Callout>
      ) : null}
    </>
  );
}

function MappingsTable({ connection, mappings, instruments, canManage, onDelete }: {
  connection: Connection;
  mappings: Mapping[];
  instruments: Map<number, Instrument>;
  canManage: boolean;
  onDelete: (mapping: Mapping) => void;
}) {
  return (
    <HTMLTable striped compact className="app-settings-table" data-testid="mappings-table">
      <thead>
        <tr>
          <th>{connection.kind === 'opcua' ? 'Node' : 'Topic'}</th>
          {connection.kind === 'mqtt' ? <th>Value</th> : null}
          <th>Instrument</th><th>Unit</th><th>Timestamp</th>{connection.kind === 'opcua' ? <th>Bad quality</th> : null}
          {canManage ? <th className="app-actions-cell">Actions</th> : null}
        </tr>
      </thead>
      <tbody>
        {mappings.map((mapping) => {
          const instrument = instruments.get(mapping.instrumentId);
          return (
            <tr key={mapping.id} data-testid={`mapping-row-${mapping.id}`}>
              <td><code>{mapping.source}</code></td>
              {connection.kind === 'mqtt' ? <td><code>{mapping.payloadFormat === 'number' ? 'the payload' : mapping.valuePath}</code> <Tag minimal>{mapping.payloadFormat}</Tag></td> : null}
              <td className="app-cell-strong">{instrument?.name ?? `Instrument ${mapping.instrumentId}`}</td>
              <td>{mapping.unit ?? instrument?.unit ?? '-'}</td>
              <td>{mapping.timestampPath ? <code>{mapping.timestampPath}</code> : <span className="bp6-text-muted">{connection.kind === 'opcua' ? 'source timestamp' : mapping.payloadFormat === 'sparkplug' ? 'metric timestamp' : 'arrival'}</span>}</td>
              {connection.kind === 'opcua' ? <td>{mapping.badQuality === 'drop' ? 'dropped' : 'stored as missing'}</td> : null}
              {canManage ? (
                <td className="app-actions-cell">
                  <AppTooltip content="Delete mapping">
                    <Button icon="trash" size="small" variant="minimal" intent={Intent.DANGER} aria-label={`Delete the mapping to ${instrument?.name ?? mapping.instrumentId}`} onClick={() => onDelete(mapping)} />
                  </AppTooltip>
                </td>
              ) : null}
            </tr>
          );
        })}
      </tbody>
    </HTMLTable>
  );
}

function ConnectionCard({ connection, instruments, canManage, onEdit, onDelete, onInstrumentsCreated }: {
  connection: Connection;
  instruments: Map<number, Instrument>;
  canManage: boolean;
  onEdit: () => void;
  onDelete: () => void;
  onInstrumentsCreated: () => Promise<unknown>;
}) {
  const status = useConnectionStatus(connection.id);
  const mappings = useMappings(connection.id);
  const [mapping, setMapping] = useState(false);
  const [deleting, setDeleting] = useState<Mapping | null>(null);
  const { busy, run } = useSettingsAction();

  const deleteMapping = async () => {
    if (!deleting) return;
    await run(() => apiRequest('DELETE', `${mappingsPath(connection.id)}/${deleting.id}`), {
      success: 'Mapping deleted',
      failure: 'Failed to delete the mapping',
      then: async () => {
        setDeleting(null);
        await mappings.mutate();
      },
    });
  };

  return (
    <Card elevation={Elevation.ONE} className="app-integrations-card" data-testid={`connection-${connection.name}`}>
      <div className="app-settings-panel-head">
        <div>
          <h3 className="app-settings-panel-title">
            {connection.name} <Tag minimal>{KIND_LABELS[connection.kind]}</Tag> <StateTag status={status.data} />
          </h3>
          <p className="bp6-text-muted"><code>{connection.endpointUrl}</code>{signInText(connection)}</p>
        </div>
        {canManage ? (
          <div className="app-settings-panel-actions">
            <Button icon="search-around" intent={Intent.PRIMARY} text="Browse and Map" onClick={() => setMapping(true)} disabled={!connection.enabled} />
            <Button icon="edit" text="Edit" onClick={onEdit} aria-label={`Edit ${connection.name}`} />
            <AppTooltip content="Delete connection">
              <Button icon="trash" intent={Intent.DANGER} variant="minimal" aria-label={`Delete ${connection.name}`} onClick={onDelete} />
            </AppTooltip>
          </div>
        ) : null}
      </div>
      <StatusFacts status={status.data} error={status.error} />
      <h4 className="app-settings-subheading">Mappings</h4>
      {mappings.error ? <Callout intent={Intent.DANGER} icon="error">Failed to load mappings: {mappings.error.message}</Callout> : null}
      {mappings.isLoading ? <Spinner size={20} /> : null}
      {mappings.data && mappings.data.length === 0 ? (
        <p className="bp6-text-muted" data-testid="no-mappings">Nothing is mapped yet{canManage ? ': use Browse and Map to choose what becomes an instrument.' : '.'}</p>
      ) : null}
      {mappings.data && mappings.data.length > 0 ? (
        <div className="app-settings-table-scroll">
          <MappingsTable connection={connection} mappings={mappings.data} instruments={instruments} canManage={canManage} onDelete={setDeleting} />
        </div>
      ) : null}
      {canManage ? (
        <BrowseMapDialog connection={connection} isOpen={mapping} onClose={() => setMapping(false)}
          onMapped={async () => {
            setMapping(false);
            await Promise.all([mappings.mutate(), onInstrumentsCreated()]);
          }} />
      ) : null}
      <ConfirmDialog isOpen={deleting !== null} title="Delete mapping" destructive busy={busy} confirmLabel="Delete" onClose={() => setDeleting(null)} onConfirm={deleteMapping}
        description={deleting ? `Stop recording ${deleting.source}${deleting.valuePath ? ` ${deleting.valuePath}` : ''} into ${instruments.get(deleting.instrumentId)?.name ?? 'its instrument'}? The instrument and its readings stay.` : undefined} />
    </Card>
  );
}

export function IntegrationsPage() {
  const { permissions } = useAuth();
  const canManage = permissions.canManageUsers;
  const connections = useConnections();
  const instruments = useApi<Instrument[]>('/api/v1/instruments?limit=10000', z.array(instrumentSchema));
  const [editing, setEditing] = useState<Connection | null>(null);
  const [dialogOpen, setDialogOpen] = useState(false);
  const [deleting, setDeleting] = useState<Connection | null>(null);
  const { busy, run } = useSettingsAction();
  const instrumentsById = new Map((instruments.data ?? []).map((instrument) => [instrument.id, instrument]));

  const remove = async () => {
    if (!deleting) return;
    await run(() => apiRequest('DELETE', connectionPath(deleting.id)), {
      success: 'Connection deleted',
      failure: 'Failed to delete the connection',
      then: async () => {
        setDeleting(null);
        await connections.mutate();
      },
    });
  };

  return (
    <div className="app-page">
      <PageHeader title="Integrations" subtitle="Instruments that stream in on their own: MQTT brokers and OPC UA servers, and which of their values become which instrument."
        actions={canManage ? <Button icon="add" intent={Intent.PRIMARY} text="Add Connection" onClick={() => { setEditing(null); setDialogOpen(true); }} /> : undefined} />
      {canManage ? null : (
        <Callout intent={Intent.PRIMARY} icon="info-sign" className="app-integrations-readonly" data-testid="integrations-read-only">
          Only organisation admins change connections and mappings; you see their state.
        </Callout>
      )}
      {connections.error ? <Callout intent={Intent.DANGER} icon="error">Failed to load connections: {connections.error.message}</Callout> : null}
      {connections.isLoading ? <Spinner size={28} /> : null}
      {connections.data && connections.data.length === 0 ? (
        <Card elevation={Elevation.ONE}>
          <NonIdealState icon="data-connection" title="No connections"
            description={canManage ? 'Add an OPC UA server or an MQTT broker, then browse it to choose what becomes an instrument.' : 'An organisation admin adds connections here.'} />
        </Card>
      ) : null}
      <div className="app-integrations-list">
        {(connections.data ?? []).map((connection) => (
          <ConnectionCard key={connection.id} connection={connection} instruments={instrumentsById} canManage={canManage}
            onEdit={() => { setEditing(connection); setDialogOpen(true); }} onDelete={() => setDeleting(connection)}
            onInstrumentsCreated={() => instruments.mutate()} />
        ))}
      </div>
      {canManage ? (
        <ConnectionDialog connection={editing} isOpen={dialogOpen} onClose={() => setDialogOpen(false)}
          onSaved={async () => {
            setDialogOpen(false);
            await connections.mutate();
          }} />
      ) : null}
      <ConfirmDialog isOpen={deleting !== null} title="Delete connection" destructive busy={busy} confirmLabel="Delete" onClose={() => setDeleting(null)} onConfirm={remove}
        description={deleting ? `Delete ${deleting.name} and its mappings? Its instruments and the readings already stored stay.` : undefined} />
    </div>
  );
}

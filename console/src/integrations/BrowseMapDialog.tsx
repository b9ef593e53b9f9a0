/**
 * Browse a source and map it in one step: pick OPC UA tags in the server's address space (or a
 * folder's tags at once), or an MQTT topic (a wildcard for a group) with the values of its payload;
 * choose the unit operation whose equipment gets the instruments; the names and units come prefilled
 * from the server (its display names and EngineeringUnits). One request creates the instruments and
 * the mappings, all or nothing.
 */
import {
  Button, Callout, Checkbox, FormGroup, HTMLSelect, HTMLTable, InputGroup, Intent, NonIdealState, Spinner, Tag, Tree, type TreeNodeInfo,
} from '@blueprintjs/core';
import { useEffect, useMemo, useState } from 'react';
import { apiRequest } from '../api/client.ts';
import { useApi } from '../api/hooks.ts';
import { FormDialog } from '../components/dialogs/FormDialog.tsx';
import { runListSchema, unitOperationListSchema, type Run, type UnitOperation } from '../entities/types.ts';
import { useSettingsAction } from '../settings/use-settings-action.ts';
import { instrumentUnitFor } from './engineering-units.ts';
import { browse, connectionPath, type BrowseItem, type Connection } from './integration-queries.ts';
import { payloadValuePaths, timestampPathOf } from './payload-paths.ts';

interface Row { key: string; source: string; valuePath: string | null; name: string; unit: string }

interface TreeEntry { item: BrowseItem; children: string[] | null; loading: boolean; expanded: boolean; error: string | null }

function unitOperationLabel(operation: UnitOperation, runs: Map<number, Run>): string {
  const run = runs.get(operation.runId);
  return `${run?.name ?? `Run ${operation.runId}`} · ${operation.type} (${operation.status})`;
}

/** The OPC UA address space as a lazily loaded tree with a checkbox on every variable. */
function OpcuaPicker({ connection, selected, onToggle }: {
  connection: Connection;
  selected: Map<string, BrowseItem>;
  onToggle: (items: BrowseItem[], on: boolean) => void;
}) {
  const [entries, setEntries] = useState<Map<string, TreeEntry>>(new Map());
  const [roots, setRoots] = useState<string[] | null>(null);
  const [error, setError] = useState<string | null>(null);

  const load = async (nodeId: string | null) => {
    if (nodeId) setEntries((current) => new Map(current).set(nodeId, { ...current.get(nodeId)!, loading: true, expanded: true, error: null }));
    try {
      const items = await browse(connection.id, nodeId);
      setEntries((current) => {
        const next = new Map(current);
        for (const item of items) if (!next.has(item.id)) next.set(item.id, { item, children: null, loading: false, expanded: false, error: null });
        if (nodeId) next.set(nodeId, { ...next.get(nodeId)!, children: items.map((item) => item.id), loading: false });
        return next;
      });
      if (!nodeId) setRoots(items.map((item) => item.id));
    } catch (cause) {
      const message = cause instanceof Error ? cause.message : 'Browse failed.';
      if (nodeId) setEntries((current) => new Map(current).set(nodeId, { ...current.get(nodeId)!, loading: false, error: message }));
      else setError(message);
    }
  };
  useEffect(() => {
    void load(null);
    // Loaded once per dialog: the tree keeps what was opened.
  }, [connection.id]);

  const nodeOf = (id: string): TreeNodeInfo<string> => {
    const entry = entries.get(id)!;
    const { item } = entry;
    const variables = (entry.children ?? []).map((child) => entries.get(child)!.item).filter((child) => child.kind === 'variable');
    const label = item.kind === 'variable' ? (
      <Checkbox className="app-integrations-tree-check" checked={selected.has(item.id)} label={item.name}
        onChange={(event) => onToggle([item], event.currentTarget.checked)} onClick={(event) => event.stopPropagation()} />
    ) : item.name;
    return {
      id,
      label,
      icon: item.kind === 'variable' ? 'variable' : entry.expanded ? 'folder-open' : 'folder-close',
      hasCaret: item.hasChildren,
      isExpanded: entry.expanded,
      secondaryLabel: item.kind === 'variable' ? (
        <span className="app-integrations-tree-facts">{item.sample ?? ''}{item.unit ? ` ${item.unit}` : ''}</span>
      ) : entry.loading ? <Spinner size={14} /> : entry.error ? <Tag minimal intent={Intent.DANGER}>{entry.error}</Tag> : variables.length > 0 ? (
        <Button size="small" variant="minimal" text={`Select all ${variables.length} tags`} onClick={(event) => { event.stopPropagation(); onToggle(variables, true); }} />
      ) : undefined,
      childNodes: entry.expanded && entry.children ? entry.children.map(nodeOf) : undefined,
    };
  };

  const toggle = (node: TreeNodeInfo<string>, expand: boolean) => {
    const id = String(node.id);
    const entry = entries.get(id);
    if (!entry) return;
    if (expand && entry.children === null) void load(id);
    else setEntries((current) => new Map(current).set(id, { ...entry, expanded: expand }));
  };

  if (error) return <Callout intent={Intent.DANGER} icon="error" data-testid="browse-error">{error}</Callout>;
  if (roots === null) return <Spinner size={28} />;
  if (roots.length === 0) return <NonIdealState icon="folder-open" title="The server lists no objects" />;
  return (
    <div className="app-integrations-tree" data-testid="opcua-tree">
      <Tree contents={roots.map(nodeOf)} onNodeExpand={(node) => toggle(node, true)} onNodeCollapse={(node) => toggle(node, false)}
        onNodeClick={(node) => { if (node.hasCaret) toggle(node, !node.isExpanded); }} />
    </div>
  );
}

/** The topics the connector saw lately, with a sample payload; picking one fills the topic filter. */
function MqttPicker({ connection, onPick }: { connection: Connection; onPick: (topic: BrowseItem) => void }) {
  const [topics, setTopics] = useState<BrowseItem[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  const load = async () => {
    setLoading(true);
    setError(null);
    try {
      setTopics(await browse(connection.id, null));
    } catch (cause) {
      setError(cause instanceof Error ? cause.message : 'Browse failed.');
    } finally {
      setLoading(false);
    }
  };
  useEffect(() => {
    void load();
  }, [connection.id]);
  return (
    <div className="app-integrations-topics" data-testid="mqtt-topics">
      <div className="app-integrations-topics-head">
        <span className="bp6-text-muted">Topics seen in the last 10 minutes</span>
        <Button size="small" icon="refresh" text="Refresh" loading={loading} onClick={() => void load()} />
      </div>
      {error ? <Callout intent={Intent.DANGER} icon="error" data-testid="browse-error">{error}</Callout> : null}
      {topics && topics.length === 0 ? <NonIdealState icon="inbox" title="No messages yet" description="Topics appear here once the broker delivers messages to the connector." /> : null}
      {topics && topics.length > 0 ? (
        <HTMLTable compact interactive className="app-settings-table">
          <thead><tr><th>Topic</th><th>Sample payload</th></tr></thead>
          <tbody>
            {topics.map((topic) => (
              <tr key={topic.id} onClick={() => onPick(topic)} data-testid={`topic-${topic.id}`}>
                <td><code>{topic.name}</code></td>
                <td className="app-integrations-sample"><code>{topic.sample ?? ''}</code></td>
              </tr>
            ))}
          </tbody>
        </HTMLTable>
      ) : null}
    </div>
  );
}

export function BrowseMapDialog({ connection, isOpen, onClose, onMapped }: {
  connection: Connection;
  isOpen: boolean;
  onClose: () => void;
  onMapped: (count: number) => void | Promise<void>;
}) {
  const runs = useApi<Run[]>(isOpen ? '/api/v1/runs?limit=1000' : null, runListSchema);
  const operations = useApi<UnitOperation[]>(isOpen ? '/api/v1/unit-operations?limit=1000' : null, unitOperationListSchema);
  const [unitOperationId, setUnitOperationId] = useState('');
  const [selected, setSelected] = useState<Map<string, BrowseItem>>(new Map());
  const [rows, setRows] = useState<Row[]>([]);
  const [topic, setTopic] = useState('');
  const [format, setFormat] = useState<'json' | 'sparkplug' | 'number'>('json');
  const [timestampPath, setTimestampPath] = useState('');
  const [offeredPaths, setOfferedPaths] = useState<string[]>([]);
  const [badQuality, setBadQuality] = useState<'missing' | 'drop'>('missing');
  const [error, setError] = useState<string | null>(null);
  const { busy, run } = useSettingsAction();

  useEffect(() => {
    if (!isOpen) return;
    setSelected(new Map());
    setRows([]);
    setTopic('');
    setOfferedPaths([]);
    setTimestampPath('');
    setError(null);
  }, [isOpen]);

  const runsById = useMemo(() => new Map((runs.data ?? []).map((item) => [item.id, item])), [runs.data]);
  // Only a unit operation with equipment can hold instruments; running ones first, they are what a feed is for.
  const choices = useMemo(() => {
    const order = { Active: 0, Pending: 1, Completed: 2 } as Record<string, number>;
    return (operations.data ?? []).filter((operation) => operation.equipmentId !== null)
      .sort((a, b) => (order[a.status] ?? 3) - (order[b.status] ?? 3) || b.id - a.id);
  }, [operations.data]);
  useEffect(() => {
    if (!unitOperationId && choices[0]) setUnitOperationId(String(choices[0].id));
  }, [choices, unitOperationId]);

  const toggleTags = (items: BrowseItem[], on: boolean) => {
    const next = new Map(selected);
    for (const item of items) {
      if (on) next.set(item.id, item);
      else next.delete(item.id);
    }
    setSelected(next);
    setRows((current) => {
      const kept = current.filter((row) => next.has(row.source));
      const added = [...next.values()].filter((item) => !kept.some((row) => row.source === item.id))
        .map((item) => ({ key: item.id, source: item.id, valuePath: null, name: item.name, unit: instrumentUnitFor(item.unit) }));
      return [...kept, ...added];
    });
  };

  const pickTopic = (item: BrowseItem) => {
    setTopic(item.id);
    const offered = payloadValuePaths(item.sample, item.id, item.dataType);
    setFormat(offered.format);
    setOfferedPaths(offered.paths);
    setTimestampPath(offered.format === 'json' ? timestampPathOf(item.sample) ?? '' : '');
    setRows([]);
  };
  const togglePath = (path: string, on: boolean) => {
    setRows((current) => on
      ? [...current, { key: path, source: topic, valuePath: path, name: path.replace(/^\$\./, ''), unit: '' }]
      : current.filter((row) => row.valuePath !== path));
  };
  const addNumberTopic = () => setRows([{ key: topic, source: topic, valuePath: null, name: topic.split('/').filter(Boolean).pop() ?? topic, unit: '' }]);

  const update = (key: string, change: Partial<Row>) => setRows((current) => current.map((row) => (row.key === key ? { ...row, ...change } : row)));

  const submit = async () => {
    if (!unitOperationId) return setError('Choose the unit operation whose equipment gets the instruments.');
    if (rows.length === 0) return setError(connection.kind === 'opcua' ? 'Select at least one tag.' : 'Choose a topic and at least one value.');
    if (rows.some((row) => !row.name.trim())) return setError('Every instrument needs a name.');
    setError(null);
    const mappings = rows.map((row) => ({
      source: connection.kind === 'mqtt' ? topic.trim() : row.source,
      ...(connection.kind === 'mqtt' ? { payload_format: format, value_path: row.valuePath, timestamp_path: format === 'json' ? timestampPath.trim() || null : null } : {}),
      bad_quality: badQuality,
      unit: row.unit.trim() || null,
      instrument: { unit_operation_id: Number(unitOperationId), name: row.name.trim(), unit: row.unit.trim() || null },
    }));
    await run(() => apiRequest('POST', `${connectionPath(connection.id)}/mappings/bulk`, { mappings }), {
      success: `${rows.length} ${rows.length === 1 ? 'instrument' : 'instruments'} mapped`,
      failure: (message) => setError(message ?? 'Failed to create the mappings.'),
      then: () => onMapped(rows.length),
    });
  };

  return (
    <FormDialog title={`Browse and Map: ${connection.name}`} icon="search-around" isOpen={isOpen} onClose={onClose} onSubmit={submit} busy={busy} size="3xl"
      submitLabel={rows.length > 0 ? `Create ${rows.length} ${rows.length === 1 ? 'Instrument' : 'Instruments'}` : 'Create Instruments'}
      description={connection.kind === 'opcua'
        ? 'Open the server\'s folders and tick the tags to record. Each becomes an instrument on the chosen unit operation\'s equipment, named and with the unit the server gives.'
        : 'Pick a topic the broker delivered, or type a topic filter (+ and # match a group of topics), then the values of its payload to record.'}>
      <div className="app-integrations-map">
        <div className="app-integrations-map-source">
          {connection.kind === 'opcua'
            ? <OpcuaPicker connection={connection} selected={selected} onToggle={toggleTags} />
            : <MqttPicker connection={connection} onPick={pickTopic} />}
        </div>
        <div className="app-integrations-map-target">
          <FormGroup label="Unit operation" labelFor="map-unit-operation" helperText="The instruments are created on its equipment; readings inside its window chart on its run.">
            <HTMLSelect id="map-unit-operation" fill value={unitOperationId} onChange={(event) => setUnitOperationId(event.target.value)}>
              {choices.length === 0 ? <option value="">No unit operation with equipment</option> : null}
              {choices.map((operation) => <option key={operation.id} value={operation.id}>{unitOperationLabel(operation, runsById)}</option>)}
            </HTMLSelect>
          </FormGroup>
          {connection.kind === 'mqtt' ? (
            <>
              <div className="app-integrations-form-row">
                <FormGroup label="Topic filter" labelFor="map-topic" className="app-settings-grow">
                  <InputGroup id="map-topic" value={topic} placeholder="lab/+/offgas" onChange={(event) => setTopic(event.target.value)} />
                </FormGroup>
                <FormGroup label="Payload" labelFor="map-format">
                  <HTMLSelect id="map-format" value={format} onChange={(event) => { setFormat(event.target.value as typeof format); setRows([]); }}>
                    <option value="json">JSON</option>
                    <option value="sparkplug">Sparkplug B</option>
                    <option value="number">A number</option>
                  </HTMLSelect>
                </FormGroup>
              </div>
              {format === 'json' ? (
                <FormGroup label="Timestamp path" labelFor="map-timestamp" labelInfo="(optional)" helperText="Where the payload says when it was measured; empty takes the time the message arrived.">
                  <InputGroup id="map-timestamp" value={timestampPath} placeholder="$.time" onChange={(event) => setTimestampPath(event.target.value)} />
                </FormGroup>
              ) : null}
              {format === 'number' ? (
                <Button icon="add" text="Record this topic" disabled={!topic.trim()} onClick={addNumberTopic} />
              ) : (
                <ValuePathPicker offered={offeredPaths} chosen={rows.map((row) => row.valuePath ?? '')} format={format} disabled={!topic.trim()} onToggle={togglePath} />
              )}
            </>
          ) : (
            <FormGroup label="Bad quality" labelFor="map-bad-quality" helperText="A reading the server marks Bad is stored as a missing value with its status code, or dropped.">
              <HTMLSelect id="map-bad-quality" value={badQuality} onChange={(event) => setBadQuality(event.target.value as 'missing' | 'drop')}>
                <option value="missing">Store as missing</option>
                <option value="drop">Drop</option>
              </HTMLSelect>
            </FormGroup>
          )}
          {rows.length > 0 ? (
            <HTMLTable compact className="app-settings-table app-integrations-rows" data-testid="map-rows">
              <thead><tr><th>{connection.kind === 'opcua' ? 'Tag' : 'Value'}</th><th>Instrument name</th><th>Unit</th></tr></thead>
              <tbody>
                {rows.map((row) => (
                  <tr key={row.key}>
                    <td><code>{row.valuePath ?? selected.get(row.source)?.name ?? row.source}</code></td>
                    <td><InputGroup size="small" aria-label={`Instrument name for ${row.valuePath ?? row.source}`} value={row.name} onChange={(event) => update(row.key, { name: event.target.value })} /></td>
                    <td><InputGroup size="small" aria-label={`Unit for ${row.valuePath ?? row.source}`} value={row.unit} placeholder="none" onChange={(event) => update(row.key, { unit: event.target.value })} /></td>
                  </tr>
                ))}
              </tbody>
            </HTMLTable>
          ) : <p className="bp6-text-muted app-integrations-hint">{connection.kind === 'opcua' ? 'No tags selected yet.' : 'No values chosen yet.'}</p>}
          {error ? <Callout intent={Intent.DANGER} compact data-testid="map-error">{error}</Callout> : null}
        </div>
      </div>
    </FormDialog>
  );
}

/** The numeric values found in the sample payload, offered as checkboxes, and any other path typed by hand. */
function ValuePathPicker({ offered, chosen, format, disabled, onToggle }: {
  offered: string[];
  chosen: string[];
  format: 'json' | 'sparkplug';
  disabled: boolean;
  onToggle: (path: string, on: boolean) => void;
}) {
  const [typed, setTyped] = useState('');
  const extra = chosen.filter((path) => !offered.includes(path));
  return (
    <FormGroup label={format === 'json' ? 'Values (JSON paths)' : 'Values (Sparkplug metrics)'}>
      {[...offered, ...extra].map((path) => (
        <Checkbox key={path} label={path} checked={chosen.includes(path)} disabled={disabled} onChange={(event) => onToggle(path, event.currentTarget.checked)} />
      ))}
      <div className="app-integrations-form-row">
        <InputGroup className="app-settings-grow" value={typed} disabled={disabled} aria-label="Another value path"
          placeholder={format === 'json' ? '$.reactor.temperature' : 'Metric name'} onChange={(event) => setTyped(event.target.value)} />
        <Button icon="add" text="Add" disabled={disabled || !typed.trim() || chosen.includes(typed.trim())}
          onClick={() => { onToggle(typed.trim(), true); setTyped(''); }} />
      </div>
    </FormGroup>
  );
}

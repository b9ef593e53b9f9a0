/**
 * The preview table of the CSV section, where the columns are mapped: each header selects its column,
 * assigns it (timestamp, a new instrument or an existing one) and, for value columns, turns on filling
 * gaps and converts the unit on request; the body shows the first rows with long cells cut. A file
 * without a header row names its columns here. Above it, a rule ('wells', 'TAG-*') selects every
 * matching column as a new instrument at once, for a plate or a row of parallel reactors.
 */
import { useState } from 'react';
import { Button, Checkbox, HTMLSelect, HTMLTable, InputGroup, Tag } from '@blueprintjs/core';
import { truncatePreviewCell } from '@bioprocess/shared/csv/index';
import type { Instrument } from '../entities/types.ts';
import {
  assignColumn, assignMatchingAsNew, columnRule, conversionProblem, conversionStart, setSelected, WELL_PATTERN,
  type ColumnAssignment, type ColumnConversion, type ColumnState,
} from './column-mapping.ts';

export const PREVIEW_TABLE_ROWS = 10;

export interface ColumnMappingTableProps {
  columns: readonly ColumnState[];
  rows: readonly (readonly string[])[];
  /** The equipment's instruments a column may be assigned to. */
  instruments: readonly Instrument[];
  /** The long-format key columns, which never fill gaps nor convert. */
  keyColumns: readonly string[];
  fillForward: ReadonlySet<string>;
  onColumnsChange: (update: (columns: ColumnState[]) => ColumnState[]) => void;
  onFillForwardChange: (column: string, fill: boolean) => void;
  /** Unit conversions asked for, by column. */
  conversions: ReadonlyMap<string, ColumnConversion>;
  onConversionChange: (column: string, conversion: ColumnConversion | null) => void;
  /** The file has no header row: each column's name can be changed (Column 1, Column 2, ... to start with). */
  onRename?: (index: number, name: string) => void;
}

export function ColumnMappingTable({
  columns, rows, instruments, keyColumns, fillForward, onColumnsChange, onFillForwardChange, conversions, onConversionChange, onRename,
}: ColumnMappingTableProps) {
  return (
    <>
      <MatchingColumns columns={columns} onColumnsChange={onColumnsChange} />
      <div className="csv-preview-scroll">
      <HTMLTable compact bordered striped className="csv-preview-table" data-testid="csv-preview">
        <thead>
          <tr>
            {columns.map((column, index) => (
              <th key={column.name} className={column.selected ? 'csv-col-selected' : undefined}>
                {onRename && <ColumnName index={index} name={column.name} onRename={onRename} />}
                <Checkbox className="csv-col-check" checked={column.selected} label={column.name} title={column.name}
                  onChange={(event) => {
                    const checked = event.currentTarget.checked;
                    onColumnsChange((cols) => setSelected(cols, column.name, checked));
                  }} />
                <HTMLSelect className="csv-col-assign" aria-label={`Assignment of ${column.name}`} disabled={!column.selected}
                  value={assignmentValue(column.assignment)} fill
                  onChange={(event) => {
                    const assignment = parseAssignment(event.target.value);
                    onColumnsChange((cols) => assignColumn(cols, column.name, assignment));
                  }}>
                  <option value="empty">Choose...</option>
                  <option value="timestamp">Timestamp</option>
                  <option value="new">New instrument</option>
                  {instruments.length > 0 && (
                    <optgroup label="Existing instruments">
                      {instruments.map((i) => <option key={i.id} value={`existing:${i.id}`}>{i.name}{i.unit ? ` [${i.unit}]` : ''}</option>)}
                    </optgroup>
                  )}
                </HTMLSelect>
                <AssignmentTag column={column} />
                {column.selected && column.assignment.kind !== 'timestamp' && !keyColumns.includes(column.name) && (
                  <>
                    <Checkbox className="csv-col-fill" checked={fillForward.has(column.name)} label="Fill gaps"
                      title="Deadband exports: an empty cell repeats the column's last value"
                      onChange={(event) => onFillForwardChange(column.name, event.currentTarget.checked)} />
                    <UnitConversion column={column.name} conversion={conversions.get(column.name)} onChange={onConversionChange} />
                  </>
                )}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.slice(0, PREVIEW_TABLE_ROWS).map((row, rowIndex) => (
            <tr key={rowIndex}>
              {row.map((cell, cellIndex) => <td key={cellIndex} title={cell}>{truncatePreviewCell(cell)}</td>)}
            </tr>
          ))}
        </tbody>
      </HTMLTable>
      </div>
    </>
  );
}

/** A header-less file's column name, changed when the field is left or Enter is pressed. */
function ColumnName({ index, name, onRename }: { index: number; name: string; onRename: (index: number, name: string) => void }) {
  const [text, setText] = useState(name);
  const commit = () => {
    if (text.trim() !== '' && text.trim() !== name) onRename(index, text.trim());
    else setText(name);
  };
  return (
    <InputGroup size="small" className="csv-col-name" aria-label={`Name of column ${index + 1}`} value={text}
      onChange={(event) => setText(event.target.value)} onBlur={commit}
      onKeyDown={(event) => { if (event.key === 'Enter') { event.preventDefault(); commit(); } }} />
  );
}

/**
 * Units stay as written unless converted here: from the header's unit (or typed) to another unit of
 * the same quantity (mL/h to L/h, [degF] to Cel). A pair that does not convert says so, naming both.
 */
function UnitConversion({ column, conversion, onChange }: {
  column: string; conversion: ColumnConversion | undefined; onChange: (column: string, conversion: ColumnConversion | null) => void;
}) {
  if (!conversion) {
    return <Button size="small" variant="minimal" icon="exchange" text="Convert unit" className="csv-col-convert" onClick={() => onChange(column, conversionStart(column))} />;
  }
  const problem = conversionProblem(conversion);
  return (
    <div className="csv-col-conversion" data-testid={`csv-convert-${column}`}>
      <InputGroup size="small" aria-label={`Convert ${column} from unit`} placeholder="from" value={conversion.from}
        onChange={(event) => onChange(column, { ...conversion, from: event.target.value })} />
      <span aria-hidden>→</span>
      <InputGroup size="small" aria-label={`Convert ${column} to unit`} placeholder="to, e.g. L/h" value={conversion.to}
        onChange={(event) => onChange(column, { ...conversion, to: event.target.value })} />
      <Button size="small" variant="minimal" icon="cross" aria-label={`Keep ${column} as written`} title="Keep the values as written" onClick={() => onChange(column, null)} />
      {problem && <span role="alert"><Tag minimal multiline intent="danger" className="csv-col-problem">{problem}</Tag></span>}
    </div>
  );
}

/** The rule field: how many unassigned columns it matches, and one click to make each a new instrument. */
function MatchingColumns({ columns, onColumnsChange }: Pick<ColumnMappingTableProps, 'columns' | 'onColumnsChange'>) {
  const [rule, setRule] = useState('');
  const matches = columnRule(rule);
  const matching = matches ? columns.filter((column) => column.assignment.kind === 'empty' && matches(column.name)).length : 0;
  const apply = () => {
    if (matches) onColumnsChange((cols) => assignMatchingAsNew(cols, matches));
  };
  return (
    <div className="csv-matching-columns" data-testid="csv-matching-columns">
      <InputGroup aria-label="Columns matching" placeholder="Columns matching: TAG-*, R? pH, or wells" value={rule} size="small"
        onChange={(event) => setRule(event.target.value)} onKeyDown={(event) => { if (event.key === 'Enter') { event.preventDefault(); apply(); } }} />
      <Button size="small" variant="minimal" text="Plate wells" onClick={() => setRule(WELL_PATTERN)} />
      <Button size="small" icon="add" disabled={matching === 0} onClick={apply} data-testid="csv-matching-apply"
        text={matches ? `Add ${matching} column(s) as new instruments` : 'Add matching columns as new instruments'} />
    </div>
  );
}

function assignmentValue(assignment: ColumnAssignment): string {
  return assignment.kind === 'existing' ? `existing:${assignment.instrumentId}` : assignment.kind;
}

function parseAssignment(value: string): ColumnAssignment {
  if (value.startsWith('existing:')) return { kind: 'existing', instrumentId: Number(value.slice('existing:'.length)) };
  if (value === 'timestamp' || value === 'new') return { kind: value };
  return { kind: 'empty' };
}

function AssignmentTag({ column }: { column: ColumnState }) {
  if (!column.selected) return <Tag minimal className="csv-col-tag">not imported</Tag>;
  switch (column.assignment.kind) {
    case 'timestamp': return <Tag minimal intent="primary" icon="time" className="csv-col-tag">timestamp</Tag>;
    case 'existing': return <Tag minimal intent="success" icon="tick" className="csv-col-tag">instrument</Tag>;
    case 'new': return <Tag minimal intent="warning" icon="wrench" className="csv-col-tag">set up</Tag>;
    default: return <Tag minimal intent="danger" className="csv-col-tag">unassigned</Tag>;
  }
}

/**
 * The samples grid, keyboard-first as a spreadsheet: arrows, Tab and Shift+Tab move; Enter or F2
 * edits and Enter again commits and moves down; typing replaces the cell; Delete clears it; Escape
 * cancels an edit; a paste of a block (from a spreadsheet) lands at the active cell or, with a header
 * row, by column name. Each bad cell is marked in place with its message. Editing rules and checks
 * live in grid-model.ts; this component draws them.
 */
import { useEffect, useRef, useState, type ClipboardEvent, type KeyboardEvent } from 'react';
import { Button, HTMLTable, Icon } from '@blueprintjs/core';
import { applyPaste, removeRow, setCell, type GridState } from './grid-model.ts';
import { parsePaste } from './paste-parser.ts';

export interface SampleGridProps {
  state: GridState;
  onChange: (next: GridState) => void;
  /** Messages by row key, then column key. */
  problems: ReadonlyMap<string, ReadonlyMap<string, string>>;
  readOnly: boolean;
}

interface Position {
  row: number;
  column: number;
}

function clamp(value: number, min: number, max: number): number {
  return Math.max(min, Math.min(max, value));
}

export function SampleGrid({ state, onChange, problems, readOnly }: SampleGridProps) {
  const gridRef = useRef<HTMLDivElement>(null);
  const [active, setActive] = useState<Position>({ row: 0, column: 0 });
  const [editing, setEditing] = useState<(Position & { text: string }) | null>(null);
  // Editors always have one blank row at the end to type a new sample into.
  const rowCount = state.rows.length + (readOnly ? 0 : 1);
  const columnCount = state.columns.length;

  useEffect(() => {
    setActive((current) => ({ row: clamp(current.row, 0, Math.max(0, rowCount - 1)), column: clamp(current.column, 0, Math.max(0, columnCount - 1)) }));
  }, [rowCount, columnCount]);

  const textAt = (position: Position) => {
    const column = state.columns[position.column];
    return column ? state.rows[position.row]?.cells[column.key] ?? '' : '';
  };

  const move = (rowDelta: number, columnDelta: number) => {
    setActive((current) => {
      let row = current.row + rowDelta;
      let column = current.column + columnDelta;
      // Tab past the last column continues on the next row, as in a spreadsheet.
      if (column >= columnCount && columnDelta > 0) { column = 0; row += 1; }
      if (column < 0 && columnDelta < 0) { column = columnCount - 1; row -= 1; }
      return { row: clamp(row, 0, Math.max(0, rowCount - 1)), column: clamp(column, 0, columnCount - 1) };
    });
  };

  /** Writes the editor's text into the cell it was opened on (the active cell may have moved on since). */
  const commit = (text: string) => {
    if (!editing) return;
    const column = state.columns[editing.column];
    if (column && text !== textAt(editing)) onChange(setCell(state, editing.row, column.key, text));
    setEditing(null);
  };

  const focusGrid = () => gridRef.current?.focus();

  const onGridKeyDown = (event: KeyboardEvent<HTMLDivElement>) => {
    if (editing) return;
    const column = state.columns[active.column];
    switch (event.key) {
      case 'ArrowUp': move(-1, 0); break;
      case 'ArrowDown': move(1, 0); break;
      case 'ArrowLeft': move(0, -1); break;
      case 'ArrowRight': move(0, 1); break;
      case 'Tab': move(0, event.shiftKey ? -1 : 1); break;
      case 'Home': setActive((current) => ({ ...current, column: 0 })); break;
      case 'End': setActive((current) => ({ ...current, column: columnCount - 1 })); break;
      case 'Enter':
      case 'F2':
        if (readOnly) return;
        setEditing({ ...active, text: textAt(active) });
        break;
      case 'Delete':
      case 'Backspace':
        if (readOnly || !column) return;
        if (textAt(active) !== '') onChange(setCell(state, active.row, column.key, ''));
        break;
      default:
        if (readOnly || event.key.length !== 1 || event.ctrlKey || event.metaKey || event.altKey) return;
        setEditing({ ...active, text: event.key });
        break;
    }
    event.preventDefault();
  };

  const onEditorKeyDown = (event: KeyboardEvent<HTMLInputElement>) => {
    const text = event.currentTarget.value;
    if (event.key === 'Enter') { commit(text); move(1, 0); }
    else if (event.key === 'Tab') { commit(text); move(0, event.shiftKey ? -1 : 1); }
    else if (event.key === 'Escape') setEditing(null);
    else return;
    event.preventDefault();
    event.stopPropagation();
    focusGrid();
  };

  const onPaste = (event: ClipboardEvent<HTMLDivElement>) => {
    if (readOnly) return;
    const text = event.clipboardData.getData('text/plain');
    // A single value pasted while editing goes into the editor like any text.
    if (editing && !/[\t\n]/.test(text.replace(/\r?\n$/, ''))) return;
    event.preventDefault();
    const parsed = parsePaste(text);
    if (parsed.rows.length === 0) return;
    setEditing(null);
    onChange(applyPaste(state, parsed, active));
    focusGrid();
  };

  return (
    <div className="samples-grid" ref={gridRef} tabIndex={0} role="grid" aria-label="Samples" aria-readonly={readOnly}
      aria-rowcount={rowCount + 1} aria-colcount={columnCount} data-testid="samples-grid"
      onKeyDown={onGridKeyDown} onPaste={onPaste}>
      <HTMLTable compact bordered className="samples-grid-table">
        <thead>
          <tr>
            <th className="samples-grid-row-head" aria-label="Row" />
            {state.columns.map((column) => (
              <th key={column.key} scope="col" title={column.spec.kind === 'result' && column.spec.method ? `${column.label} (${column.spec.method})` : column.label}>
                {column.label}
                {column.spec.kind === 'result' && column.spec.method ? <span className="samples-grid-method">{column.spec.method}</span> : null}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {Array.from({ length: rowCount }, (_, rowIndex) => {
            const row = state.rows[rowIndex];
            const rowProblems = row ? problems.get(row.key) : undefined;
            return (
              <tr key={row?.key ?? 'blank'} data-testid="samples-grid-row">
                <th scope="row" className="samples-grid-row-head">
                  <span className="samples-grid-row-number">{rowIndex + 1}</span>
                  {!readOnly && row ? (
                    <Button size="small" variant="minimal" icon="trash" aria-label={`Remove row ${rowIndex + 1}`} tabIndex={-1}
                      onClick={() => { onChange(removeRow(state, rowIndex)); focusGrid(); }} />
                  ) : null}
                </th>
                {state.columns.map((column, columnIndex) => {
                  const isActive = active.row === rowIndex && active.column === columnIndex;
                  const problem = rowProblems?.get(column.key);
                  const text = row?.cells[column.key] ?? '';
                  return (
                    <td key={column.key} role="gridcell" aria-selected={isActive} aria-invalid={problem ? true : undefined}
                      data-testid="sample-cell" data-row={rowIndex + 1} data-column={column.label} data-error={problem}
                      className={['samples-grid-cell', isActive ? 'samples-grid-cell-active' : '', problem ? 'samples-grid-cell-invalid' : ''].join(' ')}
                      onMouseDown={() => { if (!isActive) setActive({ row: rowIndex, column: columnIndex }); }}
                      onDoubleClick={() => { if (!readOnly) setEditing({ row: rowIndex, column: columnIndex, text }); }}>
                      {editing && editing.row === rowIndex && editing.column === columnIndex ? (
                        <input className="bp6-input bp6-small samples-grid-editor" autoFocus defaultValue={editing.text} aria-label={`${column.label}, row ${rowIndex + 1}`}
                          onKeyDown={onEditorKeyDown} onBlur={(event) => commit(event.currentTarget.value)}
                          onFocus={(event) => { const input = event.currentTarget; input.setSelectionRange(input.value.length, input.value.length); }} />
                      ) : (
                        <span className="samples-grid-text">
                          {text}
                          {problem ? <Icon icon="error" intent="danger" size={12} className="samples-grid-error-icon" title={problem} /> : null}
                        </span>
                      )}
                      {problem && isActive && !editing ? <span className="samples-grid-message" role="alert">{problem}</span> : null}
                    </td>
                  );
                })}
              </tr>
            );
          })}
        </tbody>
      </HTMLTable>
    </div>
  );
}

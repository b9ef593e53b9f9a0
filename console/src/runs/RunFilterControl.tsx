/**
 * The add-filter control of the All runs page: pick a column, an operator and a value.
 * Select columns offer the existing values, date columns a date, the scale a number.
 */
import { Button, FormGroup, HTMLSelect, InputGroup, Intent, PopoverNext } from '@blueprintjs/core';
import { useState } from 'react';
import {
  buildFilter, FILTER_COLUMNS, filterColumn, OPERATOR_LABELS, selectOptions, type FilterColumnKey, type FilterDraft, type RunFilter,
} from '../entities/run-filters.ts';
import type { Run } from '../entities/types.ts';
import { DateField } from '../dates/DateField.tsx';

const EMPTY_DRAFT: FilterDraft = { column: '', operator: 'equals', value: '' };

export function RunFilterControl({ runs, onAdd }: { runs: readonly Run[]; onAdd: (filter: RunFilter) => void }) {
  const [isOpen, setIsOpen] = useState(false);
  const [draft, setDraft] = useState<FilterDraft>(EMPTY_DRAFT);
  const [error, setError] = useState<string | null>(null);
  const column = draft.column ? filterColumn(draft.column) : null;

  const chooseColumn = (key: FilterColumnKey | '') => {
    // A new column starts with its first operator and an empty value: values never carry across kinds.
    setDraft({ column: key, operator: key ? filterColumn(key).operators[0]! : 'equals', value: '' });
    setError(null);
  };

  const add = () => {
    const result = buildFilter(draft);
    if ('error' in result) {
      setError(result.error);
      return;
    }
    onAdd(result.filter);
    setDraft(EMPTY_DRAFT);
    setError(null);
    setIsOpen(false);
  };

  const valueInput = () => {
    // Controlled like the inputs that replace it, so React never sees one input switch modes.
    if (!column) return <InputGroup id="filter-value" disabled readOnly value="" placeholder="Choose a column first" />;
    switch (column.kind) {
      case 'select':
        return (
          <HTMLSelect id="filter-value" fill value={draft.value} onChange={(event) => setDraft({ ...draft, value: event.target.value })}>
            <option value="" disabled>Select a value...</option>
            {selectOptions(column.key, runs).map((option) => <option key={option} value={option}>{option}</option>)}
          </HTMLSelect>
        );
      case 'date':
        return <DateField id="filter-value" value={draft.value} onChange={(value) => setDraft({ ...draft, value })} />;
      case 'number':
        return (
          <InputGroup id="filter-value" fill inputMode="decimal" value={draft.value} placeholder="Value"
            onChange={(event) => setDraft({ ...draft, value: event.target.value })} onKeyDown={(event) => { if (event.key === 'Enter') add(); }} />
        );
      default:
        return <InputGroup id="filter-value" value={draft.value} placeholder="Value" onChange={(event) => setDraft({ ...draft, value: event.target.value })}
          onKeyDown={(event) => { if (event.key === 'Enter') add(); }} />;
    }
  };

  return (
    <PopoverNext
      isOpen={isOpen}
      onInteraction={(next) => setIsOpen(next)}
      placement="bottom-start"
      content={(
        <div className="app-filter-popover" data-testid="filter-popover">
          <FormGroup label="Column" labelFor="filter-column">
            <HTMLSelect id="filter-column" fill value={draft.column} onChange={(event) => chooseColumn(event.target.value as FilterColumnKey | '')}>
              <option value="" disabled>Select a column...</option>
              {FILTER_COLUMNS.map((option) => <option key={option.key} value={option.key}>{option.label}</option>)}
            </HTMLSelect>
          </FormGroup>
          <FormGroup label="Operator" labelFor="filter-operator">
            <HTMLSelect id="filter-operator" fill disabled={!column} value={draft.operator}
              onChange={(event) => setDraft({ ...draft, operator: event.target.value as FilterDraft['operator'] })}>
              {(column?.operators ?? ['equals']).map((operator) => <option key={operator} value={operator}>{OPERATOR_LABELS[operator]}</option>)}
            </HTMLSelect>
          </FormGroup>
          <FormGroup label="Value" labelFor="filter-value">{valueInput()}</FormGroup>
          {error ? <div className="app-filter-error" role="alert">{error}</div> : null}
          <Button intent={Intent.PRIMARY} text="Apply filter" icon="tick" onClick={add} disabled={!draft.column || draft.value.trim() === ''} />
        </div>
      )}
    >
      <Button icon="filter" text="Add filter" variant="outlined" />
    </PopoverNext>
  );
}

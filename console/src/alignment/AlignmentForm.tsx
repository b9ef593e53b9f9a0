/**
 * The choice of time zero, shared by Analyze and Compare runs: the unit operation's start, the first
 * comment naming a word, or the first time a parameter crosses a value upward or downward.
 */
import { FormGroup, HTMLSelect, InputGroup, NumericInput } from '@blueprintjs/core';
import type { Alignment } from '@bioprocess/shared/analysis';
import { INSTRUMENT_TYPES, type InstrumentType } from '@bioprocess/shared/enums';
import { ALIGNMENT_LABELS, alignmentParameterLabel } from './alignment-labels.ts';
import './alignment-form.css';

export interface AlignmentFormProps {
  value: Alignment;
  onChange: (alignment: Alignment) => void;
  /** The parameters a threshold can be set on; every instrument type while none is known. */
  parameters: readonly InstrumentType[];
}

export function AlignmentForm({ value, onChange, parameters }: AlignmentFormProps) {
  return (
    <div className="alignment-form" data-testid="alignment-form">
      <FormGroup label="Time zero">
        <HTMLSelect value={value.kind} aria-label="Time zero"
          onChange={(event) => {
            const kind = event.currentTarget.value as Alignment['kind'];
            onChange(kind === 'start' ? { kind } : kind === 'event' ? { kind, word: 'induced' } : { kind, parameter: parameters[0] ?? 'dissolved_o2', value: 30, direction: 'down' });
          }}
          options={Object.entries(ALIGNMENT_LABELS).map(([kind, label]) => ({ value: kind, label }))} />
      </FormGroup>
      {value.kind === 'event' ? (
        <FormGroup label="Comment word"><InputGroup aria-label="Comment word" value={value.word} onValueChange={(word) => onChange({ kind: 'event', word })} /></FormGroup>
      ) : null}
      {value.kind === 'threshold' ? (
        <div className="alignment-threshold">
          <HTMLSelect aria-label="Threshold parameter" value={value.parameter} onChange={(event) => onChange({ ...value, parameter: event.currentTarget.value as InstrumentType })}
            options={(parameters.length ? parameters : INSTRUMENT_TYPES).map((type) => ({ value: type, label: alignmentParameterLabel(type) }))} />
          <HTMLSelect aria-label="Direction" value={value.direction} onChange={(event) => onChange({ ...value, direction: event.currentTarget.value as 'up' | 'down' })}
            options={[{ value: 'up', label: 'rises above' }, { value: 'down', label: 'falls below' }]} />
          <NumericInput aria-label="Threshold value" value={value.value} onValueChange={(number) => Number.isFinite(number) && onChange({ ...value, value: number })} />
        </div>
      ) : null}
    </div>
  );
}

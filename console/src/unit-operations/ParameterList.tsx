/** The parameter checkbox list of the unit-operation detail: the name and 'type [unit]' of each instrument with data. */
import { Card, Checkbox, H4, NonIdealState, Spinner } from '@blueprintjs/core';
import { Colors } from '@blueprintjs/core';
import { parameterLabel } from '../charts/series-model.ts';
import type { Instrument } from '../entities/types.ts';
import { ShowAllInstrumentsSwitch } from './ShowAllInstrumentsSwitch.tsx';

export const NO_PARAMETERS_MESSAGE = 'No data logged by any instruments.';

export interface ParameterListProps {
  instruments: readonly Pick<Instrument, 'id' | 'name' | 'type' | 'unit'>[];
  selected: ReadonlySet<number>;
  colorOf: (instrumentId: number) => string | undefined;
  loading: boolean;
  error: string | null;
  onToggle: (instrumentId: number, checked: boolean) => void;
  onToggleAll: (checked: boolean) => void;
  /** Set when the list is narrowed to the instruments with data: the switch widening it to the whole equipment. */
  showAll?: { checked: boolean; hiddenCount: number; onChange: (checked: boolean) => void };
}

export function ParameterList({ instruments, selected, colorOf, loading, error, onToggle, onToggleAll, showAll }: ParameterListProps) {
  const selectedCount = instruments.filter((i) => selected.has(i.id)).length;
  return (
    <Card className="uo-card uo-parameters" data-testid="parameter-list">
      <H4>Parameters</H4>
      {showAll && (showAll.checked || showAll.hiddenCount > 0) ? <ShowAllInstrumentsSwitch {...showAll} /> : null}
      {loading ? (
        <Spinner size={20} />
      ) : error ? (
        <p style={{ color: Colors.RED3 }} role="alert">{error}</p>
      ) : instruments.length === 0 ? (
        <NonIdealState icon="th-disconnect" description={NO_PARAMETERS_MESSAGE} />
      ) : (
        <>
          <Checkbox label="All parameters" className="uo-parameter-all" checked={selectedCount === instruments.length}
            indeterminate={selectedCount > 0 && selectedCount < instruments.length}
            onChange={(event) => onToggleAll(event.currentTarget.checked)} />
          {instruments.map((instrument) => (
            <Checkbox key={instrument.id} checked={selected.has(instrument.id)}
              title={`${instrument.name} · ${parameterLabel(instrument.type, instrument.unit)}`}
              onChange={(event) => onToggle(instrument.id, event.currentTarget.checked)}
              labelElement={(
                <span className="uo-parameter-label">
                  <span className="uo-parameter-swatch" style={{ background: colorOf(instrument.id) ?? Colors.LIGHT_GRAY1 }} />
                  <span className="uo-parameter-text">
                    <span className="uo-parameter-name">{instrument.name}</span>
                    <span className="uo-parameter-detail">{parameterLabel(instrument.type, instrument.unit)}</span>
                  </span>
                </span>
              )} />
          ))}
        </>
      )}
    </Card>
  );
}

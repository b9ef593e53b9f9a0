/**
 * A unit operation offers the instruments holding readings in its window (instruments-with-data);
 * the instruments of its equipment that hold none stay one switch away, in the parameter list, the
 * export dialog and the formula references alike.
 */
import { Switch } from '@blueprintjs/core';

export const SHOW_ALL_INSTRUMENTS_LABEL = 'Show all instruments of the equipment';

/** The instruments to offer: those with data, or every one of the equipment (those with data first) when widened. */
export function offeredInstruments<T extends { id: number }>(all: readonly T[], withData: ReadonlySet<number> | null, showAll: boolean): T[] {
  if (!withData) return [...all];
  const holding = all.filter((instrument) => withData.has(instrument.id));
  return showAll ? [...holding, ...all.filter((instrument) => !withData.has(instrument.id))] : holding;
}

export function ShowAllInstrumentsSwitch({ checked, onChange, hiddenCount }: { checked: boolean; onChange: (checked: boolean) => void; hiddenCount: number }) {
  return (
    <Switch className="uo-show-all-instruments" checked={checked} onChange={(event) => onChange(event.currentTarget.checked)}
      label={SHOW_ALL_INSTRUMENTS_LABEL} data-testid="show-all-instruments"
      title={`${hiddenCount} instrument(s) of the equipment hold no readings in this unit operation's window`} />
  );
}

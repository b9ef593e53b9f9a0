/** The sample analytes of the unit-operation detail, each a checkbox that puts its markers on the chart. */
import { Card, Checkbox, Colors, H4 } from '@blueprintjs/core';
import type { SampleAnalyte } from './sample-series.ts';

export interface SampleAnalyteListProps {
  analytes: readonly SampleAnalyte[];
  selected: ReadonlySet<string>;
  colorOf: (key: string) => string | undefined;
  onToggle: (key: string, checked: boolean) => void;
}

export function SampleAnalyteList({ analytes, selected, colorOf, onToggle }: SampleAnalyteListProps) {
  if (analytes.length === 0) return null;
  return (
    <Card className="uo-card uo-parameters" data-testid="sample-analyte-list">
      <H4>Samples</H4>
      {analytes.map((entry) => (
        <Checkbox key={entry.key} checked={selected.has(entry.key)} title={`${entry.analyte} [${entry.unit}] · ${entry.count} results`}
          onChange={(event) => onToggle(entry.key, event.currentTarget.checked)}
          labelElement={(
            <span className="uo-parameter-label">
              <span className="uo-parameter-swatch samples-analyte-swatch" style={{ background: colorOf(entry.key) ?? Colors.LIGHT_GRAY1 }} />
              <span className="uo-parameter-text">
                <span className="uo-parameter-name">{entry.analyte}</span>
                <span className="uo-parameter-detail">sample [{entry.unit}] · {entry.count}</span>
              </span>
            </span>
          )} />
      ))}
    </Card>
  );
}

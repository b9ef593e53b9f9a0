/**
 * What the detection found about the file, each part changeable: encoding, delimiter, header line
 * (the preview is read again with the choice), the vendor recognised, where the table ends, the
 * start the preamble states (used for elapsed time, editable), and the notices about layouts read only
 * in part. A transposed table (time across the columns) can be turned from here, and a file of several
 * read blocks (plates, wavelengths) has a Block picker, like the Sheet picker of a workbook.
 */
import { useEffect, useState } from 'react';
import { Button, Callout, FormGroup, HTMLSelect, InputGroup, Intent, NumericInput, Tag } from '@blueprintjs/core';
import { CSV_DELIMITERS, CSV_ENCODINGS, TRANSPOSED_NOTICE, type CsvLayout, type CsvReadingChoices } from '@bioprocess/shared/csv/index';
import { blockLabel, DELIMITER_LABELS, ENCODING_LABELS, describeTable } from './file-layout.ts';

export function FileLayoutPanel({ layout, onChoose, onTurn, busy }: {
  layout: CsvLayout; onChoose: (choices: CsvReadingChoices) => void; onTurn: () => void; busy: boolean;
}) {
  const [headerLine, setHeaderLine] = useState(layout.header_line);
  useEffect(() => setHeaderLine(layout.header_line), [layout.header_line]);
  const current: CsvReadingChoices = { encoding: layout.encoding, delimiter: layout.delimiter, header_line: layout.header_line };
  return (
    <div className="csv-layout" data-testid="csv-layout" data-encoding={layout.encoding} data-header-line={layout.header_line}>
      <div className="csv-layout-choices">
        <FormGroup inline label="Encoding" labelFor="csv-encoding">
          <HTMLSelect id="csv-encoding" value={layout.encoding} disabled={busy}
            onChange={(event) => onChoose({ ...current, encoding: event.target.value as CsvLayout['encoding'] })}>
            {CSV_ENCODINGS.map((encoding) => <option key={encoding} value={encoding}>{ENCODING_LABELS[encoding]}</option>)}
          </HTMLSelect>
        </FormGroup>
        <FormGroup inline label="Delimiter" labelFor="csv-delimiter">
          <HTMLSelect id="csv-delimiter" value={layout.delimiter} disabled={busy}
            onChange={(event) => onChoose({ ...current, delimiter: event.target.value as CsvLayout['delimiter'] })}>
            {CSV_DELIMITERS.map((delimiter) => <option key={delimiter} value={delimiter}>{DELIMITER_LABELS[delimiter]}</option>)}
          </HTMLSelect>
        </FormGroup>
        <FormGroup inline label="Header line" labelFor="csv-header-line">
          <NumericInput id="csv-header-line" min={1} max={5000} value={headerLine} disabled={busy || layout.section !== null} buttonPosition="none"
            style={{ width: 70 }} onValueChange={(value) => setHeaderLine(value)}
            onBlur={() => { if (Number.isInteger(headerLine) && headerLine >= 1 && headerLine !== layout.header_line) onChoose({ ...current, header_line: headerLine }); }} />
        </FormGroup>
        {layout.blocks.length > 1 && (
          <FormGroup inline label="Block" labelFor="csv-block">
            <HTMLSelect id="csv-block" value={layout.block ?? ''} disabled={busy} data-testid="csv-block"
              onChange={(event) => onChoose({ encoding: layout.encoding, delimiter: layout.delimiter, block: Number(event.target.value) })}>
              {layout.block === null && <option value="">Lines chosen by hand</option>}
              {layout.blocks.map((block) => <option key={block.index} value={block.index}>{blockLabel(block)}</option>)}
            </HTMLSelect>
          </FormGroup>
        )}
        {layout.vendor && <Tag minimal intent="success" icon="tick" data-testid="csv-vendor">{layout.vendor}</Tag>}
      </div>
      <span className="bp6-text-muted" data-testid="csv-table-description">
        {describeTable(layout)}
        {layout.table_end ? ` The table ends at line ${layout.table_end.line} (“${layout.table_end.text}”); what follows is not read.` : ''}
      </span>
      {layout.notices.filter((notice) => !notice.startsWith('The table ends')).map((notice) => (
        <Callout key={notice} intent={Intent.WARNING} compact icon="info-sign" data-testid="csv-layout-notice">
          {notice}
          {notice === TRANSPOSED_NOTICE && (
            <Button text="Turn the table" icon="swap-vertical" size="small" intent={Intent.PRIMARY} disabled={busy} onClick={onTurn}
              className="csv-layout-turn" data-testid="csv-turn-table" />
          )}
        </Callout>
      ))}
    </div>
  );
}

/**
 * The start elapsed time counts from: the preamble's, or typed; shown in the chosen zone. For a plate
 * grid it is the time the plate was read, which the user gives when the file states none.
 */
export function ElapsedStartField({ value, fromFile, zone, onChange, plateGrid = false }: {
  value: string; fromFile: { line: number; text: string } | null; zone: string; onChange: (value: string) => void; plateGrid?: boolean;
}) {
  const typed = plateGrid
    ? `When the plate was read, in ${zone}, e.g. 2023-09-15T12:30:01; empty: the unit operation's start`
    : `Date and time in ${zone}, e.g. 2023-09-15T12:30:01; empty: the unit operation's start`;
  return (
    <FormGroup inline label={plateGrid ? 'Read time' : 'Start'} labelFor="csv-elapsed-start"
      helperText={fromFile ? `From the file, line ${fromFile.line}: “${fromFile.text}” (read in ${zone})` : typed}>
      <InputGroup id="csv-elapsed-start" value={value} placeholder="YYYY-MM-DDTHH:MM:SS" onChange={(event) => onChange(event.target.value)} data-testid="csv-elapsed-start" />
    </FormGroup>
  );
}

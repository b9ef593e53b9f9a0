/**
 * The one date-time entry field: a text field that shows and accepts ISO 8601 in 24 h
 * ('2021-05-02 07:12:51'), with the zone it is read in beside it. The browser's own
 * `datetime-local` field writes the user's locale instead ('05/02/2021, 07:12:51 AM' in en-US), so
 * it is not used. Its value is the `datetime-local` wire form ('2021-05-02T07:12:51'), so callers
 * parse it as before; text that is not (yet) a moment is passed on as typed, for the caller's check.
 */
import { InputGroup, Tag, type Intent } from '@blueprintjs/core';
import { useEffect, useState } from 'react';
import { dateTimeFieldText, parseDateTimeText, timeZoneName } from './date-time-format.ts';

export interface DateTimeFieldProps {
  id?: string;
  value: string;
  onChange: (value: string) => void;
  /** Seconds in the placeholder (they are always accepted). */
  seconds?: boolean;
  disabled?: boolean;
  intent?: Intent;
  'aria-label'?: string;
  'aria-invalid'?: boolean;
  'aria-describedby'?: string;
}

export function DateTimeField({ id, value, onChange, seconds = true, disabled, intent, ...aria }: DateTimeFieldProps) {
  const [text, setText] = useState(() => dateTimeFieldText(value));
  // A value set from outside (a dialog opened on another record, the minutes field) replaces the text;
  // the caller echoing what was typed does not.
  useEffect(() => {
    setText((current) => ((parseDateTimeText(current) ?? current) === value ? current : dateTimeFieldText(value)));
  }, [value]);
  return (
    <InputGroup id={id} type="text" inputMode="numeric" autoComplete="off" spellCheck={false} disabled={disabled} intent={intent}
      placeholder={seconds ? 'yyyy-MM-dd HH:mm:ss' : 'yyyy-MM-dd HH:mm'} value={text} {...aria}
      rightElement={<Tag minimal className="app-date-time-zone" title="Times are read and shown in this zone">{timeZoneName()}</Tag>}
      onChange={(event) => {
        const typed = event.target.value;
        setText(typed);
        onChange(parseDateTimeText(typed) ?? typed);
      }} />
  );
}

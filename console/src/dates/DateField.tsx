/**
 * The one date entry field: a text field that shows and accepts 'yyyy-MM-dd', as dates are written
 * everywhere in the console. The browser's own `date` field writes the user's locale instead
 * ('05/02/2021' in en-US), so it is not used. The value is the text as typed; `isDateText` tells a
 * caller whether it is a real day yet.
 */
import { InputGroup, type Intent } from '@blueprintjs/core';

export interface DateFieldProps {
  id?: string;
  value: string;
  onChange: (value: string) => void;
  disabled?: boolean;
  intent?: Intent;
  'aria-label'?: string;
}

export function DateField({ id, value, onChange, disabled, intent, ...aria }: DateFieldProps) {
  return (
    <InputGroup id={id} type="text" inputMode="numeric" autoComplete="off" spellCheck={false} placeholder="yyyy-MM-dd"
      disabled={disabled} intent={intent} value={value} {...aria} onChange={(event) => onChange(event.target.value)} />
  );
}

/**
 * The upload wizard's question for a unit operation with a start and no end, asked before anything
 * is sent: close it at the file's last reading (the default: its window then follows its data and
 * frees the equipment), or keep it open (data still to come). The choice travels in the mapping
 * (close_open_end) and the worker applies it when the upload completes.
 */
import { Callout, Radio, RadioGroup } from '@blueprintjs/core';
import { formatDate } from '../dates/date-time-format.ts';

export const OPEN_END_MESSAGES = {
  /** Names the file's last reading when the wizard could read it from the file's end. */
  question: (lastReadingMs: number | null) => (lastReadingMs === null
    ? "This unit operation has no end. Close it at the file's last reading?"
    : `This unit operation has no end. Close it at the file's last reading (${formatDate(lastReadingMs)})?`),
  close: "Close it at the file's last reading",
  keep: 'Keep it open',
} as const;

/** Whether the form describes an open-ended unit operation (a start, no end): only then is there a question. */
export const isOpenEnded = (form: { startTime: string | null; endTime: string | null }) => Boolean(form.startTime) && !form.endTime;

export function OpenEndChoice({ close, onChange, lastReadingMs }: { close: boolean; onChange: (close: boolean) => void; lastReadingMs: number | null }) {
  return (
    <Callout compact icon="time" data-testid="open-end-choice" title={OPEN_END_MESSAGES.question(lastReadingMs)}>
      <RadioGroup inline selectedValue={close ? 'close' : 'keep'} onChange={(event) => onChange(event.currentTarget.value === 'close')}>
        <Radio value="close" label={OPEN_END_MESSAGES.close} />
        <Radio value="keep" label={OPEN_END_MESSAGES.keep} />
      </RadioGroup>
    </Callout>
  );
}

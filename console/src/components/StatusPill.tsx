/** A run status (Pending, Active, Completed) as a round Blueprint tag, with its meaning as the tooltip. */
import { Intent, Tag } from '@blueprintjs/core';
import { RUN_STATUS_DESCRIPTIONS, type RunStatus } from '@bioprocess/shared/enums';
import { AppTooltip } from './AppTooltip.tsx';

const INTENTS: Record<RunStatus, Intent> = {
  Pending: Intent.WARNING,
  Active: Intent.PRIMARY,
  Completed: Intent.SUCCESS,
};

export function StatusPill({ status }: { status: RunStatus | string }) {
  const known = status in INTENTS ? (status as RunStatus) : null;
  const tag = (
    <Tag round minimal intent={known ? INTENTS[known] : Intent.NONE} className="app-status-pill">
      {status}
    </Tag>
  );
  return known ? <AppTooltip content={RUN_STATUS_DESCRIPTIONS[known]}>{tag}</AppTooltip> : tag;
}

/**
 * The chart's live badge: 'Live' while new points are drawn as they are stored, 'Connecting' while the
 * tab's live connection is being opened, 'Reconnecting' while it waits to be opened again (the chart
 * still shows what was stored).
 */
import { Tag } from '@blueprintjs/core';
import type { LiveState } from './live-client.ts';
import './live-indicator.css';

export const LIVE_MESSAGES = {
  live: 'Live',
  connecting: 'Connecting…',
  reconnecting: 'Reconnecting…',
  liveTitle: 'New readings are drawn as they are stored',
  reconnectingTitle: 'The live connection is being made again; readings stored meanwhile will be drawn once it is back',
} as const;

export function LiveIndicator({ state }: { state: LiveState }) {
  if (state === 'live') {
    return (
      <Tag minimal round intent="success" className="bp-live-indicator" data-testid="live-indicator" data-state="live" title={LIVE_MESSAGES.liveTitle}
        icon={<span className="bp-live-dot" aria-hidden="true" />}>
        {LIVE_MESSAGES.live}
      </Tag>
    );
  }
  return (
    <Tag minimal round className="bp-live-indicator" data-testid="live-indicator" data-state={state} title={LIVE_MESSAGES.reconnectingTitle}>
      {state === 'connecting' ? LIVE_MESSAGES.connecting : LIVE_MESSAGES.reconnecting}
    </Tag>
  );
}

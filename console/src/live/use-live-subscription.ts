/**
 * A chart's subscription to the tab's live connection: while enabled, the instruments it draws are
 * followed and its handlers called (the latest ones, so they may close over fresh state); answers
 * whether the connection is live.
 */
import { useEffect, useRef, useState } from 'react';
import type { LiveDeletion, LivePoints } from '@bioprocess/shared/live';
import { liveClient, type LiveState } from './live-client.ts';

export interface LiveHandlers {
  onPoints(event: LivePoints): void;
  onDeletion(event: LiveDeletion): void;
  onResync(): void;
}

export function useLiveSubscription(instrumentIds: readonly number[], enabled: boolean, handlers: LiveHandlers): LiveState {
  const latest = useRef(handlers);
  latest.current = handlers;
  const key = instrumentIds.join(',');
  const [state, setState] = useState<LiveState>(() => liveClient().state);

  useEffect(() => {
    if (!enabled || key === '') return;
    const client = liveClient();
    setState(client.state);
    const stopState = client.onState(setState);
    const unsubscribe = client.subscribe({
      instrumentIds: key.split(',').map(Number),
      onPoints: (event) => latest.current.onPoints(event),
      onDeletion: (event) => latest.current.onDeletion(event),
      onResync: () => latest.current.onResync(),
    });
    return () => {
      unsubscribe();
      stopState();
    };
  }, [key, enabled]);

  return enabled && key !== '' ? state : 'offline';
}

/**
 * Blueprint's Tooltip with the product's timing: opens after 700 ms, but within 300 ms
 * of another tooltip closing the next one opens at once, so scanning along a row of icons is quick.
 */
import { Tooltip, type TooltipProps } from '@blueprintjs/core';
import { useState } from 'react';

export const TOOLTIP_OPEN_DELAY_MS = 700;
export const TOOLTIP_SKIP_DELAY_MS = 300;

let lastClosedAt = Number.NEGATIVE_INFINITY;

export function tooltipOpenDelay(now: number, closedAt: number): number {
  return now - closedAt < TOOLTIP_SKIP_DELAY_MS ? 0 : TOOLTIP_OPEN_DELAY_MS;
}

export function AppTooltip(props: TooltipProps) {
  const [delay, setDelay] = useState(TOOLTIP_OPEN_DELAY_MS);
  return (
    <Tooltip
      hoverOpenDelay={delay}
      {...props}
      onOpening={(node) => props.onOpening?.(node)}
      onClosed={(node) => {
        lastClosedAt = Date.now();
        props.onClosed?.(node);
      }}
      targetProps={{
        ...props.targetProps,
        // Decided when the pointer arrives, before Blueprint starts its open timer.
        onPointerEnter: (event) => {
          setDelay(tooltipOpenDelay(Date.now(), lastClosedAt));
          props.targetProps?.onPointerEnter?.(event);
        },
      }}
    />
  );
}

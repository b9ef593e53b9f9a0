/**
 * The legend of the time-series chart, in the page rather than in the SVG: beside the plot on wide
 * frames and under it on narrow ones, with its own scroll, so 50 series never take height from the
 * plot. A click hides or shows a series; names are React text, never markup.
 */
import { Colors } from '@blueprintjs/core';
import type { LegendPlacement } from './chart-options.ts';
import type { ChartSeries, DashStyle } from './series-model.ts';

/** SVG dash arrays of Highcharts' dash styles at a 2 px stroke, for the legend's line samples. */
const DASH_ARRAYS: Readonly<Record<DashStyle, string | undefined>> = {
  Solid: undefined, ShortDash: '6 2', ShortDot: '2 2', LongDash: '16 6', DashDot: '8 6 2 6', LongDashDot: '16 6 2 6',
};

export interface ChartLegendProps {
  series: readonly ChartSeries[];
  hiddenIds: ReadonlySet<string>;
  placement: LegendPlacement;
  onToggle: (seriesId: string) => void;
  onHover?: (seriesId: string | null) => void;
}

export function ChartLegend({ series, hiddenIds, placement, onToggle, onHover }: ChartLegendProps) {
  return (
    <ul className="bp-chart-legend" data-placement={placement} data-testid="chart-legend" aria-label="Series" onMouseLeave={() => onHover?.(null)}>
      {series.map((s) => {
        const hidden = hiddenIds.has(s.id);
        return (
          <li key={s.id}>
            <button type="button" className="bp-chart-legend-item" aria-pressed={!hidden} data-hidden={hidden ? 'true' : 'false'}
              title={s.detail ? `${s.name} · ${s.detail}` : s.name} onClick={() => onToggle(s.id)} onMouseEnter={() => onHover?.(s.id)}>
              <svg className="bp-chart-legend-swatch" width="22" height="10" aria-hidden>
                {s.markers ? (
                  <circle cx="11" cy="5" r="4" fill={hidden ? Colors.GRAY4 : s.color} />
                ) : (
                  <line x1="1" y1="5" x2="21" y2="5" stroke={hidden ? Colors.GRAY4 : s.color} strokeWidth="2" strokeOpacity={s.opacity}
                    strokeDasharray={DASH_ARRAYS[s.dashStyle ?? 'Solid']} />
                )}
              </svg>
              <span className="bp-chart-legend-name">{s.name}</span>
              {/* The space keeps name and detail apart when the entry is read as text (screen readers, copy). */}
              {s.detail ? <span className="bp-chart-legend-detail">{` ${s.detail}`}</span> : null}
            </button>
          </li>
        );
      })}
    </ul>
  );
}

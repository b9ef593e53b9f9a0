/** The Key Insights card of the run detail: Max Titer, Run Time, Yield and Status. */
import { Card, Elevation, H4, Icon, type IconName } from '@blueprintjs/core';
import type { ReactNode } from 'react';
import { StatusPill } from '../components/StatusPill.tsx';
import { formatPercent, formatRunTime, formatTiter, runDurationMinutes, statusOf } from '../entities/run-metrics.ts';
import type { Instrument, Run, UnitOperation } from '../entities/types.ts';
import { useKeyInsights } from './useKeyInsights.ts';
import '../dashboard/dashboard.css';

function Insight({ icon, label, children }: { icon: IconName; label: string; children: ReactNode }) {
  return (
    <div className="app-insight" data-testid={`insight-${label.toLowerCase().replace(/\s+/g, '-')}`}>
      <dt><Icon icon={icon} size={14} />{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

export function KeyInsightsCard({ run, unitOperations, instruments }: {
  run: Run | undefined; unitOperations: readonly UnitOperation[] | undefined; instruments: readonly Instrument[] | undefined;
}) {
  const insights = useKeyInsights(run, unitOperations, instruments);
  const loading = (value: ReactNode) => (run === undefined ? '...' : value);
  return (
    <Card elevation={Elevation.ONE} className="app-insights-card app-section-card">
      <div className="app-section-card-header"><H4>Key Insights</H4></div>
      <dl className="app-insights-list">
        <Insight icon="lab-test" label="Max Titer">{insights.isLoading ? '...' : formatTiter(insights.maxTiter)}</Insight>
        <Insight icon="time" label="Run Time">{loading(run ? formatRunTime(runDurationMinutes(run)) : null)}</Insight>
        <Insight icon="percentage" label="Yield">{insights.isLoading ? '...' : formatPercent(insights.yieldPercent)}</Insight>
        <Insight icon="pulse" label="Status">{loading(run ? <StatusPill status={statusOf(run)} /> : null)}</Insight>
      </dl>
    </Card>
  );
}

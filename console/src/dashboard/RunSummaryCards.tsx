/**
 * The four run cards of the dashboard and the All runs page: Total Runs, Active Runs,
 * Average Titer and Average Run Time.
 */
import { Card, Classes, Elevation, Icon, type IconName, Intent } from '@blueprintjs/core';
import { useMemo, type ReactNode } from 'react';
import useSWR from 'swr';
import { averageTiter, formatRunTime, formatTiter, summariseRuns } from '../entities/run-metrics.ts';
import { useInstruments } from '../entities/queries.ts';
import type { Run } from '../entities/types.ts';
import { fetchReadings } from '../runs/useKeyInsights.ts';
import './dashboard.css';

/** Bounds the dashboard's reading requests for organisations with very many titer probes. */
const MAX_TITER_INSTRUMENTS = 50;

function useAverageTiter(runs: readonly Run[] | undefined): { value: number | null; isLoading: boolean } {
  const instruments = useInstruments();
  const titerIds = (instruments.data ?? []).filter((instrument) => instrument.type === 'titer').slice(0, MAX_TITER_INSTRUMENTS).map((instrument) => instrument.id);
  const key = instruments.data ? ['average-titer', titerIds.join(',')] : null;
  const readings = useSWR(key, () => fetchReadings(titerIds));
  const value = useMemo(() => averageTiter(readings.data ?? [], runs ?? []), [readings.data, runs]);
  const waiting = !runs || (!instruments.data && !instruments.error) || (key !== null && readings.isLoading);
  return { value, isLoading: waiting };
}

interface StatCardProps {
  label: string;
  value: ReactNode;
  icon: IconName;
  intent: Intent;
  hint: string;
  loading: boolean;
}

function StatCard({ label, value, icon, intent, hint, loading }: StatCardProps) {
  return (
    <Card elevation={Elevation.ONE} className="app-stat-card" aria-label={label}>
      <div className="app-stat-card-head">
        <span className="app-stat-card-label">{label}</span>
        <span className={`app-stat-card-icon app-stat-card-icon-${intent}`}><Icon icon={icon} intent={intent} size={18} /></span>
      </div>
      <div className={`app-stat-card-value${loading ? ` ${Classes.SKELETON}` : ''}`}>{loading ? '...' : value}</div>
      <div className="app-stat-card-hint">{hint}</div>
    </Card>
  );
}

export function RunSummaryCards({ runs }: { runs: readonly Run[] | undefined }) {
  const summary = useMemo(() => summariseRuns(runs ?? []), [runs]);
  const titer = useAverageTiter(runs);
  const loading = runs === undefined;
  return (
    <div className="app-stat-cards">
      <StatCard label="Total Runs" value={summary.totalRuns} icon="layers" intent={Intent.PRIMARY} hint="All runs in the organisation" loading={loading} />
      <StatCard label="Active Runs" value={summary.activeRuns} icon="pulse" intent={Intent.SUCCESS} hint="Started and not yet finished" loading={loading} />
      <StatCard label="Average Titer" value={formatTiter(titer.value)} icon="lab-test" intent={Intent.WARNING} hint="Across titer instruments" loading={titer.isLoading} />
      <StatCard label="Average Run Time" value={formatRunTime(summary.averageRunTimeMinutes)} icon="time" intent={Intent.NONE} hint="Runs with a start and an end" loading={loading} />
    </div>
  );
}

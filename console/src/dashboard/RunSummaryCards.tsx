/**
 * The four run cards of the dashboard and the All runs page: Total Runs, Active Runs,
 * Average Titer (with the list of what it averages, and what it leaves out) and Average Run Time.
 */
import { Button, Card, Classes, Elevation, HTMLTable, Icon, type IconName, Intent, PopoverNext } from '@blueprintjs/core';
import { useMemo, type ReactNode } from 'react';
import useSWR from 'swr';
import { averageTiter, formatRunTime, formatTiter, summariseRuns, type AverageTiter, type TiterSource } from '../entities/run-metrics.ts';
import { useInstruments } from '../entities/queries.ts';
import type { Run } from '../entities/types.ts';
import { fetchReadings } from '../runs/useKeyInsights.ts';
import './dashboard.css';

/** Bounds the dashboard's reading requests for organisations with very many titer probes. */
const MAX_TITER_INSTRUMENTS = 50;

function useAverageTiter(runs: readonly Run[] | undefined): AverageTiter & { isLoading: boolean } {
  const instruments = useInstruments();
  const titerInstruments = useMemo(
    () => (instruments.data ?? []).filter((instrument) => instrument.type === 'titer').slice(0, MAX_TITER_INSTRUMENTS),
    [instruments.data],
  );
  const titerIds = titerInstruments.map((instrument) => instrument.id);
  const key = instruments.data ? ['average-titer', titerIds.join(',')] : null;
  const readings = useSWR(key, () => fetchReadings(titerIds));
  const average = useMemo(() => averageTiter(
    titerInstruments.map((instrument, index) => ({ instrument, readings: readings.data?.[index] ?? [] })),
    runs ?? [],
  ), [titerInstruments, readings.data, runs]);
  const waiting = !runs || (!instruments.data && !instruments.error) || (key !== null && readings.isLoading);
  return { ...average, isLoading: waiting };
}

function sourceText(source: TiterSource): string {
  if (source.excludedBecause === 'unit') return `left out: ${source.instrument.unit ? `${source.instrument.unit} is not a concentration` : 'no unit'}`;
  if (source.excludedBecause === 'no readings') return 'no readings';
  return formatTiter(source.highestGramsPerLitre);
}

/** What the Average Titer is made of: each titer instrument's highest reading in g/L, or why it is left out. */
function TiterBreakdown({ titer }: { titer: AverageTiter }) {
  const counted = titer.sources.filter((source) => source.excludedBecause === null).length;
  const summary = titer.fromRunScale
    ? 'From the runs\' grams per litre (no titer instrument has readings)'
    : `Mean of ${counted} instrument${counted === 1 ? '' : 's'}' highest reading`;
  return (
    <PopoverNext placement="bottom" content={(
      <div className="app-titer-breakdown" data-testid="titer-breakdown">
        <p>{summary}, in g/L; titer instruments in a unit that is not a mass concentration are left out.</p>
        {titer.sources.length > 0 ? (
          <HTMLTable compact>
            <thead><tr><th>Instrument</th><th>Unit</th><th>Highest</th></tr></thead>
            <tbody>
              {titer.sources.map((source) => (
                <tr key={source.instrument.id}><td>{source.instrument.name}</td><td>{source.instrument.unit ?? '-'}</td><td>{sourceText(source)}</td></tr>
              ))}
            </tbody>
          </HTMLTable>
        ) : null}
      </div>
    )}>
      <Button variant="minimal" size="small" icon="info-sign" text="Made of" aria-label="Titer instruments behind this figure" />
    </PopoverNext>
  );
}

interface StatCardProps {
  label: string;
  value: ReactNode;
  icon: IconName;
  intent: Intent;
  hint: ReactNode;
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
      <StatCard label="Average Titer" value={formatTiter(titer.value)} icon="lab-test" intent={Intent.WARNING}
        hint={<span className="app-stat-card-hint-row">Across titer instruments, in g/L <TiterBreakdown titer={titer} /></span>} loading={titer.isLoading} />
      <StatCard label="Average Run Time" value={formatRunTime(summary.averageRunTimeMinutes)} icon="time" intent={Intent.NONE} hint="Runs with a start and an end" loading={loading} />
    </div>
  );
}

/**
 * The frame the settings tabs share: a panel with its title, description and actions, and a list
 * that shows its load error, a spinner while loading, an empty state, or its table.
 */
import { Callout, Intent, NonIdealState, Spinner, type IconName } from '@blueprintjs/core';
import type { ReactNode } from 'react';
import type { SWRResponse } from 'swr';

export function SettingsPanel({ title, description, actions, children }: {
  title: string;
  description: string;
  actions: ReactNode;
  children: ReactNode;
}) {
  return (
    <div className="app-settings-panel">
      <div className="app-settings-panel-head">
        <div>
          <h3 className="app-settings-panel-title">{title}</h3>
          <p className="bp6-text-muted">{description}</p>
        </div>
        {actions}
      </div>
      {children}
    </div>
  );
}

export function SettingsList<T>({ list, noun, emptyIcon, emptyTitle, children }: {
  list: Pick<SWRResponse<T[], Error>, 'data' | 'error' | 'isLoading'>;
  /** What the list holds, for the load error: 'Failed to load {noun}: ...'. */
  noun: string;
  emptyIcon: IconName;
  emptyTitle: string;
  /** The table of a non-empty list. */
  children: (rows: T[]) => ReactNode;
}) {
  return (
    <>
      {list.error ? <Callout intent={Intent.DANGER} icon="error">Failed to load {noun}: {list.error.message}</Callout> : null}
      {list.isLoading ? <Spinner size={28} /> : null}
      {list.data && list.data.length === 0 ? <NonIdealState icon={emptyIcon} title={emptyTitle} /> : null}
      {list.data && list.data.length > 0 ? <div className="app-settings-table-scroll">{children(list.data)}</div> : null}
    </>
  );
}

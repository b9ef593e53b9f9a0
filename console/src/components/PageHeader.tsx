/** The title row of a signed-in page: optional breadcrumbs above, a title, a subtitle and actions on the right. */
import { H2 } from '@blueprintjs/core';
import type { ReactNode } from 'react';

export interface PageHeaderProps {
  title: ReactNode;
  subtitle?: ReactNode;
  actions?: ReactNode;
  breadcrumbs?: ReactNode;
}

export function PageHeader({ title, subtitle, actions, breadcrumbs }: PageHeaderProps) {
  return (
    <header className="app-page-header">
      {breadcrumbs ? <div className="app-page-header-breadcrumbs">{breadcrumbs}</div> : null}
      <div className="app-page-header-row">
        <div className="app-page-header-text">
          <H2 className="app-page-title">{title}</H2>
          {subtitle ? <div className="app-page-subtitle">{subtitle}</div> : null}
        </div>
        {actions ? <div className="app-page-header-actions">{actions}</div> : null}
      </div>
    </header>
  );
}

/** The frame of the legal pages: site header and footer, opened at the top of the page. */
import { Card, Classes, H1 } from '@blueprintjs/core';
import type { ReactNode } from 'react';
import { useScrollToTopOnOpen } from '../app/ScrollToTop.tsx';
import { SiteFooter } from '../landing/SiteFooter.tsx';
import { SiteHeader } from '../landing/SiteHeader.tsx';

export function LegalLayout({ title, lastUpdated, children }: { title: string; lastUpdated: string; children: ReactNode }) {
  useScrollToTopOnOpen();
  return (
    <div className="app-legal">
      <SiteHeader />
      <main className="app-legal-main">
        <Card className={`app-legal-card ${Classes.RUNNING_TEXT}`}>
          <H1>{title}</H1>
          <p className={Classes.TEXT_MUTED}>Last updated: {lastUpdated}</p>
          {children}
        </Card>
      </main>
      <SiteFooter />
    </div>
  );
}

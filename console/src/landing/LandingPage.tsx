/**
 * The public landing page at /: hero with a live process chart, features, the three
 * metrics, Contact Us and the footer. Signed-in visitors go to /dashboard and signed-out visitors of
 * the app or staging host go to /login; on the landing host nobody is redirected.
 */
import { AnchorButton, Card, Classes, Elevation, H1, H2, H3, Icon, Intent, type IconName } from '@blueprintjs/core';
import { useEffect } from 'react';
import { Navigate, useLocation } from 'react-router-dom';
import { useAuth } from '../auth/useAuth.ts';
import { LoadingScreen } from '../components/LoadingScreen.tsx';
import { currentEnvironment } from '../config/current-environment.ts';
import { publicConfig } from '../config/public-config.ts';
import { LiveProcessChart } from './LiveProcessChart.tsx';
import { SiteFooter } from './SiteFooter.tsx';
import { SiteHeader } from './SiteHeader.tsx';
import { scrollToSection } from './smooth-scroll.ts';

const FEATURES: { title: string; icon: IconName; text: string }[] = [
  {
    title: 'Automated data collection',
    icon: 'automatic-updates',
    text: 'Capture readings from bioreactors, analysers, lab information systems and external sources without copying spreadsheets by hand.',
  },
  {
    title: 'Unified storage',
    icon: 'database',
    text: 'Keep upstream and downstream data together: facilities, equipment, instruments, runs and unit operations in one place.',
  },
  {
    title: 'FAIR',
    icon: 'graph',
    text: 'Findable, accessible, interoperable and reusable data, structured so every run can be compared and built upon.',
  },
  {
    title: 'Enterprise-grade security',
    icon: 'shield',
    text: 'Role-based access control, a complete audit log and encryption keep your process knowledge safe.',
  },
];

const METRICS = [
  { value: '80%', label: 'less manual work' },
  { value: '2x', label: 'faster time-to-insight' },
  { value: '50%', label: 'easier knowledge sharing' },
];

export function LandingPage() {
  const { isAuthenticated, isLoading } = useAuth();
  const { hash } = useLocation();

  useEffect(() => {
    // Arriving with /#features (e.g. from a legal page) scrolls to that section once it is rendered.
    if (hash) requestAnimationFrame(() => scrollToSection(hash.slice(1)));
  }, [hash]);

  if (isLoading && currentEnvironment.redirectAuthenticatedToDashboard) return <LoadingScreen />;
  if (isAuthenticated && currentEnvironment.redirectAuthenticatedToDashboard) return <Navigate to="/dashboard" replace />;
  if (!isAuthenticated && currentEnvironment.redirectUnauthenticatedToLogin) return <Navigate to="/login" replace />;

  return (
    <div className="app-landing">
      <SiteHeader />
      <section id="platform" className={`app-hero ${Classes.DARK}`}>
        <div className="app-section-inner app-hero-grid">
          <div className="app-hero-text">
            <div className="app-eyebrow">Bioprocess data platform</div>
            <H1 className="app-hero-title">Smarter Biomanufacturing.</H1>
            <p className="app-hero-lead">
              Collect, store and analyse your bioprocess data in one place. From the bioreactor to the final product,
              every run, unit operation and instrument reading is connected and ready for insight.
            </p>
            <div className="app-hero-actions">
              <AnchorButton size="large" intent={Intent.PRIMARY} text="Book a demo" endIcon="calendar"
                href={publicConfig.bookDemoUrl} target="_blank" rel="noopener noreferrer" />
              <AnchorButton size="large" variant="outlined" text="Explore features" endIcon="arrow-down" href="/#features"
                onClick={(event) => {
                  event.preventDefault();
                  scrollToSection('features');
                }} />
            </div>
          </div>
          <Card className="app-hero-chart-card" elevation={Elevation.FOUR}>
            <div className="app-hero-chart-header">
              <span className="app-live-dot" aria-hidden="true" />
              <span>Fed-batch fermentation · live</span>
            </div>
            <LiveProcessChart />
          </Card>
        </div>
      </section>

      <section id="features" className="app-section">
        <div className="app-section-inner">
          <div className="app-section-heading">
            <div className="app-eyebrow">Features</div>
            <H2>Everything your process data needs</H2>
            <p className={Classes.TEXT_MUTED}>Built for process scientists and the teams who rely on their data.</p>
          </div>
          <div className="app-feature-grid">
            {FEATURES.map((feature) => (
              <Card key={feature.title} elevation={Elevation.ONE} className="app-feature-card">
                <span className="app-feature-icon"><Icon icon={feature.icon} size={22} /></span>
                <H3>{feature.title}</H3>
                <p className={Classes.TEXT_MUTED}>{feature.text}</p>
              </Card>
            ))}
          </div>
        </div>
      </section>

      <section id="solutions" className="app-section app-section-alt">
        <div className="app-section-inner">
          <div className="app-section-heading">
            <div className="app-eyebrow">Solutions</div>
            <H2>Measurable impact from day one</H2>
            <p className={Classes.TEXT_MUTED}>Teams spend their time on the process, not on finding and cleaning data.</p>
          </div>
          <div className="app-metric-grid">
            {METRICS.map((metric) => (
              <Card key={metric.label} className="app-metric-card" elevation={Elevation.ZERO}>
                <div className="app-metric-value">{metric.value}</div>
                <div className="app-metric-label">{metric.label}</div>
              </Card>
            ))}
          </div>
        </div>
      </section>

      <section id="contact" className="app-section">
        <div className="app-section-inner">
          <Card elevation={Elevation.TWO} className="app-contact-card">
            <div>
              <H2>Ready to get more out of your process data?</H2>
              <p className={Classes.TEXT_MUTED}>Tell us about your process and we will show you the platform with your use case in mind.</p>
            </div>
            <div className="app-contact-actions">
              <AnchorButton size="large" intent={Intent.PRIMARY} icon="envelope" text="Contact Us" href={`mailto:${publicConfig.contactEmail}`} />
              <AnchorButton size="large" variant="outlined" icon="calendar" text="Book a demo" href={publicConfig.bookDemoUrl}
                target="_blank" rel="noopener noreferrer" />
            </div>
          </Card>
        </div>
      </section>
      <SiteFooter />
    </div>
  );
}

/** The public pages' top navigation: brand, section anchors (on the landing page), Sign In, Book a demo. */
import { AnchorButton, Alignment, Button, Intent, Navbar, NavbarDivider, NavbarGroup } from '@blueprintjs/core';
import { Link, useLocation, useNavigate } from 'react-router-dom';
import { BrandMark } from '../components/BrandMark.tsx';
import { currentEnvironment } from '../config/current-environment.ts';
import { publicConfig } from '../config/public-config.ts';
import { scrollToSection } from './smooth-scroll.ts';

export const LANDING_SECTIONS = [
  { id: 'platform', label: 'Platform' },
  { id: 'features', label: 'Features' },
  { id: 'solutions', label: 'Solutions' },
] as const;

export function SiteHeader() {
  const { pathname } = useLocation();
  const navigate = useNavigate();
  const onLanding = pathname === '/';
  const signInExternal = /^https?:\/\//.test(currentEnvironment.signInUrl);

  const goToSection = (id: string) => {
    if (onLanding) {
      scrollToSection(id);
      window.history.replaceState(null, '', `#${id}`);
    } else {
      navigate(`/#${id}`);
    }
  };

  return (
    <Navbar fixedToTop className="app-site-navbar">
      <div className="app-site-navbar-inner">
        <NavbarGroup align={Alignment.START}>
          <Link to="/" className="app-site-brand" onClick={() => onLanding && window.scrollTo({ top: 0, behavior: 'smooth' })}>
            <BrandMark />
          </Link>
        </NavbarGroup>
        <NavbarGroup align={Alignment.END}>
          <nav className="app-site-anchors" aria-label="Sections">
            {LANDING_SECTIONS.map((section) => (
              <a key={section.id} href={`/#${section.id}`} className="app-site-anchor"
                onClick={(event) => {
                  event.preventDefault();
                  goToSection(section.id);
                }}>
                {section.label}
              </a>
            ))}
          </nav>
          <NavbarDivider />
          {signInExternal
            ? <AnchorButton variant="minimal" icon="log-in" text="Sign In" href={currentEnvironment.signInUrl} />
            : <Button variant="minimal" icon="log-in" text="Sign In" onClick={() => navigate(currentEnvironment.signInUrl)} />}
          <AnchorButton intent={Intent.PRIMARY} text="Book a demo" endIcon="calendar" href={publicConfig.bookDemoUrl}
            target="_blank" rel="noopener noreferrer" className="app-book-demo" />
        </NavbarGroup>
      </div>
    </Navbar>
  );
}

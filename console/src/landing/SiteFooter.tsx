/** The public pages' footer: professional network, contact mail, legal links and the copyright line. */
import { Classes, Icon } from '@blueprintjs/core';
import { Link } from 'react-router-dom';
import { BrandMark } from '../components/BrandMark.tsx';
import { publicConfig } from '../config/public-config.ts';

export const COPYRIGHT_YEAR = 2025;

export function SiteFooter() {
  return (
    <footer className={`app-site-footer ${Classes.DARK}`}>
      <div className="app-site-footer-inner">
        <div className="app-site-footer-brand">
          <BrandMark inverted />
          <p className={Classes.TEXT_MUTED}>Bioprocess data, collected, connected and ready for insight.</p>
        </div>
        <nav className="app-site-footer-links" aria-label="Footer">
          <a href={publicConfig.linkedInUrl} target="_blank" rel="noopener noreferrer"><Icon icon="people" size={14} /> LinkedIn</a>
          <a href={`mailto:${publicConfig.contactEmail}`}><Icon icon="envelope" size={14} /> {publicConfig.contactEmail}</a>
          <Link to="/privacy-policy">Privacy Policy</Link>
          <Link to="/terms-of-service">Terms of Service</Link>
        </nav>
      </div>
      <div className={`app-site-copyright ${Classes.TEXT_MUTED}`}>© {COPYRIGHT_YEAR} Bioprocess Platform. All rights reserved.</div>
    </footer>
  );
}

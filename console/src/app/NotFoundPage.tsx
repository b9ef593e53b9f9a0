/** Any path without a route. */
import { Classes, NonIdealState } from '@blueprintjs/core';
import { Link } from 'react-router-dom';

export function NotFoundPage() {
  return (
    <div className="app-centered-page">
      <NonIdealState
        icon="search"
        title={<span className="app-not-found-title"><span className="app-not-found-code">404</span> Oops! Page not found</span>}
        description="The page you are looking for does not exist or has been moved."
        action={<Link to="/" className={`${Classes.BUTTON} ${Classes.INTENT_PRIMARY}`}><span className={Classes.BUTTON_TEXT}>Return to Home</span></Link>}
      />
    </div>
  );
}

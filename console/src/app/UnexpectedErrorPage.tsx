/** The screen for an unexpected render error, used as the router's error element. */
import { Button, Callout, Intent, NonIdealState } from '@blueprintjs/core';
import { isRouteErrorResponse, useRouteError } from 'react-router-dom';

export function errorMessageOf(error: unknown): string {
  if (isRouteErrorResponse(error)) return `${error.status} ${error.statusText}`;
  if (error instanceof Error) return error.message;
  return typeof error === 'string' ? error : 'Unknown error';
}

export function UnexpectedErrorScreen({ error }: { error: unknown }) {
  return (
    <div className="app-centered-page">
      <NonIdealState icon="error" title="Unexpected Application Error!"
        description={<Callout intent={Intent.DANGER} className="app-error-message">{errorMessageOf(error)}</Callout>}
        action={<Button icon="refresh" text="Reload" onClick={() => window.location.reload()} />} />
    </div>
  );
}

export function UnexpectedErrorPage() {
  const error = useRouteError();
  console.error(error);
  return <UnexpectedErrorScreen error={error} />;
}

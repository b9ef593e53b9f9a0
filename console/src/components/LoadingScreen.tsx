/** Shown while the stored session is re-validated on start-up. */
import { Spinner } from '@blueprintjs/core';

export function LoadingScreen({ label = 'Loading...' }: { label?: string }) {
  return (
    <div className="app-loading-screen" role="status" aria-live="polite">
      <Spinner size={40} />
      <div className="app-loading-label">{label}</div>
    </div>
  );
}

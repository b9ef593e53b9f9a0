/** The console root: Blueprint providers, the session, SWR defaults and the router. */
import { BlueprintProvider } from '@blueprintjs/core';
import { useEffect, useMemo } from 'react';
import { createBrowserRouter, RouterProvider } from 'react-router-dom';
import { SWRConfig } from 'swr';
import { AuthProvider } from '../auth/AuthProvider.tsx';
import { installToastHotkey } from '../components/toaster.ts';
import { AppErrorBoundary } from './AppErrorBoundary.tsx';
import { routes } from './routes.tsx';

export function App() {
  const router = useMemo(() => createBrowserRouter(routes), []);
  useEffect(() => installToastHotkey(), []);
  return (
    <AppErrorBoundary>
      <BlueprintProvider>
        <AuthProvider>
          <SWRConfig value={{ revalidateOnFocus: false, shouldRetryOnError: false }}>
            <RouterProvider router={router} />
          </SWRConfig>
        </AuthProvider>
      </BlueprintProvider>
    </AppErrorBoundary>
  );
}

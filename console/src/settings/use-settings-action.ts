/**
 * How every settings action behaves, in one place: busy while it runs (dialogs show their spinner,
 * buttons their loading state), a success toast, and on failure the cause logged to the browser
 * console and a toast with the server's message (or the failure handled where the user is, such as
 * a dialog's inline error).
 */
import { useCallback, useState } from 'react';
import { showToast, type ToastInput } from '../components/toaster.ts';

export interface SettingsAction<T> {
  /** The success toast: its title, or title and message; none when left out. */
  success?: string | Omit<ToastInput, 'intent'>;
  /** The failure toast's title (its message is the error's), or a handler that shows the failure itself. */
  failure: string | ((message: string | undefined) => void);
  /** Runs after the success toast, still busy: close a dialog, reload a list. */
  then?: (result: T) => unknown;
}

export function errorMessageOf(cause: unknown): string | undefined {
  return cause instanceof Error ? cause.message : undefined;
}

export function useSettingsAction(): { busy: boolean; run: <T>(call: () => Promise<T>, action: SettingsAction<T>) => Promise<void> } {
  const [busy, setBusy] = useState(false);
  const run = useCallback(async <T>(call: () => Promise<T>, { success, failure, then }: SettingsAction<T>) => {
    setBusy(true);
    try {
      const result = await call();
      if (success) showToast({ ...(typeof success === 'string' ? { title: success } : success), intent: 'success' });
      await then?.(result);
    } catch (cause) {
      if (typeof failure === 'function') {
        failure(errorMessageOf(cause));
      } else {
        console.error(failure, cause);
        showToast({ title: failure, message: errorMessageOf(cause), intent: 'danger' });
      }
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, run };
}

/**
 * The user's signed-in sessions in Settings > Account: browser, address, when signed in and last used;
 * each other session can be ended, or all others at once. Ending this one is signing out.
 */
import { Button, H5, HTMLTable, Intent, Tag } from '@blueprintjs/core';
import { z } from 'zod';
import { userSessionSchema } from '@bioprocess/shared/run-review';
import { apiRequest } from '../api/client.ts';
import { useApi } from '../api/hooks.ts';
import { formatDate } from '../dates/date-time-format.ts';
import { useSettingsAction } from './use-settings-action.ts';

interface SessionView { id: number; current: boolean; userAgent: string | null; ip: string | null; signedInAt: string; lastUsedAt: string }

/** "Chrome on Linux" from a user agent, else the agent itself. */
export function describeBrowser(userAgent: string | null): string {
  if (!userAgent) return 'Unknown browser';
  const browser = /Edg\//.test(userAgent) ? 'Edge' : /Firefox\//.test(userAgent) ? 'Firefox' : /Chrom(e|ium)\//.test(userAgent) ? 'Chrome'
    : /Safari\//.test(userAgent) ? 'Safari' : null;
  const system = /Windows/.test(userAgent) ? 'Windows' : /Android/.test(userAgent) ? 'Android' : /iPhone|iPad/.test(userAgent) ? 'iOS'
    : /Mac OS X/.test(userAgent) ? 'macOS' : /Linux/.test(userAgent) ? 'Linux' : null;
  return browser ? `${browser}${system ? ` on ${system}` : ''}` : userAgent.slice(0, 80);
}

export function AccountSessionsSection() {
  const sessions = useApi<SessionView[]>('/api/v1/auth/sessions', z.array(userSessionSchema));
  const { busy, run } = useSettingsAction();
  const others = (sessions.data ?? []).filter((session) => !session.current);

  const end = (session: SessionView) => run(() => apiRequest('DELETE', `/api/v1/auth/sessions/${session.id}`),
    { success: 'Session ended', failure: 'Failed to end the session', then: () => sessions.mutate() });
  const endOthers = () => run(() => apiRequest<{ ended: number }>('POST', '/api/v1/auth/sessions/end-others'),
    { success: 'Other sessions ended', failure: 'Failed to end the other sessions', then: () => sessions.mutate() });

  return (
    <section className="app-settings-section" data-testid="account-sessions">
      <H5>Sessions</H5>
      <p className="bp6-text-muted">
        Where you are signed in. End any session you do not recognise: accounts are personal, and a session unused for
        the organisation&apos;s inactivity limit ends by itself.
      </p>
      {sessions.error ? <p className="bp6-text-muted">Failed to load sessions: {sessions.error.message}</p> : null}
      {sessions.data ? (
        <HTMLTable compact striped className="app-settings-table">
          <thead><tr><th>Browser</th><th>Address</th><th>Signed in</th><th>Last used</th><th /></tr></thead>
          <tbody>
            {sessions.data.map((session) => (
              <tr key={session.id} data-testid="account-session">
                <td title={session.userAgent ?? undefined}>{describeBrowser(session.userAgent)}</td>
                <td>{session.ip ?? '-'}</td>
                <td>{formatDate(session.signedInAt)}</td>
                <td>{formatDate(session.lastUsedAt)}</td>
                <td>{session.current ? <Tag minimal intent={Intent.SUCCESS}>This session</Tag>
                  : <Button size="small" variant="outlined" intent={Intent.DANGER} text="End" disabled={busy} onClick={() => void end(session)} />}</td>
              </tr>
            ))}
          </tbody>
        </HTMLTable>
      ) : null}
      <Button icon="log-out" text="End all other sessions" disabled={busy || others.length === 0} onClick={() => void endOthers()} />
    </section>
  );
}

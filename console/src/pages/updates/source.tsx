import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../../api';
import { ErrorNote, formatTime, Notice, useAction } from '../../ui';
import { confirmAction, showToast } from '../../ui/confirm';
import { Field } from '../../ui/fields';
import { type CheckResult, familyLabel, type ReleaseSource, SOURCE_STATE_LABEL, tone } from './model';

/**
 * The release source (a remote catalogue reached with the OAuth 2.0 device flow, RFC 8628):
 * connect (the user code shown big with its link, polled at the grant's interval), cancel,
 * disconnect, check for newer releases.
 */
export function ReleaseSourcePanel({ source, onChange }: { source: ReleaseSource | null; onChange: () => Promise<void> }) {
  const [url, setUrl] = useState('');
  const [state, setState] = useState<ReleaseSource | null>(source);
  const [checked, setChecked] = useState<CheckResult | null>(null);
  useEffect(() => setState(source), [source]);

  const connect = useAction(async () => {
    const s = await api.post<ReleaseSource>('player-releases/release-source/device', url.trim() ? { url: url.trim() } : {});
    setState(s);
    setChecked(null);
  });
  const forget = useAction(async (asked: boolean) => {
    if (asked) {
      const yes = await confirmAction({
        title: 'Disconnect the release source?',
        body: (
          <p>
            Placard forgets its access to {state?.url ?? 'the source'}. Releases already listed stay, and those downloaded here can still be deployed; checking
            for new ones needs connecting again.
          </p>
        ),
        confirmLabel: 'Disconnect',
        danger: true,
      });
      if (!yes) return;
    }
    await api.del('player-releases/release-source');
    setState(null);
    setChecked(null);
    showToast(asked ? 'Release source disconnected.' : 'Connection cancelled.');
    await onChange();
  });
  const check = useAction(async () => {
    const r = await api.post<CheckResult>('player-releases/check', {});
    setChecked(r);
    await onChange();
  });

  // While the grant waits for the person, ask the server at the grant's pace (it asks the source at most that often).
  const pending = state?.state === 'pending';
  const interval = Math.max(1, state?.intervalSec ?? 5);
  const [pollError, setPollError] = useState<unknown>(null);
  const timer = useRef<number | undefined>(undefined);
  useEffect(() => {
    if (!pending) return;
    let stopped = false;
    const tick = async () => {
      try {
        const s = await api.post<ReleaseSource>('player-releases/release-source/device/poll', {});
        if (stopped) return;
        setPollError(null);
        setState(s);
        if (s.state !== 'pending') {
          if (s.state === 'connected') showToast('Release source connected.');
          await onChange();
          return;
        }
      } catch (err) {
        if (stopped) return;
        setPollError(err);
      }
      timer.current = window.setTimeout(() => void tick(), interval * 1000);
    };
    timer.current = window.setTimeout(() => void tick(), interval * 1000);
    return () => {
      stopped = true;
      window.clearTimeout(timer.current);
    };
  }, [pending, interval, onChange]);

  const link = state?.verificationUriComplete ?? state?.verificationUri ?? null;
  return (
    <article aria-labelledby="source-h" data-testid="release-source">
      <header class="row spread">
        <h2 id="source-h">Release source</h2>
        {state && (
          <span class={`badge ${tone(state.state)}`} data-testid="source-state">
            {SOURCE_STATE_LABEL[state.state] ?? state.state}
          </span>
        )}
      </header>
      {!state && (
        <>
          <p class="section-intro">
            Connect Placard to a catalogue of player releases to see new versions and download them here, so screens fetch them on this network. You approve the
            connection on the catalogue's site with a short code.
          </p>
          <form
            aria-label="Connect the release source"
            onSubmit={(e) => {
              e.preventDefault();
              void connect.run();
            }}
          >
            <Field label="Catalogue address" help="Leave empty to use the one set in this server's configuration.">
              {(p) => (
                <input {...p} type="url" name="url" placeholder="https://releases.example.com" value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
              )}
            </Field>
            <ErrorNote error={connect.error} />
            <button type="submit" aria-busy={connect.busy} disabled={connect.busy}>
              Connect
            </button>
          </form>
        </>
      )}
      {state?.state === 'pending' && (
        <div class="device-code" data-testid="device-code">
          <p>
            Open{' '}
            {link ? (
              <a href={link} target="_blank" rel="noopener noreferrer" data-testid="verification-link">
                {state.verificationUri ?? link}
              </a>
            ) : (
              'the catalogue’s site'
            )}{' '}
            and enter this code:
          </p>
          <p class="user-code" data-testid="user-code">
            {state.userCode}
          </p>
          <p class="muted" role="status">
            Waiting for approval… Placard asks every {interval} s{state.expiresAt ? `; the code works until ${formatTime(state.expiresAt)}` : ''}.
          </p>
          <ErrorNote error={pollError} />
          <button type="button" class="secondary" aria-busy={forget.busy} disabled={forget.busy} onClick={() => void forget.run(false)}>
            Cancel
          </button>
        </div>
      )}
      {state && (state.state === 'denied' || state.state === 'expired' || state.state === 'failed') && (
        <div data-testid="source-ended">
          <p class="error-note" role="alert">
            {state.state === 'denied'
              ? 'The connection was refused on the catalogue’s site.'
              : state.state === 'expired'
                ? 'The code expired before it was approved.'
                : `The connection failed${state.error ? `: ${state.error}` : '.'}`}
          </p>
          <div class="row">
            <button type="button" aria-busy={connect.busy} disabled={connect.busy} onClick={() => void connect.run()}>
              Try again
            </button>
            <button type="button" class="secondary outline" disabled={forget.busy} onClick={() => void forget.run(false)}>
              Forget it
            </button>
          </div>
          <ErrorNote error={connect.error} />
        </div>
      )}
      {state?.state === 'connected' && (
        <div data-testid="source-connected">
          <p>
            Connected to <strong>{state.url}</strong> since {formatTime(state.connectedAt)}.{' '}
            {state.checkedAt ? `Last checked ${formatTime(state.checkedAt)}.` : 'Not checked yet.'}
          </p>
          <div class="row">
            <button type="button" aria-busy={check.busy} disabled={check.busy} onClick={() => void check.run()}>
              Check for newer releases
            </button>
            <button type="button" class="secondary outline" disabled={forget.busy} onClick={() => void forget.run(true)}>
              Disconnect
            </button>
          </div>
          <ErrorNote error={check.error} />
          {checked && (
            <div data-testid="check-result">
              {checked.newer.length === 0 ? (
                <Notice>Checked: the screens run the newest releases the source has.</Notice>
              ) : (
                <>
                  <Notice>
                    Checked: {checked.newer.length} newer release{checked.newer.length === 1 ? '' : 's'} than what screens run.
                  </Notice>
                  <ul class="newer-list">
                    {checked.newer.map((n) => (
                      <li key={`${n.family}:${n.architecture}`}>
                        {familyLabel(n.family)}
                        {n.architecture !== 'any' ? ` (${n.architecture})` : ''}: {n.latestVersion}
                        {n.currentVersion ? `, screens run ${n.currentVersion}` : ''}
                      </li>
                    ))}
                  </ul>
                </>
              )}
            </div>
          )}
        </div>
      )}
      <ErrorNote error={forget.error} />
    </article>
  );
}

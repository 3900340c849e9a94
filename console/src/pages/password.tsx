import { useEffect, useState } from 'preact/hooks';
import { api, ApiError, setCsrfToken } from '../api';
import { ErrorNote, formatTime, formValues, Notice, useAction, useTitle } from '../ui';
import { Field } from '../ui/fields';

export const PASSWORD_HELP = 'At least 12 characters. A few unrelated words make a strong password that is easy to type.';

/** "Password" on the account page: the current password, then the new one twice. */
export function ChangePasswordSection() {
  const [done, setDone] = useState<string | null>(null);
  const [mismatch, setMismatch] = useState(false);
  const change = useAction(async (form: HTMLFormElement) => {
    const v = formValues(form);
    if (v.newPassword !== v.repeat) {
      setMismatch(true);
      return;
    }
    const res = await api.post<{ csrfToken: string; otherSessionsEnded: number }>('me/password', {
      currentPassword: v.currentPassword,
      newPassword: v.newPassword,
    });
    // This session goes on under a new key: the next requests need its new CSRF token.
    setCsrfToken(res.csrfToken);
    form.reset();
    const n = res.otherSessionsEnded;
    setDone(`Your password is changed.${n > 0 ? ` You were signed out on ${n} other ${n === 1 ? 'browser or device' : 'browsers or devices'}.` : ''}`);
  });
  const err = change.error instanceof ApiError ? change.error : null;
  const fieldError = (f: string) => err?.fieldMessage(f) && (f === 'currentPassword' ? 'This is not your current password.' : err.fieldMessage(f));
  return (
    <article aria-labelledby="password-h">
      <header>
        <h2 id="password-h">Password</h2>
      </header>
      <form
        aria-label="Change your password"
        onSubmit={(e) => {
          e.preventDefault();
          setDone(null);
          setMismatch(false);
          void change.run(e.currentTarget);
        }}
      >
        <Field label="Current password" error={fieldError('currentPassword')}>
          {(p) => <input {...p} name="currentPassword" type="password" autocomplete="current-password" required maxLength={256} />}
        </Field>
        <div class="grid">
          <Field label="New password" error={fieldError('newPassword')} help={PASSWORD_HELP}>
            {(p) => <input {...p} name="newPassword" type="password" autocomplete="new-password" required minLength={12} maxLength={256} />}
          </Field>
          <Field label="Repeat the new password" error={mismatch ? 'The two new passwords differ.' : undefined}>
            {(p) => <input {...p} name="repeat" type="password" autocomplete="new-password" required maxLength={256} />}
          </Field>
        </div>
        <p class="muted">Changing it signs you out everywhere else; you stay signed in here.</p>
        <ErrorNote error={change.error ?? (mismatch ? new Error('The two new passwords differ.') : null)} />
        {done && <Notice>{done}</Notice>}
        <div class="form-actions">
          <button type="submit" aria-busy={change.busy} disabled={change.busy}>
            Change password
          </button>
        </div>
      </form>
    </article>
  );
}

/** The token of a set-password link: from the fragment (`#token=`), or the query for links typed by hand. */
function tokenFromLocation(): string {
  const fromHash = new URLSearchParams(window.location.hash.replace(/^#/, '')).get('token');
  const fromQuery = new URLSearchParams(window.location.search).get('token');
  return (fromHash ?? fromQuery ?? '').trim();
}

interface LinkInfo {
  email: string;
  displayName: string;
  expiresAt: string;
}

/**
 * `/set-password#token=...`: the page a one-time link opens. It works signed out (and also
 * when someone else is signed in on this browser). The token leaves the address bar at once
 * (it stays in memory), so it is not kept in the history or shown over a shoulder.
 */
export function SetPasswordPage() {
  useTitle('Set your password');
  const [token] = useState(tokenFromLocation);
  const [info, setInfo] = useState<LinkInfo | null>(null);
  const [problem, setProblem] = useState<unknown>(
    token ? null : new ApiError(401, 'invalid_credential', 'This link has no token. Open the whole link you were given, or ask for a new one.'),
  );
  const [done, setDone] = useState<string | null>(null);
  const [mismatch, setMismatch] = useState(false);

  useEffect(() => {
    if (window.location.hash || window.location.search) window.history.replaceState(null, '', '/set-password');
    if (!token) return;
    api.post<LinkInfo>('auth/password-link/check', { token }, { quiet401: true }).then(setInfo).catch(setProblem);
  }, [token]);

  const save = useAction(async (form: HTMLFormElement) => {
    const v = formValues(form);
    if (v.password !== v.repeat) {
      setMismatch(true);
      return;
    }
    const res = await api.post<{ email: string }>('auth/password-link/use', { token, password: v.password }, { quiet401: true });
    setDone(res.email);
  });
  const saveError = save.error instanceof ApiError ? save.error : null;
  // A link that stopped working while the form was open (used elsewhere, expired) is said like one that never did.
  const linkError = problem ?? (saveError && saveError.code !== 'validation_failed' ? saveError : null);

  return (
    <main class="container narrow gate" id="main">
      <hgroup>
        <h1>Set your password</h1>
        <p>Placard console</p>
      </hgroup>
      {done ? (
        <>
          <Notice>Your password is set. Sign in with {done} and your new password.</Notice>
          <a href="/" role="button">
            Go to sign-in
          </a>
        </>
      ) : linkError ? (
        <>
          <ErrorNote error={linkError} />
          <p>Ask the person who manages this Placard server for a new link. Links work once, for 24 hours.</p>
          <a href="/">Go to sign-in</a>
        </>
      ) : !info ? (
        <p aria-busy="true">Checking the link…</p>
      ) : (
        <form
          aria-label="Set your password"
          onSubmit={(e) => {
            e.preventDefault();
            setMismatch(false);
            void save.run(e.currentTarget);
          }}
        >
          <p>
            For <strong>{info.displayName}</strong> ({info.email}). This link works once, until {formatTime(info.expiresAt)}.
          </p>
          <input type="email" name="username" autocomplete="username" value={info.email} hidden readOnly />
          <Field label="New password" error={saveError?.fieldMessage('password')} help={PASSWORD_HELP}>
            {(p) => <input {...p} name="password" type="password" autocomplete="new-password" required minLength={12} maxLength={256} />}
          </Field>
          <Field label="Repeat the password" error={mismatch ? 'The two passwords differ.' : undefined}>
            {(p) => <input {...p} name="repeat" type="password" autocomplete="new-password" required maxLength={256} />}
          </Field>
          <ErrorNote error={saveError ?? (mismatch ? new Error('The two passwords differ.') : null)} />
          <button type="submit" aria-busy={save.busy} disabled={save.busy}>
            Set password
          </button>
        </form>
      )}
    </main>
  );
}

import { useState } from 'preact/hooks';
import { api, ApiError, setCsrfToken } from '../api';
import { ErrorNote, formValues, useAction, useTitle } from '../ui';

/** First run: the first account, an owner. */
export function SetupPage({ onDone }: { onDone: () => Promise<void> }) {
  useTitle('Set up Placard');
  const [mismatch, setMismatch] = useState(false);
  const { run, busy, error } = useAction(async (v: Record<string, string>) => {
    const res = await api.post<{ csrfToken: string }>('auth/setup', { email: v.email, displayName: v.displayName, password: v.password }, { quiet401: true });
    setCsrfToken(res.csrfToken);
    await onDone();
  });
  const fieldError = (f: string) => (error instanceof ApiError ? error.fieldMessage(f) : undefined);
  return (
    <main class="container narrow gate">
      <hgroup>
        <h1>Welcome to Placard</h1>
        <p>Create the owner account. You can add people and second factors afterwards.</p>
      </hgroup>
      <form
        aria-label="Create the owner account"
        onSubmit={(e) => {
          e.preventDefault();
          const v = formValues(e.currentTarget);
          if (v.password !== v.confirm) return setMismatch(true);
          setMismatch(false);
          void run(v);
        }}
      >
        <label>
          Your name
          <input name="displayName" autocomplete="name" required maxLength={100} aria-invalid={fieldError('displayName') ? true : undefined} />
        </label>
        {fieldError('displayName') && <small>{fieldError('displayName')}</small>}
        <label>
          Email
          <input name="email" type="email" autocomplete="username" required maxLength={254} aria-invalid={fieldError('email') ? true : undefined} />
        </label>
        {fieldError('email') && <small>{fieldError('email')}</small>}
        <label>
          Password
          <input
            name="password"
            type="password"
            autocomplete="new-password"
            required
            minLength={12}
            maxLength={256}
            aria-describedby="pw-help"
            aria-invalid={fieldError('password') ? true : undefined}
          />
        </label>
        <small id="pw-help">{fieldError('password') ?? 'At least 12 characters. A passphrase of a few words works well.'}</small>
        <label>
          Repeat the password
          <input name="confirm" type="password" autocomplete="new-password" required aria-invalid={mismatch || undefined} />
        </label>
        {mismatch && <small role="alert">The two passwords differ.</small>}
        <ErrorNote error={error} />
        <button type="submit" aria-busy={busy} disabled={busy}>
          Create owner account
        </button>
      </form>
    </main>
  );
}

import { startAuthentication } from '@simplewebauthn/browser';
import { useState } from 'preact/hooks';
import { api, setCsrfToken } from '../api';
import { ErrorNote, formValues, useAction, useTitle } from '../ui';

type Method = 'totp' | 'recovery_code' | 'passkey';
interface LoginAnswer {
  csrfToken?: string;
  mfaRequired?: true;
  methods?: Method[];
}

/** Sign-in: password (then a second factor when the account has one) or a passkey alone. */
export function SignInPage({ mfaPending, onDone }: { mfaPending: boolean; onDone: () => Promise<void> }) {
  const [methods, setMethods] = useState<Method[] | null>(mfaPending ? ['totp', 'passkey', 'recovery_code'] : null);
  useTitle('Sign in');

  const finish = async (res: { csrfToken: string }) => {
    setCsrfToken(res.csrfToken);
    await onDone();
  };

  const password = useAction(async (v: Record<string, string>) => {
    const res = await api.post<LoginAnswer>('auth/login', { email: v.email, password: v.password }, { quiet401: true });
    if (res.mfaRequired) setMethods(res.methods ?? []);
    else await finish(res as { csrfToken: string });
  });
  const passkey = useAction(async () => {
    const optionsJSON = await api.post<never>('auth/passkey/login/options', undefined, { quiet401: true });
    const response = await startAuthentication({ optionsJSON });
    await finish(await api.post<{ csrfToken: string }>('auth/passkey/login', { response }, { quiet401: true }));
  });

  if (methods) return <SecondFactor methods={methods} onBack={() => setMethods(null)} finish={finish} />;

  return (
    <main class="container narrow gate">
      <hgroup>
        <h1>Sign in</h1>
        <p>Placard console</p>
      </hgroup>
      <form
        aria-label="Sign in with email and password"
        onSubmit={(e) => {
          e.preventDefault();
          void password.run(formValues(e.currentTarget));
        }}
      >
        <label>
          Email
          <input name="email" type="email" autocomplete="username webauthn" required maxLength={254} />
        </label>
        <label>
          Password
          <input name="password" type="password" autocomplete="current-password" required maxLength={256} />
        </label>
        <ErrorNote error={password.error} />
        <button type="submit" aria-busy={password.busy} disabled={password.busy}>
          Sign in
        </button>
      </form>
      <hr />
      <button class="secondary outline full" type="button" aria-busy={passkey.busy} disabled={passkey.busy} onClick={() => void passkey.run()}>
        Sign in with a passkey
      </button>
      <ErrorNote error={passkey.error} />
    </main>
  );
}

function SecondFactor({ methods, onBack, finish }: { methods: Method[]; onBack: () => void; finish: (r: { csrfToken: string }) => Promise<void> }) {
  const [method, setMethod] = useState<Method>(methods.includes('totp') ? 'totp' : (methods[0] ?? 'totp'));
  useTitle('Second step');
  const verify = useAction(async (body: Record<string, unknown>) => {
    await finish(await api.post<{ csrfToken: string }>('auth/mfa/verify', body, { quiet401: true }));
  });
  const passkey = useAction(async () => {
    const optionsJSON = await api.post<never>('auth/mfa/passkey/options', undefined, { quiet401: true });
    const assertion = await startAuthentication({ optionsJSON });
    await finish(await api.post<{ csrfToken: string }>('auth/mfa/verify', { passkey: assertion }, { quiet401: true }));
  });
  const label: Record<Method, string> = { totp: 'Authenticator app', passkey: 'Passkey', recovery_code: 'Recovery code' };

  return (
    <main class="container narrow gate">
      <hgroup>
        <h1>Second step</h1>
        <p>Confirm it is you.</p>
      </hgroup>
      {methods.length > 1 && (
        <div role="group" aria-label="Second factor">
          {methods.map((m) => (
            <button key={m} type="button" class={m === method ? '' : 'outline'} aria-pressed={m === method} onClick={() => setMethod(m)}>
              {label[m]}
            </button>
          ))}
        </div>
      )}
      {method === 'totp' && (
        <form
          aria-label="Authenticator code"
          onSubmit={(e) => {
            e.preventDefault();
            void verify.run({ totp: formValues(e.currentTarget).totp!.replace(/\s+/g, '') });
          }}
        >
          <label>
            Six-digit code from your authenticator app
            <input name="totp" inputMode="numeric" autocomplete="one-time-code" pattern="[0-9 ]{6,8}" required autoFocus maxLength={8} />
          </label>
          <ErrorNote error={verify.error} />
          <button type="submit" aria-busy={verify.busy} disabled={verify.busy}>
            Verify
          </button>
        </form>
      )}
      {method === 'recovery_code' && (
        <form
          aria-label="Recovery code"
          onSubmit={(e) => {
            e.preventDefault();
            void verify.run({ recoveryCode: formValues(e.currentTarget).recoveryCode!.trim() });
          }}
        >
          <label>
            One of your recovery codes (each works once)
            <input name="recoveryCode" autocomplete="off" required autoFocus maxLength={32} />
          </label>
          <ErrorNote error={verify.error} />
          <button type="submit" aria-busy={verify.busy} disabled={verify.busy}>
            Use recovery code
          </button>
        </form>
      )}
      {method === 'passkey' && (
        <>
          <p>Use the passkey on this device or your security key.</p>
          <button type="button" aria-busy={passkey.busy} disabled={passkey.busy} onClick={() => void passkey.run()}>
            Use a passkey
          </button>
          <ErrorNote error={passkey.error} />
        </>
      )}
      <p>
        <a
          href="#back"
          onClick={(e) => {
            e.preventDefault();
            onBack();
          }}
        >
          Back to sign-in
        </a>
      </p>
    </main>
  );
}

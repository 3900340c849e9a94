import { startRegistration } from '@simplewebauthn/browser';
import { useState } from 'preact/hooks';
import { api } from '../api';
import { applyTheme, type Theme } from '../theme';
import { ErrorNote, formatTime, formValues, Notice, useAction, useLoad, useSession, useTitle } from '../ui';
import { ChangePasswordSection } from './password';

interface Passkey {
  id: string;
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
}
interface Security {
  totpEnabled: boolean;
  recoveryCodesRemaining: number;
  passkeys: Passkey[];
}

/** Your account: theme, TOTP, recovery codes, passkeys. */
export function SecurityPage() {
  useTitle('Account & security');
  const { user } = useSession();
  const security = useLoad(() => api.get<Security>('me/security'));
  const s = security.data;
  return (
    <>
      <hgroup>
        <h1>Account &amp; security</h1>
        <p>
          {user.displayName} · {user.email} · <span class="badge">{user.role}</span>
        </p>
      </hgroup>
      <Preferences />
      <ChangePasswordSection />
      <ErrorNote error={security.error} />
      {!s && !security.error && <p aria-busy="true">Loading…</p>}
      {s && (
        <>
          <TotpSection enabled={s.totpEnabled} reload={security.reload} />
          <PasskeysSection passkeys={s.passkeys} reload={security.reload} />
          <RecoverySection remaining={s.recoveryCodesRemaining} hasFactor={s.totpEnabled || s.passkeys.length > 0} reload={security.reload} />
        </>
      )}
    </>
  );
}

function Preferences() {
  const prefs = useLoad(() => api.get<{ theme: Theme }>('me/preferences'));
  const save = useAction(async (theme: Theme) => {
    const p = await api.patch<{ theme: Theme }>('me/preferences', { theme });
    applyTheme(p.theme);
    prefs.setData(p);
  });
  return (
    <article>
      <header>
        <h2>Appearance</h2>
      </header>
      <label>
        Theme
        <select
          name="theme"
          value={prefs.data?.theme ?? 'system'}
          disabled={!prefs.data || save.busy}
          onChange={(e) => void save.run(e.currentTarget.value as Theme)}
        >
          <option value="system">Same as this device</option>
          <option value="light">Light</option>
          <option value="dark">Dark</option>
        </select>
      </label>
      <ErrorNote error={save.error ?? prefs.error} />
    </article>
  );
}

function TotpSection({ enabled, reload }: { enabled: boolean; reload: () => Promise<void> }) {
  const [enrolment, setEnrolment] = useState<{ secret: string; otpauthUri: string; qrCodeDataUrl: string } | null>(null);
  const [done, setDone] = useState(false);
  const start = useAction(async () => {
    setDone(false);
    setEnrolment(await api.post('me/security/totp'));
  });
  const confirm = useAction(async (code: string) => {
    await api.post('me/security/totp/confirm', { code });
    setEnrolment(null);
    setDone(true);
    await reload();
  });
  const remove = useAction(async (v: Record<string, string>) => {
    await api.post('me/security/totp/remove', v.code ? { code: v.code } : { password: v.password });
    setDone(false);
    await reload();
  });
  return (
    <article aria-labelledby="totp-h">
      <header>
        <h2 id="totp-h">Authenticator app (TOTP)</h2>
      </header>
      {enabled ? (
        <>
          <p>
            <span class="badge ok">On</span> Signing in asks for a six-digit code from your app.
          </p>
          {done && <Notice>Authenticator app turned on. Make recovery codes below, in case you lose the phone.</Notice>}
          <details>
            <summary role="button" class="secondary outline">
              Turn off
            </summary>
            <form
              aria-label="Turn off the authenticator app"
              onSubmit={(e) => {
                e.preventDefault();
                void remove.run(formValues(e.currentTarget));
              }}
            >
              <p>Confirm with a current code, or with your password.</p>
              <div class="grid">
                <label>
                  Code
                  <input name="code" inputMode="numeric" autocomplete="one-time-code" maxLength={8} />
                </label>
                <label>
                  or password
                  <input name="password" type="password" autocomplete="current-password" maxLength={256} />
                </label>
              </div>
              <ErrorNote error={remove.error} />
              <button type="submit" class="contrast" aria-busy={remove.busy} disabled={remove.busy}>
                Turn off the authenticator app
              </button>
            </form>
          </details>
        </>
      ) : enrolment ? (
        <form
          aria-label="Confirm the authenticator app"
          onSubmit={(e) => {
            e.preventDefault();
            void confirm.run(formValues(e.currentTarget).code!.replace(/\s+/g, ''));
          }}
        >
          <div class="totp-enrol">
            <img src={enrolment.qrCodeDataUrl} alt="QR code to scan with your authenticator app" width="200" height="200" />
            <div>
              <p>Scan the code with an authenticator app (Aegis, Google Authenticator, 1Password, …), then type the code it shows.</p>
              <p>
                Cannot scan? Enter this key: <code data-testid="totp-secret">{enrolment.secret}</code>
              </p>
              <label>
                Code from the app
                <input name="code" inputMode="numeric" autocomplete="one-time-code" pattern="[0-9 ]{6,8}" required maxLength={8} autoFocus />
              </label>
            </div>
          </div>
          <ErrorNote error={confirm.error} />
          <div class="row">
            <button type="submit" aria-busy={confirm.busy} disabled={confirm.busy}>
              Turn on
            </button>
            <button type="button" class="secondary outline" onClick={() => setEnrolment(null)}>
              Cancel
            </button>
          </div>
        </form>
      ) : (
        <>
          <p>
            <span class="badge">Off</span> Add a second step to signing in with a code from an app on your phone.
          </p>
          <ErrorNote error={start.error} />
          <button type="button" aria-busy={start.busy} disabled={start.busy} onClick={() => void start.run()}>
            Set up an authenticator app
          </button>
        </>
      )}
    </article>
  );
}

function PasskeysSection({ passkeys, reload }: { passkeys: Passkey[]; reload: () => Promise<void> }) {
  const add = useAction(async (name: string) => {
    const optionsJSON = await api.post<never>('me/security/passkeys/options');
    const response = await startRegistration({ optionsJSON });
    await api.post('me/security/passkeys', { response, ...(name.trim() ? { name: name.trim() } : {}) });
    await reload();
  });
  return (
    <article aria-labelledby="passkeys-h">
      <header>
        <h2 id="passkeys-h">Passkeys</h2>
      </header>
      <p>Sign in with your device’s screen lock or a security key, with no password, or use one as the second step.</p>
      {passkeys.length === 0 ? (
        <p class="muted">No passkeys yet.</p>
      ) : (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Added</th>
                <th scope="col">Last used</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {passkeys.map((p) => (
                <PasskeyRow key={p.id} passkey={p} reload={reload} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      <form
        aria-label="Add a passkey"
        onSubmit={(e) => {
          e.preventDefault();
          const form = e.currentTarget;
          void add.run(formValues(form).name ?? '').then((ok) => ok && form.reset());
        }}
      >
        <fieldset role="group">
          <input name="name" placeholder="Name, e.g. Work laptop" aria-label="New passkey name" maxLength={100} />
          <button type="submit" aria-busy={add.busy} disabled={add.busy}>
            Add a passkey
          </button>
        </fieldset>
        <ErrorNote error={add.error} />
      </form>
    </article>
  );
}

function PasskeyRow({ passkey, reload }: { passkey: Passkey; reload: () => Promise<void> }) {
  const [editing, setEditing] = useState(false);
  const rename = useAction(async (name: string) => {
    await api.patch(`me/security/passkeys/${passkey.id}`, { name });
    setEditing(false);
    await reload();
  });
  const remove = useAction(async () => {
    await api.post(`me/security/passkeys/${passkey.id}/remove`);
    await reload();
  });
  return (
    <tr>
      <td>
        {editing ? (
          <form
            aria-label={`Rename ${passkey.name}`}
            onSubmit={(e) => {
              e.preventDefault();
              void rename.run(formValues(e.currentTarget).name ?? '');
            }}
          >
            <fieldset role="group">
              <input name="name" defaultValue={passkey.name} aria-label={`New name for ${passkey.name}`} required maxLength={100} autoFocus />
              <button type="submit" aria-busy={rename.busy}>
                Save
              </button>
              <button type="button" class="secondary outline" onClick={() => setEditing(false)}>
                Cancel
              </button>
            </fieldset>
          </form>
        ) : (
          passkey.name
        )}
        <ErrorNote error={rename.error ?? remove.error} />
      </td>
      <td>{formatTime(passkey.createdAt)}</td>
      <td>{formatTime(passkey.lastUsedAt)}</td>
      <td class="actions">
        {!editing && (
          <button type="button" class="secondary outline small" onClick={() => setEditing(true)} aria-label={`Rename ${passkey.name}`}>
            Rename
          </button>
        )}
        <button
          type="button"
          class="contrast outline small"
          aria-label={`Remove ${passkey.name}`}
          disabled={remove.busy}
          onClick={() => {
            if (confirm(`Remove the passkey “${passkey.name}”? It will no longer sign you in.`)) void remove.run();
          }}
        >
          Remove
        </button>
      </td>
    </tr>
  );
}

function RecoverySection({ remaining, hasFactor, reload }: { remaining: number; hasFactor: boolean; reload: () => Promise<void> }) {
  const [codes, setCodes] = useState<string[] | null>(null);
  const issue = useAction(async () => {
    const res = await api.post<{ codes: string[] }>('me/security/recovery-codes');
    setCodes(res.codes);
    await reload();
  });
  const download = () => {
    const blob = new Blob([`Placard recovery codes (each works once)\n\n${codes!.join('\n')}\n`], { type: 'text/plain' });
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = 'placard-recovery-codes.txt';
    a.click();
    URL.revokeObjectURL(a.href);
  };
  return (
    <article aria-labelledby="recovery-h">
      <header>
        <h2 id="recovery-h">Recovery codes</h2>
      </header>
      {codes ? (
        <>
          <Notice>Save these codes now: they are shown only this once. Each one signs you in once when you cannot use your app or passkey.</Notice>
          <ol class="codes" data-testid="recovery-codes">
            {codes.map((c) => (
              <li key={c}>
                <code>{c}</code>
              </li>
            ))}
          </ol>
          <div class="row">
            <button type="button" class="secondary" onClick={download}>
              Download as text
            </button>
            <button type="button" class="secondary outline" onClick={() => void navigator.clipboard?.writeText(codes.join('\n'))}>
              Copy
            </button>
            <button type="button" onClick={() => setCodes(null)}>
              I have saved them
            </button>
          </div>
        </>
      ) : (
        <>
          <p>
            {hasFactor
              ? remaining > 0
                ? `${remaining} unused code${remaining === 1 ? '' : 's'} left.`
                : 'You have no recovery codes.'
              : 'Turn on an authenticator app or add a passkey first; recovery codes stand in for them.'}
          </p>
          <ErrorNote error={issue.error} />
          <button
            type="button"
            class={remaining > 0 ? 'secondary outline' : ''}
            disabled={!hasFactor || issue.busy}
            aria-busy={issue.busy}
            onClick={() => {
              if (remaining === 0 || confirm('Make ten new codes? The old ones stop working.')) void issue.run();
            }}
          >
            {remaining > 0 ? 'Replace with new codes' : 'Make recovery codes'}
          </button>
        </>
      )}
    </article>
  );
}

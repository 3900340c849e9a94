import { useState } from 'preact/hooks';
import { api, ApiError, qs, ROLES, type Page, type Role, type User } from '../api';
import { ErrorNote, formatDate, formatTime, formValues, Notice, useAction, useLoad, useSession, useTitle } from '../ui';
import { CopyField, Modal } from '../ui/dialogs';
import { Field } from '../ui/fields';
import { PASSWORD_HELP } from './password';

interface PasswordLink {
  url: string;
  expiresAt: string;
}

/** The link a user opens to set their own password, shown once with a Copy button. */
function LinkShown({ user, link }: { user: { displayName: string }; link: PasswordLink }) {
  return (
    <CopyField
      label={`Set-password link for ${user.displayName}`}
      value={link.url}
      testId="password-link"
      help={<>Send it to them yourself (message, chat…). It works once, until {formatTime(link.expiresAt)}, and is not shown again.</>}
    />
  );
}

const ROLE_HELP: Record<Role, string> = {
  owner: 'everything, including owners and integration tokens',
  admin: 'everything but owners and integration tokens',
  publisher: 'edit, approve and publish content',
  editor: 'edit content and submit it for approval',
  viewer: 'read only',
};

/** People who use the console (owners and admins). */
export function UsersPage() {
  useTitle('Users');
  const { user: me } = useSession();
  const [q, setQ] = useState('');
  const [role, setRole] = useState('');
  const [showDisabled, setShowDisabled] = useState('');
  const [pages, setPages] = useState<User[]>([]);
  const list = useLoad(async () => {
    const page = await api.get<Page<User>>(`users${qs({ q, role, disabled: showDisabled, limit: 100 })}`);
    setPages([]);
    return page;
  }, [q, role, showDisabled]);
  const more = useAction(async () => {
    const cursor = list.data?.nextCursor;
    if (!cursor) return;
    const page = await api.get<Page<User>>(`users${qs({ q, role, disabled: showDisabled, limit: 100, cursor })}`);
    setPages((p) => [...p, ...page.items]);
    list.setData({ items: list.data!.items, nextCursor: page.nextCursor });
  });
  const users = [...(list.data?.items ?? []), ...pages];
  const roles = me.role === 'owner' ? ROLES : ROLES.filter((r) => r !== 'owner');

  return (
    <>
      <hgroup>
        <h1>Users</h1>
        <p>Who can sign in to this console, and what they may do.</p>
      </hgroup>
      <AddUser roles={roles} onAdded={list.reload} />
      <form class="filters" aria-label="Filter users" onSubmit={(e) => e.preventDefault()}>
        <input type="search" name="q" placeholder="Search name or email" aria-label="Search users" value={q} onInput={(e) => setQ(e.currentTarget.value)} />
        <select aria-label="Role" value={role} onChange={(e) => setRole(e.currentTarget.value)}>
          <option value="">Every role</option>
          {ROLES.map((r) => (
            <option key={r} value={r}>
              {r}
            </option>
          ))}
        </select>
        <select aria-label="State" value={showDisabled} onChange={(e) => setShowDisabled(e.currentTarget.value)}>
          <option value="">Active and disabled</option>
          <option value="false">Active</option>
          <option value="true">Disabled</option>
        </select>
      </form>
      <ErrorNote error={list.error} />
      <div class="table-wrap">
        <table class="striped" aria-busy={list.loading}>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Email</th>
              <th scope="col">Role</th>
              <th scope="col">Second factor</th>
              <th scope="col">Since</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {users.map((u) => (
              <UserRow key={u.id} user={u} me={me} roles={roles} onChanged={list.reload} />
            ))}
            {!list.loading && users.length === 0 && (
              <tr>
                <td colSpan={6} class="muted">
                  No users match.
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
      {list.data?.nextCursor && (
        <button type="button" class="secondary outline" aria-busy={more.busy} onClick={() => void more.run()}>
          Show more
        </button>
      )}
      <ErrorNote error={more.error} />
    </>
  );
}

function AddUser({ roles, onAdded }: { roles: readonly Role[]; onAdded: () => Promise<void> }) {
  const [open, setOpen] = useState(false);
  const [added, setAdded] = useState<{ user: User; link: PasswordLink | null } | null>(null);
  // The least role by default; owners are never the default.
  const [role, setRole] = useState<Role>('viewer');
  const [how, setHow] = useState<'link' | 'password'>('link');
  const [formKey, setFormKey] = useState(0);
  const add = useAction(async (form: HTMLFormElement) => {
    const v = formValues(form);
    const user = await api.post<User>('users', { email: v.email, displayName: v.displayName, role, ...(how === 'password' ? { password: v.password } : {}) });
    const link = how === 'link' ? await api.post<PasswordLink>(`users/${user.id}/password-link`) : null;
    // A fresh form for the next person (a remount: form.reset() would leave the controlled radios unticked).
    setRole('viewer');
    setHow('link');
    setFormKey((k) => k + 1);
    setAdded({ user, link });
    await onAdded();
  });
  const fieldError = (f: string) => (add.error instanceof ApiError ? add.error.fieldMessage(f) : undefined);
  return (
    <details open={open} onToggle={(e) => setOpen((e.currentTarget as HTMLDetailsElement).open)}>
      <summary role="button" class="outline">
        Add a user
      </summary>
      <form
        key={formKey}
        aria-label="Add a user"
        onSubmit={(e) => {
          e.preventDefault();
          setAdded(null);
          void add.run(e.currentTarget);
        }}
      >
        <div class="grid">
          <Field label="Name" error={fieldError('displayName')}>
            {(p) => <input {...p} name="displayName" required maxLength={100} autocomplete="off" />}
          </Field>
          <Field label="Email" error={fieldError('email')} help="They sign in with it.">
            {(p) => <input {...p} name="email" type="email" required maxLength={254} autocomplete="off" />}
          </Field>
        </div>
        <Field label="Role" error={fieldError('role')} help={`${role.charAt(0).toUpperCase()}${role.slice(1)}s may: ${ROLE_HELP[role]}.`}>
          {(p) => (
            <select {...p} name="role" required value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
              {[...roles].reverse().map((r) => (
                <option key={r} value={r}>
                  {r}
                </option>
              ))}
            </select>
          )}
        </Field>
        <fieldset class="choices">
          <legend>How they get a password</legend>
          <label>
            <input type="radio" name="how" value="link" checked={how === 'link'} onChange={() => setHow('link')} />
            Make a link for them to choose their own (works once, for 24 hours)
          </label>
          <label>
            <input type="radio" name="how" value="password" checked={how === 'password'} onChange={() => setHow('password')} />
            Type a password for them now
          </label>
        </fieldset>
        {how === 'password' && (
          <Field
            label="First password"
            error={fieldError('password')}
            help={`${PASSWORD_HELP} Share it safely; they can change it and add a second factor after signing in.`}
          >
            {(p) => <input {...p} name="password" type="password" required minLength={12} maxLength={256} autocomplete="new-password" />}
          </Field>
        )}
        <ErrorNote error={add.error} />
        {added && (
          <div data-testid="user-added">
            <Notice>
              {added.user.displayName} was added as {added.user.role}.{' '}
              {added.link ? 'Give them this link to choose their password:' : `They can sign in as ${added.user.email} with the password you chose.`}
            </Notice>
            {added.link && <LinkShown user={added.user} link={added.link} />}
          </div>
        )}
        <button type="submit" aria-busy={add.busy} disabled={add.busy}>
          Add user
        </button>
      </form>
    </details>
  );
}

/** An owner's or admin's password tools for another user: a one-time link, or a new password typed here. */
function PasswordDialog({ user, onClose, onChanged }: { user: User; onClose: () => void; onChanged: () => Promise<void> }) {
  const [link, setLink] = useState<PasswordLink | null>(null);
  const [done, setDone] = useState(false);
  const makeLink = useAction(async () => {
    setLink(await api.post<PasswordLink>(`users/${user.id}/password-link`));
    await onChanged();
  });
  const setPassword = useAction(async (form: HTMLFormElement) => {
    await api.post(`users/${user.id}/password`, { password: formValues(form).password });
    form.reset();
    setDone(true);
    await onChanged();
  });
  const fieldError = setPassword.error instanceof ApiError ? setPassword.error.fieldMessage('password') : undefined;
  return (
    <Modal open title={`Password for ${user.displayName}`} busy={makeLink.busy || setPassword.busy} onClose={onClose} testId="password-dialog">
      <p>Either way, {user.displayName} is signed out everywhere, and any earlier link stops working. Their second factors stay as they are.</p>
      <section aria-labelledby="pw-link-h">
        <h3 id="pw-link-h" class="small-heading">
          Let them choose a new password
        </h3>
        {link ? <LinkShown user={user} link={link} /> : <p class="muted">A link they open to set their own password. Nothing is sent: you hand it over.</p>}
        <ErrorNote error={makeLink.error} />
        <button type="button" class="secondary" aria-busy={makeLink.busy} disabled={makeLink.busy} onClick={() => void makeLink.run()}>
          {link ? 'Make another link' : 'Make a set-password link'}
        </button>
      </section>
      <hr />
      <section aria-labelledby="pw-set-h">
        <h3 id="pw-set-h" class="small-heading">
          Or set one for them now
        </h3>
        <form
          aria-label={`Set a new password for ${user.displayName}`}
          onSubmit={(e) => {
            e.preventDefault();
            setDone(false);
            void setPassword.run(e.currentTarget);
          }}
        >
          <Field label="New password" error={fieldError} help={PASSWORD_HELP}>
            {(p) => <input {...p} name="password" type="password" required minLength={12} maxLength={256} autocomplete="new-password" />}
          </Field>
          <ErrorNote error={setPassword.error} />
          {done && <Notice>The new password is set. Tell {user.displayName} safely.</Notice>}
          <button type="submit" aria-busy={setPassword.busy} disabled={setPassword.busy}>
            Set password
          </button>
        </form>
      </section>
    </Modal>
  );
}

function UserRow({ user, me, roles, onChanged }: { user: User; me: User; roles: readonly Role[]; onChanged: () => Promise<void> }) {
  const self = user.id === me.id;
  const manageable = me.role === 'owner' || user.role !== 'owner';
  const [note, setNote] = useState<string | null>(null);
  const [passwordOpen, setPasswordOpen] = useState(false);
  const act = useAction(async (what: () => Promise<unknown>, done?: string) => {
    setNote(null);
    await what();
    if (done) setNote(done);
    await onChanged();
  });
  return (
    <tr data-user={user.email} class={user.disabled ? 'disabled' : undefined}>
      <td>
        {user.displayName}
        {self && <span class="muted"> (you)</span>}
        {user.disabled && <span class="badge warn">disabled</span>}
        {user.passwordSet === false && <span class="badge">no password yet</span>}
      </td>
      <td>{user.email}</td>
      <td>
        {manageable && !self ? (
          <select
            aria-label={`Role of ${user.displayName}`}
            value={user.role}
            disabled={act.busy}
            onChange={(e) => {
              const role = e.currentTarget.value as Role;
              void act.run(() => api.patch(`users/${user.id}`, { role }), `${user.displayName} is now ${role}; their sessions ended.`);
            }}
          >
            {(roles.includes(user.role) ? roles : [user.role, ...roles]).map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        ) : (
          <span class="badge">{user.role}</span>
        )}
      </td>
      <td>{user.totpEnabled ? 'Authenticator app' : <span class="muted">—</span>}</td>
      <td class="nowrap">{formatDate(user.createdAt)}</td>
      <td class="actions">
        {manageable && !self && (
          <>
            <button
              type="button"
              class="secondary outline small"
              disabled={act.busy}
              onClick={() => void act.run(() => api.patch(`users/${user.id}`, { disabled: !user.disabled }))}
            >
              {user.disabled ? 'Enable' : 'Disable'}
            </button>
            {!user.disabled && (
              <button
                type="button"
                class="secondary outline small"
                disabled={act.busy}
                onClick={() => setPasswordOpen(true)}
                aria-label={`Password of ${user.displayName}`}
              >
                Password…
              </button>
            )}
            <button
              type="button"
              class="secondary outline small"
              disabled={act.busy}
              title="Clear their authenticator app, recovery codes and passkeys, and sign them out"
              onClick={() => {
                if (confirm(`Reset ${user.displayName}’s second factors? They sign in with the password only, then set up again.`))
                  void act.run(() => api.post(`users/${user.id}/security/reset`), `${user.displayName}’s second factors were cleared.`);
              }}
            >
              Reset security
            </button>
            {user.disabled && (
              <button
                type="button"
                class="contrast outline small"
                disabled={act.busy}
                onClick={() => {
                  if (confirm(`Delete ${user.displayName} for good? This cannot be undone.`)) void act.run(() => api.del(`users/${user.id}/permanent`));
                }}
              >
                Delete
              </button>
            )}
          </>
        )}
        <ErrorNote error={act.error} />
        {note && <Notice>{note}</Notice>}
        {passwordOpen && <PasswordDialog user={user} onClose={() => setPasswordOpen(false)} onChanged={onChanged} />}
      </td>
    </tr>
  );
}

import { useState } from 'preact/hooks';
import { api, ApiError, qs, ROLES, type Page, type Role, type User } from '../api';
import { ErrorNote, formatDate, formValues, Notice, useAction, useLoad, useSession, useTitle } from '../ui';

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
  const [added, setAdded] = useState<string | null>(null);
  const add = useAction(async (form: HTMLFormElement) => {
    const v = formValues(form);
    const user = await api.post<User>('users', { email: v.email, displayName: v.displayName, role: v.role, password: v.password });
    form.reset();
    setAdded(`${user.displayName} can now sign in as ${user.email} with the password you chose.`);
    await onAdded();
  });
  const fieldError = (f: string) => (add.error instanceof ApiError ? add.error.fieldMessage(f) : undefined);
  return (
    <details open={open} onToggle={(e) => setOpen((e.currentTarget as HTMLDetailsElement).open)}>
      <summary role="button" class="outline">
        Add a user
      </summary>
      <form
        aria-label="Add a user"
        onSubmit={(e) => {
          e.preventDefault();
          setAdded(null);
          void add.run(e.currentTarget);
        }}
      >
        <div class="grid">
          <div>
            <label>
              Name
              <input name="displayName" required maxLength={100} autocomplete="off" />
            </label>
            {fieldError('displayName') && <small>{fieldError('displayName')}</small>}
          </div>
          <div>
            <label>
              Email
              <input name="email" type="email" required maxLength={254} autocomplete="off" aria-invalid={fieldError('email') ? true : undefined} />
            </label>
            {fieldError('email') && <small>{fieldError('email')}</small>}
          </div>
        </div>
        <div class="grid">
          <label>
            Role
            <select name="role" required defaultValue="editor">
              {roles.map((r) => (
                <option key={r} value={r}>
                  {r} — {ROLE_HELP[r]}
                </option>
              ))}
            </select>
          </label>
          <div>
            <label>
              First password
              <input name="password" type="password" required minLength={12} maxLength={256} autocomplete="new-password" aria-invalid={fieldError('password') ? true : undefined} />
            </label>
            <small>{fieldError('password') ?? 'At least 12 characters; share it safely. They can add a second factor after signing in.'}</small>
          </div>
        </div>
        <ErrorNote error={add.error} />
        {added && <Notice>{added}</Notice>}
        <button type="submit" aria-busy={add.busy} disabled={add.busy}>
          Add user
        </button>
      </form>
    </details>
  );
}

function UserRow({ user, me, roles, onChanged }: { user: User; me: User; roles: readonly Role[]; onChanged: () => Promise<void> }) {
  const self = user.id === me.id;
  const manageable = me.role === 'owner' || user.role !== 'owner';
  const [note, setNote] = useState<string | null>(null);
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
      </td>
    </tr>
  );
}

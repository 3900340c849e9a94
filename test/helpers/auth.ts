import type { Role } from '../../server/src/platform/http/auth.js';
import { hashPassword } from '../../server/src/modules/accounts/passwords.js';
import { countUsers, insertUser } from '../../server/src/modules/accounts/users.repo.js';
import type { Test } from 'tap';
import { startApp, type TestApp, type TestAppOptions } from './harness.js';

export const TEST_PASSWORD = 'correct horse battery staple';

/** The `Cookie` header for the cookies a response set (name=value pairs only). */
export function cookieHeader(res: { headers: Headers }, previous = ''): string {
  const jar = new Map<string, string>();
  for (const pair of previous.split(/;\s*/).filter(Boolean)) {
    const i = pair.indexOf('=');
    jar.set(pair.slice(0, i), pair.slice(i + 1));
  }
  for (const c of res.headers.getSetCookie()) {
    const [pair] = c.split(';');
    const i = pair!.indexOf('=');
    const name = pair!.slice(0, i);
    const value = pair!.slice(i + 1);
    if (value === '' || /expires=Thu, 01 Jan 1970/i.test(c)) jar.delete(name);
    else jar.set(name, value);
  }
  return [...jar].map(([k, v]) => `${k}=${v}`).join('; ');
}

export interface SignedIn {
  /** Pass to app.json / app.fetch: the session cookie and the CSRF token. */
  headers: { cookie: string; 'x-csrf-token': string };
  user: { id: string; email: string; role: Role; displayName: string };
  password: string;
}

let counter = 0;

/**
 * A signed-in console user of `role` (default owner), through the real routes: the first
 * call on an empty database runs /auth/setup; later ones insert the user and /auth/login.
 */
export async function signIn(app: TestApp, options: { role?: Role; email?: string; password?: string } = {}): Promise<SignedIn> {
  const role = options.role ?? 'owner';
  const password = options.password ?? TEST_PASSWORD;
  const email = options.email ?? `${role}-${++counter}-${Date.now()}@example.test`;
  let res;
  if (role === 'owner' && (await countUsers(app.deps.db)) === 0) {
    res = await app.json('/api/v1/auth/setup', { method: 'POST', json: { email, password, displayName: `Test ${role}` } });
  } else {
    await insertUser(app.deps.db, { email, displayName: `Test ${role}`, role, passwordHash: await hashPassword(password) });
    res = await app.json('/api/v1/auth/login', { method: 'POST', json: { email, password } });
  }
  if (res.status !== 200 && res.status !== 201) throw new Error(`signIn failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { headers: { cookie: cookieHeader(res), 'x-csrf-token': res.body.data.csrfToken }, user: res.body.data.user, password };
}

/**
 * The setup most route tests share: a running app, its first owner signed in, and `call`,
 * a JSON request as that owner (`headers` are added to the owner's cookie and CSRF token).
 */
export async function signedInApp(t: Test, options: TestAppOptions = {}) {
  const app = await startApp(t, options);
  const owner = await signIn(app);
  const call = (method: string, path: string, json?: unknown, headers: Record<string, string> = {}) =>
    app.json(path, { method, headers: { ...owner.headers, ...headers }, ...(json !== undefined ? { json } : {}) });
  return { app, owner, call };
}

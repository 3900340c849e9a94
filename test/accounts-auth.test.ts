import t from 'tap';
import { cookieHeader, signIn, TEST_PASSWORD } from './helpers/auth.js';
import { startApp } from './helpers/harness.js';

const json = (body: unknown, headers: Record<string, string> = {}) => ({ method: 'POST', json: body, headers });

t.test('first run: status asks for setup, setup makes a signed-in owner once', async (t) => {
  const app = await startApp(t);
  let status = await app.json('/api/v1/auth/status');
  t.same(status.body.data, { setupRequired: true, authenticated: false, mfaPending: false, user: null, csrfToken: null, approvalsRequired: false });

  let res = await app.json('/api/v1/auth/setup', json({ email: 'Owner@Example.test', password: 'short', displayName: 'O' }));
  t.equal(res.status, 400, 'a short password is refused');
  t.same(
    res.body.error.details.issues.map((i: { path: string[] }) => i.path[0]),
    ['password'],
  );

  res = await app.json('/api/v1/auth/setup', json({ email: 'Owner@Example.test', password: TEST_PASSWORD, displayName: 'Olive' }));
  t.equal(res.status, 201);
  t.equal(res.body.data.user.role, 'owner');
  t.equal(res.body.data.user.email, 'owner@example.test', 'emails are stored lower-case');
  const setCookie = res.headers.getSetCookie().join('\n');
  t.match(setCookie, /placard\.sid=/);
  t.match(setCookie, /httponly/i);
  t.match(setCookie, /samesite=lax/i);
  t.notMatch(setCookie, /secure/i, 'no Secure flag over plain HTTP');
  const cookie = cookieHeader(res);

  status = await app.json('/api/v1/auth/status', { headers: { cookie } });
  t.equal(status.body.data.authenticated, true);
  t.equal(status.body.data.setupRequired, false);
  t.equal(status.body.data.csrfToken, res.body.data.csrfToken);

  res = await app.json('/api/v1/auth/setup', json({ email: 'b@example.test', password: TEST_PASSWORD, displayName: 'B' }));
  t.equal(res.status, 409, 'setup is refused once a user exists');
  t.equal(res.body.error.code, 'conflict');

  const row = await app.deps.db.selectFrom('users').select('password_hash').executeTakeFirstOrThrow();
  t.match(row.password_hash, /^\$argon2id\$v=19\$/, 'argon2id');
  const params = Object.fromEntries(
    row
      .password_hash!.split('$')[3]!
      .split(',')
      .map((kv) => kv.split('=')),
  );
  t.ok(Number(params.m) >= 19456 && Number(params.t) >= 2, `OWASP minimum (19 MiB, t=2): ${row.password_hash!.split('$')[3]}`);
  const sessions = await app.deps.db.selectFrom('sessions').select('id').execute();
  t.notOk(
    sessions.some((s) => cookie.includes(s.id)),
    'the cookie key is not stored, only its hash',
  );
});

t.test('login: generic failures, fixation impossible, logout revokes copies, CSRF enforced', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);

  const wrong = await app.json('/api/v1/auth/login', json({ email: owner.user.email, password: 'not the password at all' }));
  const unknown = await app.json('/api/v1/auth/login', json({ email: 'nobody@example.test', password: 'not the password at all' }));
  t.equal(wrong.status, 401);
  t.equal(wrong.body.error.code, 'invalid_credential');
  t.same(unknown.body, wrong.body, 'unknown email and wrong password look the same');

  // An anonymous session exists before sign-in (a passkey challenge made one)...
  const pre = await app.fetch('/api/v1/auth/passkey/login/options', { method: 'POST' });
  const before = cookieHeader(pre);
  t.match(before, /placard\.sid=/);
  // ...and signing in with it yields a different session key.
  const login = await app.json('/api/v1/auth/login', json({ email: owner.user.email, password: TEST_PASSWORD }, { cookie: before }));
  t.equal(login.status, 200);
  const after = cookieHeader(login, before);
  const sid = (c: string) => /placard\.sid=([^;]+)/.exec(c)?.[1];
  t.not(sid(after), sid(before), 'the session key changes on login');
  const stale = await app.json('/api/v1/auth/status', { headers: { cookie: before } });
  t.equal(stale.body.data.authenticated, false, 'the pre-login key did not become signed in');

  const headers = { cookie: after, 'x-csrf-token': login.body.data.csrfToken };
  let res = await app.json('/api/v1/me/security', { headers: { cookie: after } });
  t.equal(res.status, 200, 'GET needs no CSRF token');

  res = await app.json('/api/v1/me/preferences', { method: 'PATCH', json: { theme: 'dark' }, headers: { cookie: after } });
  t.equal(res.status, 403);
  t.equal(res.body.error.code, 'csrf_failed', 'unsafe without the token');
  res = await app.json('/api/v1/me/preferences', { method: 'PATCH', json: { theme: 'dark' }, headers: { cookie: after, 'x-csrf-token': 'x'.repeat(43) } });
  t.equal(res.body.error.code, 'csrf_failed', 'unsafe with a wrong token');
  res = await app.json('/api/v1/me/preferences', { method: 'PATCH', json: { theme: 'dark' }, headers });
  t.equal(res.status, 200);

  const copied = { ...headers };
  res = await app.fetch('/api/v1/auth/logout', { method: 'POST', headers });
  t.equal(res.status, 204);
  res = await app.json('/api/v1/me/security', { headers: copied });
  t.equal(res.status, 401, 'a copy of the cookie stops working after logout');
  t.equal(res.body.error.code, 'unauthenticated');
});

t.test('brute force is throttled per account, with Retry-After, even for the right password', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  let last;
  for (let i = 0; i < 5; i++) last = await app.json('/api/v1/auth/login', json({ email: owner.user.email, password: `wrong password ${i}!` }));
  t.equal(last!.status, 401);
  const locked = await app.json('/api/v1/auth/login', json({ email: owner.user.email, password: TEST_PASSWORD }));
  t.equal(locked.status, 429);
  t.equal(locked.body.error.code, 'rate_limited');
  t.ok(Number(locked.headers.get('retry-after')) > 0, 'Retry-After');
  const other = await signIn(app, { role: 'viewer' });
  t.equal(other.user.role, 'viewer', 'another account from the same address still signs in');
});

t.test('per-address throttling stops spraying many accounts', async (t) => {
  const app = await startApp(t);
  await signIn(app);
  let res;
  for (let i = 0; i < 21; i++) res = await app.json('/api/v1/auth/login', json({ email: `spray${i}@example.test`, password: 'spray password!' }));
  t.equal(res!.status, 429);
});

t.test('disabled users cannot sign in and their sessions end', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const viewer = await signIn(app, { role: 'viewer' });
  let res = await app.json(`/api/v1/users/${viewer.user.id}`, { method: 'PATCH', json: { disabled: true }, headers: owner.headers });
  t.equal(res.status, 200);
  t.equal(res.body.data.disabled, true);
  res = await app.json('/api/v1/me/security', { headers: viewer.headers });
  t.equal(res.status, 401, 'the disabled user’s session ended');
  res = await app.json('/api/v1/auth/login', json({ email: viewer.user.email, password: TEST_PASSWORD }));
  t.equal(res.status, 401);
});

t.test('idle sessions expire', async (t) => {
  const app = await startApp(t, { config: { sessionIdleMs: 60_000 } });
  const owner = await signIn(app);
  await app.deps.db
    .updateTable('sessions')
    .set({ last_seen_at: new Date(Date.now() - 120_000).toISOString() })
    .execute();
  const res = await app.json('/api/v1/me/security', { headers: owner.headers });
  t.equal(res.status, 401);
  t.equal((await app.deps.db.selectFrom('sessions').selectAll().execute()).length, 0, 'the expired row is gone');
});

t.test('absolute session lifetime', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  await app.deps.db
    .updateTable('sessions')
    .set({ expires_at: new Date(Date.now() - 1).toISOString() })
    .execute();
  t.equal((await app.json('/api/v1/me/security', { headers: owner.headers })).status, 401);
});

t.test('Secure cookie: an https public URL over the plain HTTP behind the proxy signs in with Secure', async (t) => {
  const app = await startApp(t, { config: { publicUrl: 'https://signage.example.test' } });
  const setup = await app.json('/api/v1/auth/setup', json({ email: 'o@example.test', password: TEST_PASSWORD, displayName: 'O' }));
  t.equal(setup.status, 201, `setup works over plain HTTP: ${JSON.stringify(setup.body)}`);
  t.match(setup.headers.getSetCookie().join('\n'), /placard\.sid=[^\n]*;\s*secure/i, 'the session cookie is Secure');
  const login = await app.json('/api/v1/auth/login', json({ email: 'o@example.test', password: TEST_PASSWORD }));
  t.equal(login.status, 200, 'login works too');
  const cookies = login.headers.getSetCookie();
  t.ok(cookies.length >= 2 && cookies.every((c) => /;\s*secure/i.test(c)), 'the cookie and its signature are Secure');
  const cookie = cookieHeader(login);
  const status = await app.json('/api/v1/auth/status', { headers: { cookie } });
  t.equal(status.body.data.authenticated, true, 'the cookie works');
  const out = await app.fetch('/api/v1/auth/logout', { method: 'POST', headers: { cookie, 'x-csrf-token': login.body.data.csrfToken } });
  t.equal(out.status, 204, 'logout (clearing the Secure cookie) works too');
});

t.test('Secure cookie follows the request behind a trusted proxy, and only a trusted one', async (t) => {
  const trusted = await startApp(t, { config: { trustProxy: true } });
  await signIn(trusted);
  const body = (email: string) => json({ email, password: TEST_PASSWORD });
  const owner = (await trusted.deps.db.selectFrom('users').select('email').executeTakeFirstOrThrow()).email;
  let res = await trusted.json('/api/v1/auth/login', { ...body(owner), headers: { 'x-forwarded-proto': 'https' } });
  t.equal(res.status, 200);
  t.match(res.headers.getSetCookie().join('\n'), /placard\.sid=[^\n]*;\s*secure/i, 'HTTPS at the proxy: Secure');
  res = await trusted.json('/api/v1/auth/login', body(owner));
  t.equal(res.status, 200);
  t.notMatch(res.headers.getSetCookie().join('\n'), /secure/i, 'plain HTTP: no Secure');

  const untrusted = await startApp(t);
  await signIn(untrusted);
  const owner2 = (await untrusted.deps.db.selectFrom('users').select('email').executeTakeFirstOrThrow()).email;
  res = await untrusted.json('/api/v1/auth/login', { ...body(owner2), headers: { 'x-forwarded-proto': 'https' } });
  t.equal(res.status, 200);
  t.notMatch(res.headers.getSetCookie().join('\n'), /secure/i, 'X-Forwarded-Proto is ignored without PLACARD_TRUST_PROXY');
});

t.test('passwords: 256 characters are fine, 257 are refused (setup, new users, login)', async (t) => {
  const app = await startApp(t);
  const long = `${'p'.repeat(255)}é`;
  t.equal(long.length, 256);
  let res = await app.json('/api/v1/auth/setup', json({ email: 'o@example.test', password: `${long}x`, displayName: 'O' }));
  t.equal(res.status, 400, '257 refused at setup');
  t.same(
    res.body.error.details.issues.map((i: { path: string[] }) => i.path[0]),
    ['password'],
  );
  res = await app.json('/api/v1/auth/setup', json({ email: 'o@example.test', password: long, displayName: 'O' }));
  t.equal(res.status, 201, '256 accepted');
  res = await app.json('/api/v1/auth/login', json({ email: 'o@example.test', password: long }));
  t.equal(res.status, 200, 'and signs in');
  const headers = { cookie: cookieHeader(res), 'x-csrf-token': res.body.data.csrfToken };
  res = await app.json('/api/v1/auth/login', json({ email: 'o@example.test', password: `${long}x` }));
  t.equal(res.status, 400, 'a 257-character password is not even tried at login');
  t.equal(res.body.error.code, 'validation_failed');
  res = await app.json('/api/v1/users', { method: 'POST', json: { email: 'v@example.test', displayName: 'V', role: 'viewer', password: `${long}x` }, headers });
  t.equal(res.status, 400, '257 refused for a new user');
  res = await app.json('/api/v1/users', { method: 'POST', json: { email: 'v@example.test', displayName: 'V', role: 'viewer', password: long }, headers });
  t.equal(res.status, 201, '256 accepted for a new user');
});

t.test('a short idle timeout: activity is recorded often enough to keep an active session alive', async (t) => {
  // PLACARD_SESSION_IDLE_MINUTES=1: last_seen_at must be refreshed well within the minute.
  const app = await startApp(t, { config: { sessionIdleMs: 60_000 } });
  const owner = await signIn(app);
  const seen = async () => Date.parse((await app.deps.db.selectFrom('sessions').select('last_seen_at').executeTakeFirstOrThrow()).last_seen_at);
  await app.deps.db
    .updateTable('sessions')
    .set({ last_seen_at: new Date(Date.now() - 20_000).toISOString() })
    .execute();
  const before = Date.now();
  t.equal((await app.json('/api/v1/me/security', { headers: owner.headers })).status, 200);
  t.ok((await seen()) >= before - 1_000, 'a request 20 s after the last one (a third of the idle time) refreshes last_seen_at');
  await app.deps.db
    .updateTable('sessions')
    .set({ last_seen_at: new Date(Date.now() - 5_000).toISOString() })
    .execute();
  const stamp = await seen();
  await app.json('/api/v1/me/security', { headers: owner.headers });
  t.equal(await seen(), stamp, 'but not on every request');
});

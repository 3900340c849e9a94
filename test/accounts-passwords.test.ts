import t from 'tap';
import { sha256Hex } from '../server/src/platform/security/secrets.js';
import { findUserById } from '../server/src/modules/accounts/users.repo.js';
import { cookieHeader, signIn, TEST_PASSWORD } from './helpers/auth.js';
import { startApp, type TestApp } from './helpers/harness.js';

const NEW_PASSWORD = 'a brand new passphrase';

async function login(app: TestApp, email: string, password: string) {
  return app.json('/api/v1/auth/login', { method: 'POST', json: { email, password } });
}

/** The token of a link's URL (it rides in the fragment). */
const tokenOf = (url: string) => new URL(url).hash.replace(/^#token=/, '');

t.test('change my password: current one needed, other sessions end, this one goes on under a new key, throttled', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const editor = await signIn(app, { role: 'editor' });
  const otherDevice = await login(app, editor.user.email, TEST_PASSWORD);
  const otherHeaders = { cookie: cookieHeader(otherDevice), 'x-csrf-token': otherDevice.body.data.csrfToken };
  t.equal((await app.json('/api/v1/me/security', { headers: otherHeaders })).status, 200, 'the second session works before');

  let res = await app.json('/api/v1/me/password', {
    method: 'POST',
    headers: editor.headers,
    json: { currentPassword: 'not it at all', newPassword: NEW_PASSWORD },
  });
  t.equal(res.status, 401, 'a wrong current password is refused');
  t.equal(res.body.error.code, 'invalid_credential');
  t.same(
    res.body.error.details.issues.map((i: { path: string[] }) => i.path[0]),
    ['currentPassword'],
    'the field is named',
  );
  t.equal((await app.json('/api/v1/me/security', { headers: editor.headers })).status, 200, 'a refused change keeps the session');

  res = await app.json('/api/v1/me/password', { method: 'POST', headers: editor.headers, json: { currentPassword: TEST_PASSWORD, newPassword: 'short' } });
  t.equal(res.status, 400, 'too short');
  t.equal(res.body.error.code, 'validation_failed');
  t.same(
    res.body.error.details.issues.map((i: { path: string[] }) => i.path[0]),
    ['newPassword'],
  );

  res = await app.json('/api/v1/me/password', {
    method: 'POST',
    headers: editor.headers,
    json: { currentPassword: TEST_PASSWORD, newPassword: TEST_PASSWORD },
  });
  t.equal(res.status, 400, 'the same password again is refused');
  t.match(res.body.error.message, /differs/);

  res = await app.json('/api/v1/me/password', { method: 'POST', headers: editor.headers, json: { newPassword: NEW_PASSWORD } });
  t.equal(res.status, 400, 'the current password is required');

  res = await app.json('/api/v1/me/password', {
    method: 'POST',
    headers: { cookie: editor.headers.cookie },
    json: { currentPassword: TEST_PASSWORD, newPassword: NEW_PASSWORD },
  });
  t.equal(res.status, 403, 'CSRF token required');

  res = await app.json('/api/v1/me/password', { method: 'POST', headers: editor.headers, json: { currentPassword: TEST_PASSWORD, newPassword: NEW_PASSWORD } });
  t.equal(res.status, 200, JSON.stringify(res.body));
  t.equal(res.body.data.otherSessionsEnded, 1, 'one other session ended');
  const rotated = { cookie: cookieHeader(res, editor.headers.cookie), 'x-csrf-token': res.body.data.csrfToken as string };
  t.not(rotated.cookie, editor.headers.cookie, 'this session has a new key');
  t.equal((await app.json('/api/v1/me/security', { headers: otherHeaders })).status, 401, 'the other session is gone');
  t.equal((await app.json('/api/v1/me/security', { headers: { cookie: editor.headers.cookie } })).status, 401, 'the old key of this session is gone too');
  t.equal((await app.json('/api/v1/me/security', { headers: rotated })).status, 200, 'this session goes on under the new key');
  t.equal((await app.json('/api/v1/me/preferences', { method: 'PATCH', headers: rotated, json: { theme: 'dark' } })).status, 200, 'with the new CSRF token');
  t.equal((await login(app, editor.user.email, TEST_PASSWORD)).status, 401, 'the old password no longer works');
  t.equal((await login(app, editor.user.email, NEW_PASSWORD)).status, 200, 'the new one does');
  const row = await findUserById(app.deps.db, editor.user.id);
  t.match(row!.password_hash, /^\$argon2id\$/, 'stored as argon2id');

  // Throttled per account: five wrong current passwords lock it, even for the right one.
  for (let i = 0; i < 5; i++) {
    res = await app.json('/api/v1/me/password', { method: 'POST', headers: owner.headers, json: { currentPassword: `wrong ${i}`, newPassword: NEW_PASSWORD } });
    t.equal(res.status, 401);
  }
  res = await app.json('/api/v1/me/password', { method: 'POST', headers: owner.headers, json: { currentPassword: TEST_PASSWORD, newPassword: NEW_PASSWORD } });
  t.equal(res.status, 429, 'locked after five misses');
  t.equal(res.body.error.code, 'rate_limited');
  t.ok(Number(res.headers.get('retry-after')) > 0, 'Retry-After says when');
  t.equal((await login(app, owner.user.email, TEST_PASSWORD)).status, 200, 'the password did not change');
});

t.test('an admin sets a user’s password: sessions end; never an owner’s, never their own this way', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const admin = await signIn(app, { role: 'admin' });
  const otherAdmin = await signIn(app, { role: 'admin' });
  const editor = await signIn(app, { role: 'editor' });
  const viewer = await signIn(app, { role: 'viewer' });

  let res = await app.json(`/api/v1/users/${owner.user.id}/password`, { method: 'POST', headers: admin.headers, json: { password: NEW_PASSWORD } });
  t.equal(res.status, 403, 'an admin cannot set an owner’s password');
  t.equal(res.body.error.code, 'forbidden');
  t.equal((await login(app, owner.user.email, TEST_PASSWORD)).status, 200, 'the owner’s password is unchanged');

  res = await app.json(`/api/v1/users/${admin.user.id}/password`, { method: 'POST', headers: admin.headers, json: { password: NEW_PASSWORD } });
  t.equal(res.status, 409, 'not your own: that needs the current password');

  res = await app.json(`/api/v1/users/${editor.user.id}/password`, { method: 'POST', headers: viewer.headers, json: { password: NEW_PASSWORD } });
  t.equal(res.status, 403, 'a viewer cannot');
  res = await app.json(`/api/v1/users/${editor.user.id}/password`, { method: 'POST', headers: editor.headers, json: { password: NEW_PASSWORD } });
  t.equal(res.status, 403, 'an editor cannot (not even for others of the same role)');

  res = await app.json(`/api/v1/users/${editor.user.id}/password`, { method: 'POST', headers: admin.headers, json: { password: 'too short' } });
  t.equal(res.status, 400);
  t.equal(res.body.error.details.issues[0].path[0], 'password');

  res = await app.json(`/api/v1/users/0190f5a2-7b3c-7def-8abc-0123456789ab/password`, {
    method: 'POST',
    headers: admin.headers,
    json: { password: NEW_PASSWORD },
  });
  t.equal(res.status, 404);

  res = await app.json(`/api/v1/users/${editor.user.id}/password`, { method: 'POST', headers: admin.headers, json: { password: NEW_PASSWORD } });
  t.equal(res.status, 200);
  t.equal(res.body.data.passwordSet, true);
  t.equal((await app.json('/api/v1/me/security', { headers: editor.headers })).status, 401, 'the user’s sessions ended');
  t.equal((await login(app, editor.user.email, NEW_PASSWORD)).status, 200, 'the new password works');

  res = await app.json(`/api/v1/users/${otherAdmin.user.id}/password`, { method: 'POST', headers: admin.headers, json: { password: NEW_PASSWORD } });
  t.equal(res.status, 200, 'an admin may set another admin’s');
  res = await app.json(`/api/v1/users/${admin.user.id}/password`, { method: 'POST', headers: owner.headers, json: { password: NEW_PASSWORD } });
  t.equal(res.status, 200, 'an owner may set an admin’s');
});

t.test('set-password links: hashed at rest, single use, expiring, superseded, throttled', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const admin = await signIn(app, { role: 'admin' });
  const editor = await signIn(app, { role: 'editor' });

  // A new user made without a password cannot sign in until they use a link.
  let res = await app.json('/api/v1/users', {
    method: 'POST',
    headers: admin.headers,
    json: { email: 'newbie@example.test', displayName: 'Newbie', role: 'editor' },
  });
  t.equal(res.status, 201, JSON.stringify(res.body));
  t.equal(res.body.data.passwordSet, false, 'no password yet');
  const newbie = res.body.data;
  t.equal((await login(app, 'newbie@example.test', '')).status, 401, 'cannot sign in with an empty password');

  res = await app.json(`/api/v1/users/${owner.user.id}/password-link`, { method: 'POST', headers: admin.headers });
  t.equal(res.status, 403, 'an admin cannot make a link for an owner');
  res = await app.json(`/api/v1/users/${admin.user.id}/password-link`, { method: 'POST', headers: admin.headers });
  t.equal(res.status, 409, 'nor for themselves');
  res = await app.json(`/api/v1/users/${newbie.id}/password-link`, { method: 'POST', headers: editor.headers });
  t.equal(res.status, 403, 'an editor cannot make links');

  res = await app.json(`/api/v1/users/${newbie.id}/password-link`, { method: 'POST', headers: admin.headers });
  t.equal(res.status, 201);
  const first = res.body.data;
  t.match(first.url, new RegExp(`^${app.url.replace(/[.]/g, '\\.')}/set-password#token=`), 'a console URL with the token in the fragment');
  t.equal(tokenOf(first.url), first.token);
  t.ok(first.token.length >= 43, '256 bits');
  const ttl = Date.parse(first.expiresAt) - Date.now();
  t.ok(ttl > 23.9 * 3600_000 && ttl <= 24 * 3600_000, 'expires in 24 hours');
  const rows = await app.deps.db.selectFrom('password_links').selectAll().execute();
  t.equal(rows.length, 1);
  t.equal(rows[0]!.token_hash, sha256Hex(first.token), 'only the SHA-256 is stored');
  t.notOk(JSON.stringify(rows).includes(first.token), 'the token itself is nowhere in the table');

  // A second link ends the first.
  res = await app.json(`/api/v1/users/${newbie.id}/password-link`, { method: 'POST', headers: owner.headers });
  const second = res.body.data;
  res = await app.json('/api/v1/auth/password-link/check', { method: 'POST', json: { token: first.token } });
  t.equal(res.status, 401, 'the first link no longer works');
  t.equal(res.body.error.details.reason, 'used');

  res = await app.json('/api/v1/auth/password-link/check', { method: 'POST', json: { token: second.token } });
  t.equal(res.status, 200);
  t.same(res.body.data, { email: 'newbie@example.test', displayName: 'Newbie', expiresAt: second.expiresAt }, 'the page learns whose it is');

  res = await app.json('/api/v1/auth/password-link/use', { method: 'POST', json: { token: second.token, password: 'short' } });
  t.equal(res.status, 400, 'too short');
  t.equal(res.body.error.details.issues[0].path[0], 'password');
  res = await app.json('/api/v1/auth/password-link/use', { method: 'POST', json: { token: second.token, password: NEW_PASSWORD } });
  t.equal(res.status, 200, 'a refused password did not spend the link');
  t.same(res.body.data, { email: 'newbie@example.test' });
  t.same(res.headers.getSetCookie(), [], 'using a link does not sign in');
  t.equal((await login(app, 'newbie@example.test', NEW_PASSWORD)).status, 200, 'the password works');

  res = await app.json('/api/v1/auth/password-link/use', { method: 'POST', json: { token: second.token, password: 'another long passphrase' } });
  t.equal(res.status, 401, 'a used link is refused');
  t.equal(res.body.error.code, 'invalid_credential');
  t.equal(res.body.error.details.reason, 'used');
  t.equal((await login(app, 'newbie@example.test', NEW_PASSWORD)).status, 200, 'and changed nothing');

  // Expired.
  res = await app.json(`/api/v1/users/${editor.user.id}/password-link`, { method: 'POST', headers: admin.headers });
  const third = res.body.data;
  await app.deps.db
    .updateTable('password_links')
    .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
    .where('token_hash', '=', sha256Hex(third.token))
    .execute();
  res = await app.json('/api/v1/auth/password-link/use', { method: 'POST', json: { token: third.token, password: NEW_PASSWORD } });
  t.equal(res.status, 401, 'an expired link is refused');
  t.equal(res.body.error.details.reason, 'expired');
  t.match(res.body.error.message, /expired/);
  t.equal((await login(app, editor.user.email, TEST_PASSWORD)).status, 200, 'the password did not change');

  // Using a link ends the user's sessions; a direct reset ends their unused links.
  res = await app.json(`/api/v1/users/${editor.user.id}/password-link`, { method: 'POST', headers: admin.headers });
  const fourth = res.body.data;
  const editorSession = await login(app, editor.user.email, TEST_PASSWORD);
  res = await app.json('/api/v1/auth/password-link/use', { method: 'POST', json: { token: fourth.token, password: NEW_PASSWORD } });
  t.equal(res.status, 200);
  t.equal((await app.json('/api/v1/me/security', { headers: { cookie: cookieHeader(editorSession) } })).status, 401, 'their sessions ended');
  res = await app.json(`/api/v1/users/${editor.user.id}/password-link`, { method: 'POST', headers: admin.headers });
  const fifth = res.body.data;
  res = await app.json(`/api/v1/users/${editor.user.id}/password`, { method: 'POST', headers: admin.headers, json: { password: 'set by the admin directly' } });
  t.equal(res.status, 200);
  res = await app.json('/api/v1/auth/password-link/check', { method: 'POST', json: { token: fifth.token } });
  t.equal(res.body.error.details.reason, 'used', 'a direct reset ends the unused link');

  // A disabled user: no new link, and an outstanding one does not work.
  res = await app.json(`/api/v1/users/${editor.user.id}/password-link`, { method: 'POST', headers: admin.headers });
  const sixth = res.body.data;
  await app.json(`/api/v1/users/${editor.user.id}`, { method: 'PATCH', headers: admin.headers, json: { disabled: true } });
  res = await app.json('/api/v1/auth/password-link/use', { method: 'POST', json: { token: sixth.token, password: NEW_PASSWORD } });
  t.equal(res.status, 409, 'a disabled account cannot set a password');
  res = await app.json(`/api/v1/users/${editor.user.id}/password-link`, { method: 'POST', headers: admin.headers });
  t.equal(res.status, 409, 'no link for a disabled user');

  // Bad input and guessing.
  res = await app.json('/api/v1/auth/password-link/check', { method: 'POST', json: {} });
  t.equal(res.status, 400);
  res = await app.json('/api/v1/auth/password-link/check', { method: 'POST', json: { token: 'x'.repeat(500) } });
  t.equal(res.status, 400, 'an absurd token is a validation error');
  // Every refused link above counted against this address too: at most twenty misses in all.
  let misses = 0;
  for (;;) {
    res = await app.json('/api/v1/auth/password-link/check', { method: 'POST', json: { token: `guess-${misses}` } });
    if (res.status !== 401 || misses > 20) break;
    t.equal(res.body.error.details.reason, 'unknown');
    misses++;
  }
  t.equal(res.status, 429, `locked after ${misses} guesses (and the refusals before)`);
  t.ok(misses > 0 && misses < 20, 'the earlier refusals counted');
  res = await app.json('/api/v1/auth/password-link/use', { method: 'POST', json: { token: 'guess-again', password: NEW_PASSWORD } });
  t.equal(res.status, 429, 'then the address is locked out of using links too');
  t.ok(Number(res.headers.get('retry-after')) > 0);
});

t.test('password routes are extensions in the OpenAPI document, with their statuses', async (t) => {
  const app = await startApp(t);
  const doc = (await (await app.fetch('/api/v1/openapi.json')).json()) as any;
  const expect: [string, string[]][] = [
    ['/api/v1/me/password', ['200', '400', '401', '403', '429']],
    ['/api/v1/users/{id}/password', ['200', '400', '401', '403', '404', '409']],
    ['/api/v1/users/{id}/password-link', ['201', '401', '403', '404', '409']],
    ['/api/v1/auth/password-link/check', ['200', '400', '401', '409', '429']],
    ['/api/v1/auth/password-link/use', ['200', '400', '401', '409', '429']],
  ];
  for (const [path, statuses] of expect) {
    const op = doc.paths[path]?.post;
    t.ok(op, `${path} is documented`);
    t.equal(op?.['x-placard-extension'], true, `${path} is marked as an extension`);
    for (const s of statuses) t.ok(op?.responses?.[s], `${path} declares ${s}`);
  }
  t.same(doc.paths['/api/v1/auth/password-link/use'].post['x-placard-auth'], ['public']);
  t.equal(doc.paths['/api/v1/users/{id}/password'].post['x-placard-min-role'], 'admin');
});

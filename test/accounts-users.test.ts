import t from 'tap';
import { z } from 'zod';
import { defineRoute, ok } from '../server/src/platform/http/route.js';
import { AuthenticatorEmulator, PasskeysCredentialsMemoryRepository, WebAuthnEmulator } from 'nid-webauthn-emulator';

/** A software authenticator with its own credential store (the library's default store is shared by every instance). */
const softwareAuthenticator = () => new WebAuthnEmulator(new AuthenticatorEmulator({ credentialsRepository: new PasskeysCredentialsMemoryRepository() }));
import { deleteDisabledUser, findUserById } from '../server/src/modules/accounts/users.repo.js';
import { cookieHeader, signIn, TEST_PASSWORD } from './helpers/auth.js';
import { contended, startApp, type TestApp } from './helpers/harness.js';

async function reSignIn(app: TestApp, email: string) {
  const res = await app.json('/api/v1/auth/login', { method: 'POST', json: { email, password: TEST_PASSWORD } });
  if (res.status !== 200) throw new Error(`sign-in failed: ${JSON.stringify(res.body)}`);
  return { headers: { cookie: cookieHeader(res), 'x-csrf-token': res.body.data.csrfToken as string } };
}

t.test('users: admins manage non-owners, roles apply at once, the last owner stays', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const admin = await signIn(app, { role: 'admin' });
  const editor = await signIn(app, { role: 'editor' });

  let res = await app.json('/api/v1/users', { headers: editor.headers });
  t.equal(res.status, 403, 'an editor cannot list users');
  t.equal(res.body.error.code, 'forbidden');

  res = await app.json('/api/v1/users', {
    method: 'POST',
    json: { email: 'new@example.test', displayName: 'New', role: 'publisher', password: TEST_PASSWORD },
    headers: admin.headers,
  });
  t.equal(res.status, 201);
  const newId = res.body.data.id;
  res = await app.json('/api/v1/users', {
    method: 'POST',
    json: { email: 'NEW@example.test', displayName: 'Dup', role: 'viewer', password: TEST_PASSWORD },
    headers: admin.headers,
  });
  t.equal(res.status, 409, 'emails are unique, case-insensitively');
  res = await app.json('/api/v1/users', {
    method: 'POST',
    json: { email: 'o2@example.test', displayName: 'O2', role: 'owner', password: TEST_PASSWORD },
    headers: admin.headers,
  });
  t.equal(res.status, 403, 'an admin cannot make an owner');
  res = await app.json('/api/v1/users', {
    method: 'POST',
    json: { email: 'not-an-email', displayName: '', role: 'boss', password: 'x' },
    headers: admin.headers,
  });
  t.equal(res.status, 400);
  t.same(res.body.error.details.issues.map((i: { path: string[] }) => i.path[0]).sort(), ['displayName', 'email', 'password', 'role']);

  res = await app.json('/api/v1/users?limit=2', { headers: admin.headers });
  t.equal(res.body.data.items.length, 2);
  t.ok(res.body.data.nextCursor);
  const second = await app.json(`/api/v1/users?limit=10&cursor=${res.body.data.nextCursor}`, { headers: admin.headers });
  t.equal(res.body.data.items.length + second.body.data.items.length, 4, 'four users across the pages');
  res = await app.json('/api/v1/users?q=NEW%40', { headers: admin.headers });
  t.same(
    res.body.data.items.map((u: { email: string }) => u.email),
    ['new@example.test'],
    'search is case-insensitive',
  );
  res = await app.json('/api/v1/users?q=%25', { headers: admin.headers });
  t.same(res.body.data.items, [], 'a % in the search is literal');
  res = await app.json('/api/v1/users?role=editor', { headers: admin.headers });
  t.same(
    res.body.data.items.map((u: { id: string }) => u.id),
    [editor.user.id],
  );

  res = await app.json(`/api/v1/users/${owner.user.id}`, { method: 'PATCH', json: { displayName: 'Hijack' }, headers: admin.headers });
  t.equal(res.status, 403, 'an admin cannot touch an owner');

  res = await app.json(`/api/v1/users/${editor.user.id}`, { method: 'PATCH', json: { role: 'viewer' }, headers: admin.headers });
  t.equal(res.body.data.role, 'viewer');
  res = await app.json('/api/v1/me/security', { headers: editor.headers });
  t.equal(res.status, 401, 'a role change ends the user’s sessions');

  res = await app.json(`/api/v1/users/${owner.user.id}`, { method: 'PATCH', json: { role: 'admin' }, headers: owner.headers });
  t.equal(res.status, 409, 'the last owner cannot be demoted');
  res = await app.json(`/api/v1/users/${owner.user.id}`, { method: 'PATCH', json: { disabled: true }, headers: owner.headers });
  t.equal(res.status, 409, 'the last owner cannot be disabled');

  res = await app.fetch(`/api/v1/users/${newId}/permanent`, { method: 'DELETE', headers: admin.headers });
  t.equal(res.status, 409, 'only a disabled user can be deleted');
  await app.json(`/api/v1/users/${newId}`, { method: 'PATCH', json: { disabled: true }, headers: admin.headers });
  res = await app.fetch(`/api/v1/users/${newId}/permanent`, { method: 'DELETE', headers: admin.headers });
  t.equal(res.status, 204);
  res = await app.json(`/api/v1/users/${newId}`, { headers: admin.headers });
  t.equal(res.status, 404);
  res = await app.json('/api/v1/users/not-a-uuid', { headers: admin.headers });
  t.equal(res.status, 404);
});

t.test('security reset clears another user’s MFA and sessions', async (t) => {
  const app = await startApp(t);
  await signIn(app);
  const admin = await signIn(app, { role: 'admin' });
  const viewer = await signIn(app, { role: 'viewer' });
  await app.json('/api/v1/me/security/totp', { method: 'POST', headers: viewer.headers });
  await app.deps.db.updateTable('users').set({ totp_enabled: 1, totp_secret_sealed: 'v1.x.y.z' }).where('id', '=', viewer.user.id).execute();
  let res = await app.json(`/api/v1/users/${viewer.user.id}/security/reset`, { method: 'POST', headers: viewer.headers });
  t.equal(res.status, 403, 'a viewer cannot reset anyone');
  res = await app.json(`/api/v1/users/${viewer.user.id}/security/reset`, { method: 'POST', headers: admin.headers });
  t.equal(res.status, 200);
  t.equal(res.body.data.totpEnabled, false);
  t.equal((await app.json('/api/v1/me/security', { headers: viewer.headers })).status, 401, 'their sessions ended');
  res = await app.json('/api/v1/auth/login', { method: 'POST', json: { email: viewer.user.email, password: TEST_PASSWORD } });
  t.ok(res.body.data.csrfToken, 'they sign in with the password alone again');
});

t.test('integration tokens: owner only, shown once, hashed, capability-bound, revocable', async (t) => {
  const probe = defineRoute({
    method: 'GET',
    path: '/api/v1/test-fleet',
    auth: ['session', 'integration:fleet_health:read'],
    tags: ['Test'],
    summary: 'fleet probe',
    responses: { 200: { description: 'who', data: z.object({ kind: z.string() }) } },
    handler: (_ctx, { auth }) => ok({ kind: auth.kind }),
  });
  const app = await startApp(t, { extraRoutes: [probe] });
  const owner = await signIn(app);
  const admin = await signIn(app, { role: 'admin' });

  let res = await app.json('/api/v1/integration-tokens', {
    method: 'POST',
    json: { name: 'Wall', capabilities: ['fleet_health:read'] },
    headers: admin.headers,
  });
  t.equal(res.status, 403, 'admins cannot make tokens');
  res = await app.json('/api/v1/integration-tokens', { method: 'POST', json: { name: 'Wall', capabilities: ['everything'] }, headers: owner.headers });
  t.equal(res.status, 400, 'unknown capability');
  res = await app.json('/api/v1/integration-tokens', { method: 'POST', json: { name: 'Wall', capabilities: ['fleet_health:read'] }, headers: owner.headers });
  t.equal(res.status, 201);
  const token: string = res.body.data.token;
  t.match(token, /^svci_[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{40,}$/);
  const rows = await app.deps.db.selectFrom('integration_tokens').select('secret_hash').execute();
  t.notOk(
    rows.some((r) => token.includes(r.secret_hash)),
    'only a hash is stored',
  );

  res = await app.json('/api/v1/integration-tokens', { headers: owner.headers });
  t.notOk(JSON.stringify(res.body).includes(token.split('.')[1]!), 'the list never shows the secret');

  res = await app.json('/api/v1/test-fleet', { headers: { authorization: `Bearer ${token}` } });
  t.same(res.body, { data: { kind: 'integration' } });
  t.equal((await app.json('/api/v1/users', { headers: { authorization: `Bearer ${token}` } })).status, 401, 'no console access');
  res = await app.json('/api/v1/test-fleet', { headers: { authorization: `Bearer ${token.slice(0, -2)}xx` } });
  t.equal(res.body.error.code, 'invalid_credential', 'a wrong secret');

  const rowsToken = await app.json('/api/v1/integration-tokens', {
    method: 'POST',
    json: { name: 'Rows', capabilities: ['manual_table_rows:write'] },
    headers: owner.headers,
  });
  res = await app.json('/api/v1/test-fleet', { headers: { authorization: `Bearer ${rowsToken.body.data.token}` } });
  t.equal(res.status, 403, 'a token without the capability');

  const id = (await app.json('/api/v1/integration-tokens', { headers: owner.headers })).body.data.items.find((i: { name: string }) => i.name === 'Wall').id;
  res = await app.json(`/api/v1/integration-tokens/${id}/revoke`, { method: 'POST', headers: owner.headers });
  t.ok(res.body.data.revokedAt);
  res = await app.json('/api/v1/test-fleet', { headers: { authorization: `Bearer ${token}` } });
  t.equal(res.status, 401);
  t.equal(res.body.error.code, 'credential_revoked');
});

t.test('system identity and preferences', async (t) => {
  const app = await startApp(t);
  let res = await app.json('/api/v1/system/identity');
  t.equal(res.status, 200);
  t.equal(res.body.data.product, 'placard');
  t.equal(res.body.data.apiVersion, '0.10.0');
  t.match(res.body.data.instanceId, /^[0-9a-f-]{36}$/);
  t.equal((await app.json('/api/v1/system/identity')).body.data.instanceId, res.body.data.instanceId, 'stable');
  t.equal(res.body.data.publicUrl, app.url);

  const owner = await signIn(app);
  res = await app.json('/api/v1/me/preferences', { headers: owner.headers });
  t.same(res.body.data, { theme: 'system', locale: null, timeZone: null, weekStartsOn: 'monday', defaultViews: {} });
  res = await app.json('/api/v1/me/preferences', { method: 'PATCH', json: { timeZone: 'Europe/Nowhere', theme: 'neon', colour: 'x' }, headers: owner.headers });
  t.equal(res.status, 400);
  t.same(
    res.body.error.details.issues.map((i: { path: string[]; code: string }) => i.path[0] ?? i.code).sort(),
    ['theme', 'timeZone', 'unrecognized_keys'].sort(),
  );
  res = await app.json('/api/v1/me/preferences', {
    method: 'PATCH',
    json: { timeZone: 'Europe/Paris', locale: 'fr-FR', defaultViews: { screens: 'list' } },
    headers: owner.headers,
  });
  t.equal(res.body.data.timeZone, 'Europe/Paris');
  res = await app.json('/api/v1/me/preferences', { method: 'PATCH', json: { defaultViews: { library: 'grid' } }, headers: owner.headers });
  t.same(res.body.data.defaultViews, { screens: 'list', library: 'grid' }, 'merged');
  t.equal(res.body.data.locale, 'fr-FR');
});

t.test('security reset: passkeys and recovery codes go too; owners only by owners; not yourself', async (t) => {
  const origin = 'http://localhost';
  const app = await startApp(t, { config: { publicUrl: origin } });
  const owner = await signIn(app);
  const otherOwner = await signIn(app, { role: 'owner' });
  const admin = await signIn(app, { role: 'admin' });
  const editor = await signIn(app, { role: 'editor' });

  // The editor registers a real passkey (software authenticator) and gets recovery codes.
  const authenticator = softwareAuthenticator();
  const options = await app.json('/api/v1/me/security/passkeys/options', { method: 'POST', headers: editor.headers });
  const credential = authenticator.createJSON(origin, options.body.data);
  let res = await app.json('/api/v1/me/security/passkeys', { method: 'POST', json: { response: credential }, headers: editor.headers });
  t.equal(res.status, 201);
  res = await app.json('/api/v1/me/security/recovery-codes', { method: 'POST', headers: editor.headers });
  t.equal(res.body.data.codes.length, 10);
  const count = async (table: 'passkeys' | 'recovery_codes') =>
    (await app.deps.db.selectFrom(table).select('id').where('user_id', '=', editor.user.id).execute()).length;
  t.equal(await count('passkeys'), 1);
  t.equal(await count('recovery_codes'), 10);

  res = await app.json(`/api/v1/users/${editor.user.id}/security/reset`, { method: 'POST', headers: admin.headers });
  t.equal(res.status, 200);
  t.equal(await count('passkeys'), 0, 'passkeys are gone');
  t.equal(await count('recovery_codes'), 0, 'recovery codes are gone');
  t.equal((await app.json('/api/v1/me/security', { headers: editor.headers })).status, 401, 'sessions ended');
  const again = await app.fetch('/api/v1/auth/passkey/login/options', { method: 'POST' });
  res = await app.json('/api/v1/auth/passkey/login', {
    method: 'POST',
    json: { response: authenticator.getJSON(origin, ((await again.json()) as any).data) },
    headers: { cookie: cookieHeader(again) },
  });
  t.equal(res.status, 401, 'the removed passkey no longer signs in');
  const login = await app.json('/api/v1/auth/login', { method: 'POST', json: { email: editor.user.email, password: TEST_PASSWORD } });
  t.ok(login.body.data.csrfToken, 'the password alone signs in (no second factor left)');

  res = await app.json(`/api/v1/users/${otherOwner.user.id}/security/reset`, { method: 'POST', headers: admin.headers });
  t.equal(res.status, 403, 'an admin cannot reset an owner');
  t.equal(res.body.error.code, 'forbidden');
  t.equal((await app.json('/api/v1/me/security', { headers: otherOwner.headers })).status, 200, 'the owner’s session is untouched');
  res = await app.json(`/api/v1/users/${owner.user.id}/security/reset`, { method: 'POST', headers: owner.headers });
  t.equal(res.status, 409, 'not yourself');
  t.equal(res.body.error.code, 'conflict');
  res = await app.json(`/api/v1/users/${otherOwner.user.id}/security/reset`, { method: 'POST', headers: owner.headers });
  t.equal(res.status, 200, 'an owner resets another owner');
});

t.test('permanent deletion: only disabled users, owners by owners, never the last active owner', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const admin = await signIn(app, { role: 'admin' });
  const second = await signIn(app, { role: 'owner' });
  let res = await app.json(`/api/v1/users/${second.user.id}`, { method: 'PATCH', json: { disabled: true }, headers: owner.headers });
  t.equal(res.status, 200);
  res = await app.json(`/api/v1/users/${second.user.id}/permanent`, { method: 'DELETE', headers: admin.headers });
  t.equal(res.status, 403, 'an admin cannot delete an owner');
  res = await app.fetch(`/api/v1/users/${second.user.id}/permanent`, { method: 'DELETE', headers: owner.headers });
  t.equal(res.status, 204, 'a disabled owner goes while an active owner stays');

  // Through the API the actor is always an active owner besides the target, so the last
  // owner refusal is defence in depth; check it on a database where no other owner is active.
  const third = await signIn(app, { role: 'owner' });
  await app.deps.db.updateTable('users').set({ disabled_at: new Date().toISOString() }).where('role', '=', 'owner').execute();
  const outcome = await deleteDisabledUser(app.deps.db, third.user.id);
  t.equal(outcome, 'last_owner', 'a disabled owner beside only disabled owners is the last owner');
  t.ok(await findUserById(app.deps.db, third.user.id), 'still there');
  await app.deps.db.updateTable('users').set({ disabled_at: null }).where('id', '=', owner.user.id).execute();
  t.equal(await deleteDisabledUser(app.deps.db, third.user.id), 'deleted', 'with an active owner it goes');
  t.equal(await deleteDisabledUser(app.deps.db, owner.user.id), 'not_disabled');
  t.equal(await deleteDisabledUser(app.deps.db, third.user.id), 'not_found');
});

t.test('two owners disabling each other at once leave one active owner', async (t) => {
  const app = await startApp(t);
  const a = await signIn(app);
  let b = await signIn(app, { role: 'owner' });
  for (let round = 0; round < 3; round++) {
    // The requests queue on the held connection and run interleaved: without one
    // transaction around check and write, both checks would see the other owner active.
    const results = await contended(app, () => [
      app.json(`/api/v1/users/${b.user.id}`, { method: 'PATCH', json: { disabled: true }, headers: a.headers }),
      app.json(`/api/v1/users/${a.user.id}`, { method: 'PATCH', json: { disabled: true }, headers: b.headers }),
      app.json(`/api/v1/users/${a.user.id}`, { method: 'PATCH', json: { role: 'admin' }, headers: b.headers }),
    ]);
    const active = await app.deps.db.selectFrom('users').select('id').where('role', '=', 'owner').where('disabled_at', 'is', null).execute();
    t.equal(active.length, 1, `round ${round}: one active owner remains (${results.map((r) => r.status).join(', ')})`);
    t.ok(
      results.every((r) => [200, 401, 409].includes(r.status)),
      'each answer is a success, a conflict or (session ended) 401',
    );
    // Put things back: both active owners, both signed in.
    await app.deps.db.updateTable('users').set({ disabled_at: null, role: 'owner' }).where('id', 'in', [a.user.id, b.user.id]).execute();
    Object.assign(a, await reSignIn(app, a.user.email));
    b = { ...b, ...(await reSignIn(app, b.user.email)) };
  }
});

t.test('an owner changing their own role gets a whole answer and is signed out', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  await signIn(app, { role: 'owner' });
  const res = await app.json(`/api/v1/users/${owner.user.id}`, { method: 'PATCH', json: { role: 'admin' }, headers: owner.headers });
  t.equal(res.status, 200, JSON.stringify(res.body));
  t.equal(res.body.data.role, 'admin');
  t.match(res.headers.getSetCookie().join('\n'), /placard\.sid=;/, 'the cookie is cleared');
  const after = await app.json('/api/v1/me/security', { headers: owner.headers });
  t.equal(after.status, 401, 'the old session no longer works');
  const login = await app.json('/api/v1/auth/login', { method: 'POST', json: { email: owner.user.email, password: TEST_PASSWORD } });
  t.equal(login.body.data.user.role, 'admin', 'signing in again gives the new role');
});

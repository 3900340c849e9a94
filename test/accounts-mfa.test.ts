import t from 'tap';
import { AuthenticatorEmulator, PasskeysCredentialsMemoryRepository, WebAuthnEmulator } from 'nid-webauthn-emulator';

/** A software authenticator with its own credential store (the library's default store is shared by every instance). */
const softwareAuthenticator = () => new WebAuthnEmulator(new AuthenticatorEmulator({ credentialsRepository: new PasskeysCredentialsMemoryRepository() }));
import { cookieHeader, signIn, TEST_PASSWORD } from './helpers/auth.js';
import { startApp } from './helpers/harness.js';
import { sha256Hex } from '../server/src/platform/security/secrets.js';
import { base32Decode, totpAt, totpNow } from './helpers/totp.js';

type App = Awaited<ReturnType<typeof startApp>>;
const post = (json: unknown, headers: Record<string, string> = {}) => ({ method: 'POST', json, headers });

/** Edits the server-side data of the session a Cookie header names (its row is keyed by the key's SHA-256). */
async function editSession(app: App, cookie: string, edit: (data: any) => void) {
  const key = /placard\.sid=([^;]+)/.exec(cookie)![1]!;
  const row = await app.deps.db.selectFrom('sessions').select('data').where('id', '=', sha256Hex(key)).executeTakeFirstOrThrow();
  const data = JSON.parse(row.data);
  edit(data);
  await app.deps.db
    .updateTable('sessions')
    .set({ data: JSON.stringify(data) })
    .where('id', '=', sha256Hex(key))
    .execute();
  return data;
}

function expectRateLimited(t: any, res: { status: number; headers: Headers; body: any }, label: string) {
  t.equal(res.status, 429, label);
  t.equal(res.body?.error?.code, 'rate_limited', `${label}: rate_limited`);
  t.ok(Number(res.headers.get('retry-after')) > 0, `${label}: Retry-After`);
}

t.test('the independent TOTP helper matches RFC 6238 test vectors', async (t) => {
  const key = Buffer.from('12345678901234567890');
  // RFC 6238 appendix B, SHA-1, 8 digits.
  for (const [time, code] of [
    [59, '94287082'],
    [1111111109, '07081804'],
    [1111111111, '14050471'],
    [1234567890, '89005924'],
    [2000000000, '69279037'],
    [20000000000, '65353130'],
  ] as const) {
    t.equal(totpAt(key, time, 8), code, `T=${time}`);
  }
  t.same(base32Decode('GEZDGNBVGY3TQOJQ'), Buffer.from('1234567890'));
});

async function enrolTotp(t: any, app: Awaited<ReturnType<typeof startApp>>, headers: Record<string, string>) {
  const start = await app.json('/api/v1/me/security/totp', { method: 'POST', headers });
  t.equal(start.status, 200);
  t.match(start.body.data.otpauthUri, /^otpauth:\/\/totp\/Placard:.+\?.*secret=/);
  t.match(start.body.data.qrCodeDataUrl, /^data:image\/png;base64,/);
  const secret: string = start.body.data.secret;
  const bad = await app.json('/api/v1/me/security/totp/confirm', {
    method: 'POST',
    json: { code: '000000' === totpNow(secret) ? '111111' : '000000' },
    headers,
  });
  t.equal(bad.status, 400, 'a wrong code does not turn TOTP on');
  // The previous step's code: confirm consumes it, so a later sign-in uses the current one.
  const confirm = await app.json('/api/v1/me/security/totp/confirm', { method: 'POST', json: { code: totpNow(secret, -1) }, headers });
  t.same(confirm.body, { data: { totpEnabled: true } });
  return secret;
}

t.test('TOTP: enrol, sign in with it, a code works once, remove needs proof', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const secret = await enrolTotp(t, app, owner.headers);
  const stored = await app.deps.db.selectFrom('users').select('totp_secret_sealed').executeTakeFirstOrThrow();
  t.notMatch(stored.totp_secret_sealed, new RegExp(secret), 'the seed is sealed at rest');

  const login = await app.json('/api/v1/auth/login', { method: 'POST', json: { email: owner.user.email, password: TEST_PASSWORD } });
  t.same(login.body.data, { mfaRequired: true, methods: ['totp'] });
  const half = cookieHeader(login);
  const blocked = await app.json('/api/v1/me/security', { headers: { cookie: half } });
  t.equal(blocked.status, 401, 'a half-signed-in session reaches nothing else');
  t.equal(blocked.body.error.code, 'mfa_required');

  const code = totpNow(secret);
  const done = await app.json('/api/v1/auth/mfa/verify', { method: 'POST', json: { totp: code }, headers: { cookie: half } });
  t.equal(done.status, 200);
  t.ok(done.body.data.csrfToken);
  const full = cookieHeader(done, half);
  t.not(/placard\.sid=([^;]+)/.exec(full)?.[1], /placard\.sid=([^;]+)/.exec(half)?.[1], 'session key rotated on MFA completion');

  // The same code again, in a new sign-in: refused (replay).
  const again = await app.json('/api/v1/auth/login', { method: 'POST', json: { email: owner.user.email, password: TEST_PASSWORD } });
  const replay = await app.json('/api/v1/auth/mfa/verify', { method: 'POST', json: { totp: code }, headers: { cookie: cookieHeader(again) } });
  t.equal(replay.status, 401, 'a replayed TOTP code is refused');
  t.equal(replay.body.error.code, 'invalid_credential');

  const headers = { cookie: full, 'x-csrf-token': done.body.data.csrfToken };
  let res = await app.json('/api/v1/me/security/totp/remove', { method: 'POST', json: {}, headers });
  t.equal(res.status, 400, 'remove needs a code or password');
  res = await app.json('/api/v1/me/security/totp/remove', { method: 'POST', json: { password: 'wrong wrong wrong' }, headers });
  t.equal(res.status, 401);
  res = await app.json('/api/v1/me/security/totp/remove', { method: 'POST', json: { password: TEST_PASSWORD }, headers });
  t.same(res.body, { data: { totpEnabled: false } });
});

t.test('recovery codes: ten, single use, counted, replaced on reissue', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  let res = await app.json('/api/v1/me/security/recovery-codes', { method: 'POST', headers: owner.headers });
  t.equal(res.status, 409, 'no codes without a second factor');
  await enrolTotp(t, app, owner.headers);
  res = await app.json('/api/v1/me/security/recovery-codes', { method: 'POST', headers: owner.headers });
  const codes: string[] = res.body.data.codes;
  t.equal(codes.length, 10);
  t.equal(new Set(codes).size, 10);
  const hashes = await app.deps.db.selectFrom('recovery_codes').select('code_hash').execute();
  t.notOk(
    hashes.some((h) => codes.some((c) => h.code_hash.includes(c.replace('-', '')))),
    'stored hashed',
  );

  const useCode = async (code: string) => {
    const login = await app.json('/api/v1/auth/login', { method: 'POST', json: { email: owner.user.email, password: TEST_PASSWORD } });
    t.same(login.body.data.methods, ['totp', 'recovery_code']);
    return app.json('/api/v1/auth/mfa/verify', { method: 'POST', json: { recoveryCode: code }, headers: { cookie: cookieHeader(login) } });
  };
  t.equal((await useCode(codes[0]!.toUpperCase())).status, 200, 'a code works (case-insensitive)');
  const spent = await useCode(codes[0]!);
  t.equal(spent.status, 401, 'a spent code is refused');
  const sec = await app.json('/api/v1/me/security', { headers: owner.headers });
  t.equal(sec.body.data.recoveryCodesRemaining, 9);

  await app.json('/api/v1/me/security/recovery-codes', { method: 'POST', headers: owner.headers });
  t.equal((await useCode(codes[1]!)).status, 401, 'old codes stop working when new ones are issued');
});

t.test('MFA verification is throttled', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  await enrolTotp(t, app, owner.headers);
  const login = await app.json('/api/v1/auth/login', { method: 'POST', json: { email: owner.user.email, password: TEST_PASSWORD } });
  const cookie = cookieHeader(login);
  let res;
  for (let i = 0; i < 6; i++) res = await app.json('/api/v1/auth/mfa/verify', { method: 'POST', json: { totp: String(100000 + i) }, headers: { cookie } });
  t.equal(res!.status, 429);
  t.ok(res!.headers.get('retry-after'));
});

t.test('passkeys: register with a software authenticator, sign in without a password, use as second factor, rename, remove', async (t) => {
  const origin = 'http://localhost';
  const app = await startApp(t, { config: { publicUrl: origin } });
  const owner = await signIn(app);
  const authenticator = softwareAuthenticator();

  const options = await app.json('/api/v1/me/security/passkeys/options', { method: 'POST', headers: owner.headers });
  t.equal(options.status, 200);
  t.equal(options.body.data.rp.id, 'localhost', 'RP ID from PLACARD_PUBLIC_URL');
  const credential = authenticator.createJSON(origin, options.body.data);
  let res = await app.json('/api/v1/me/security/passkeys', { method: 'POST', json: { response: credential, name: 'Laptop' }, headers: owner.headers });
  t.equal(res.status, 201, JSON.stringify(res.body));
  const passkeyId = res.body.data.id;
  res = await app.json('/api/v1/me/security/passkeys', { method: 'POST', json: { response: credential, name: 'Again' }, headers: owner.headers });
  t.equal(res.status, 401, 'the registration challenge works once');

  // Passwordless sign-in.
  const loginOptions = await app.fetch('/api/v1/auth/passkey/login/options', { method: 'POST' });
  const anon = cookieHeader(loginOptions);
  const assertion = authenticator.getJSON(origin, ((await loginOptions.json()) as any).data);
  res = await app.json('/api/v1/auth/passkey/login', { method: 'POST', json: { response: assertion }, headers: { cookie: anon } });
  t.equal(res.status, 200, JSON.stringify(res.body));
  t.equal(res.body.data.user.id, owner.user.id);
  res = await app.json('/api/v1/auth/passkey/login', { method: 'POST', json: { response: assertion }, headers: { cookie: anon } });
  t.equal(res.status, 401, 'an assertion cannot be replayed');

  // As the second factor after the password.
  const login = await app.json('/api/v1/auth/login', { method: 'POST', json: { email: owner.user.email, password: TEST_PASSWORD } });
  t.same(login.body.data.methods, ['passkey']);
  let half = cookieHeader(login);
  const mfaOptions = await app.json('/api/v1/auth/mfa/passkey/options', { method: 'POST', headers: { cookie: half } });
  t.equal(mfaOptions.body.data.allowCredentials.length, 1);
  half = cookieHeader(mfaOptions, half);
  res = await app.json('/api/v1/auth/mfa/verify', {
    method: 'POST',
    json: { passkey: authenticator.getJSON(origin, mfaOptions.body.data) },
    headers: { cookie: half },
  });
  t.equal(res.status, 200, JSON.stringify(res.body));

  const counter = await app.deps.db.selectFrom('passkeys').select('counter').executeTakeFirstOrThrow();
  t.ok(counter.counter >= 2, 'the sign counter is kept');

  // A clone of the authenticator whose counter went backwards is refused.
  await app.deps.db.updateTable('passkeys').set({ counter: 1000 }).execute();
  const again = await app.fetch('/api/v1/auth/passkey/login/options', { method: 'POST' });
  res = await app.json('/api/v1/auth/passkey/login', {
    method: 'POST',
    json: { response: authenticator.getJSON(origin, ((await again.json()) as any).data) },
    headers: { cookie: cookieHeader(again) },
  });
  t.equal(res.status, 401, 'a sign counter that did not increase is refused');

  res = await app.json(`/api/v1/me/security/passkeys/${passkeyId}`, { method: 'PATCH', json: { name: 'Work laptop' }, headers: owner.headers });
  t.equal(res.body.data.name, 'Work laptop');
  const sec = await app.json('/api/v1/me/security', { headers: owner.headers });
  t.same(
    sec.body.data.passkeys.map((p: { name: string }) => p.name),
    ['Work laptop'],
  );
  res = await app.fetch(`/api/v1/me/security/passkeys/${passkeyId}/remove`, { method: 'POST', headers: owner.headers });
  t.equal(res.status, 204);
  res = await app.fetch(`/api/v1/me/security/passkeys/${passkeyId}/remove`, { method: 'POST', headers: owner.headers });
  t.equal(res.status, 404);
});

t.test('recovery-code guessing is throttled per account; the right code waits too and stays unspent', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  await enrolTotp(t, app, owner.headers);
  const codes: string[] = (await app.json('/api/v1/me/security/recovery-codes', post(undefined, owner.headers))).body.data.codes;
  const login = await app.json('/api/v1/auth/login', post({ email: owner.user.email, password: TEST_PASSWORD }));
  const cookie = cookieHeader(login);
  for (let i = 0; i < 5; i++) {
    const res = await app.json('/api/v1/auth/mfa/verify', post({ recoveryCode: `aaaaa-bbbb${i}` }, { cookie }));
    t.equal(res.status, 401, `wrong code ${i}`);
  }
  expectRateLimited(t, await app.json('/api/v1/auth/mfa/verify', post({ recoveryCode: codes[0] }, { cookie })), 'the sixth try');
  t.equal((await app.json('/api/v1/me/security', { headers: owner.headers })).body.data.recoveryCodesRemaining, 10, 'the right code was not spent');
});

t.test('TOTP confirmation and the re-authentication of totp/remove are throttled', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const start = await app.json('/api/v1/me/security/totp', post(undefined, owner.headers));
  const secret: string = start.body.data.secret;
  const wrong = (i: number) => String((Number(totpNow(secret)) + 1 + i) % 1_000_000).padStart(6, '0');
  for (let i = 0; i < 5; i++) t.equal((await app.json('/api/v1/me/security/totp/confirm', post({ code: wrong(i) }, owner.headers))).status, 400);
  expectRateLimited(
    t,
    await app.json('/api/v1/me/security/totp/confirm', post({ code: totpNow(secret) }, owner.headers)),
    'confirm with the right code after five misses',
  );
  t.equal((await app.json('/api/v1/me/security', { headers: owner.headers })).body.data.totpEnabled, false, 'TOTP stayed off');

  // A second user (the first one's confirm is locked): TOTP on, then guessing at remove.
  const other = await signIn(app, { role: 'editor' });
  await enrolTotp(t, app, other.headers);
  for (let i = 0; i < 5; i++) t.equal((await app.json('/api/v1/me/security/totp/remove', post({ password: `not it ${i} at all` }, other.headers))).status, 401);
  expectRateLimited(
    t,
    await app.json('/api/v1/me/security/totp/remove', post({ password: TEST_PASSWORD }, other.headers)),
    'remove with the right password after five misses',
  );
  t.equal((await app.json('/api/v1/me/security', { headers: other.headers })).body.data.totpEnabled, true, 'TOTP stayed on');
});

t.test('totp/remove with a code: a code already used is refused there, a newer one works', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const secret = await enrolTotp(t, app, owner.headers);
  // Codes for a fixed step and the next: both stay inside the one-step tolerance while the test runs.
  const now = Date.now() / 1000;
  const key = base32Decode(secret);
  const thisStep = totpAt(key, now);
  const nextStep = totpAt(key, now + 30);
  const login = await app.json('/api/v1/auth/login', post({ email: owner.user.email, password: TEST_PASSWORD }));
  const done = await app.json('/api/v1/auth/mfa/verify', post({ totp: thisStep }, { cookie: cookieHeader(login) }));
  t.equal(done.status, 200, 'the code signs in');
  let res = await app.json('/api/v1/me/security/totp/remove', post({ code: thisStep }, owner.headers));
  t.equal(res.status, 401, 'the same code is refused at remove');
  t.equal(res.body.error.code, 'invalid_credential');
  res = await app.json('/api/v1/me/security/totp/remove', post({ code: 'abcdef' }, owner.headers));
  t.equal(res.status, 401, 'not a code');
  res = await app.json('/api/v1/me/security/totp/remove', post({ code: nextStep }, owner.headers));
  t.same(res.body, { data: { totpEnabled: false } }, 'a newer code removes TOTP');
  res = await app.json('/api/v1/me/security/totp/remove', post({ code: nextStep }, owner.headers));
  t.equal(res.status, 409, 'nothing left to remove');
});

t.test('a stored time step ahead of the clock (the clock went back) is a failed code, not a 500', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const secret = await enrolTotp(t, app, owner.headers);
  const ahead = Math.floor(Date.now() / 30_000) + 5;
  await app.deps.db.updateTable('users').set({ totp_last_step: ahead }).where('id', '=', owner.user.id).execute();
  const login = await app.json('/api/v1/auth/login', post({ email: owner.user.email, password: TEST_PASSWORD }));
  let res = await app.json('/api/v1/auth/mfa/verify', post({ totp: totpNow(secret) }, { cookie: cookieHeader(login) }));
  t.equal(res.status, 401, `verify: ${JSON.stringify(res.body)}`);
  t.equal(res.body.error.code, 'invalid_credential');
  res = await app.json('/api/v1/me/security/totp/remove', post({ code: totpNow(secret) }, owner.headers));
  t.equal(res.status, 401, 'remove with a code');
  t.equal(res.body.error.code, 'invalid_credential');
  res = await app.json('/api/v1/me/security/totp/remove', post({ password: TEST_PASSWORD }, owner.headers));
  t.equal(res.status, 200, 'the password still removes it');
});

t.test('the half-signed-in session: status says mfaPending, 10 minutes to finish, logout ends it', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const secret = await enrolTotp(t, app, owner.headers);
  const login = await app.json('/api/v1/auth/login', post({ email: owner.user.email, password: TEST_PASSWORD }));
  const half = cookieHeader(login);
  let status = await app.json('/api/v1/auth/status', { headers: { cookie: half } });
  t.same(status.body.data, { setupRequired: false, authenticated: false, mfaPending: true, user: null, csrfToken: null, approvalsRequired: false });

  // Nine minutes in: still open. Ten and a bit: closed.
  await editSession(app, half, (d) => (d.mfaStartedAt = Date.now() - 9 * 60_000));
  t.equal((await app.json('/api/v1/auth/status', { headers: { cookie: half } })).body.data.mfaPending, true, 'nine minutes: still pending');
  await editSession(app, half, (d) => (d.mfaStartedAt = Date.now() - 10 * 60_000 - 1_000));
  status = await app.json('/api/v1/auth/status', { headers: { cookie: half } });
  t.equal(status.body.data.mfaPending, false, 'past ten minutes: nothing pending');
  let res = await app.json('/api/v1/auth/mfa/verify', post({ totp: totpNow(secret) }, { cookie: half }));
  t.equal(res.status, 401, 'a valid code after the window');
  t.equal(res.body.error.code, 'unauthenticated');

  // Logout works for a half-signed-in session (no CSRF token was ever handed to it).
  const again = cookieHeader(await app.json('/api/v1/auth/login', post({ email: owner.user.email, password: TEST_PASSWORD })));
  res = await app.json('/api/v1/auth/logout', { method: 'POST', headers: { cookie: again } });
  t.equal(res.status, 204, `logout: ${JSON.stringify(res.body)}`);
  res = await app.json('/api/v1/auth/mfa/verify', post({ totp: totpNow(secret) }, { cookie: again }));
  t.equal(res.status, 401, 'the half session is gone');
  t.equal(res.body.error.code, 'unauthenticated');

  res = await app.json('/api/v1/auth/logout', { method: 'POST' });
  t.equal(res.status, 401, 'logout without a session');
  t.equal(res.body.error.code, 'unauthenticated');
  res = await app.json('/api/v1/auth/logout', { method: 'POST', headers: { cookie: owner.headers.cookie } });
  t.equal(res.status, 403, 'a signed-in session still needs its CSRF token to sign out');
  t.equal(res.body.error.code, 'csrf_failed');
  t.equal((await app.json('/api/v1/me/security', { headers: owner.headers })).status, 200, 'and is still signed in');
});

t.test('passkeys: failures say one generic thing, challenges expire after 5 minutes, passwordless sign-in is throttled per account', async (t) => {
  const origin = 'http://localhost';
  const app = await startApp(t, { config: { publicUrl: origin } });
  const owner = await signIn(app);
  const editor = await signIn(app, { role: 'editor' });
  const register = async (who: { headers: Record<string, string> }) => {
    const authenticator = softwareAuthenticator();
    const options = await app.json('/api/v1/me/security/passkeys/options', post(undefined, who.headers));
    const res = await app.json('/api/v1/me/security/passkeys', post({ response: authenticator.createJSON(origin, options.body.data) }, who.headers));
    t.equal(res.status, 201);
    return authenticator;
  };
  const ownerKey = await register(owner);
  const editorKey = await register(editor);
  const options = async () => {
    const res = await app.fetch('/api/v1/auth/passkey/login/options', { method: 'POST' });
    return { cookie: cookieHeader(res), options: ((await res.json()) as any).data };
  };
  const passwordless = (cookie: string, response: unknown) => app.json('/api/v1/auth/passkey/login', post({ response }, { cookie }));

  // The challenge lives 5 minutes; an expired one is refused even with a good assertion.
  const before = Date.now();
  const stale = await options();
  const stored = await editSession(app, stale.cookie, () => undefined);
  t.ok(stored.webauthn.expiresAt >= before + 5 * 60_000 && stored.webauthn.expiresAt <= Date.now() + 5 * 60_000, 'expires 5 minutes after issue');
  await editSession(app, stale.cookie, (d) => (d.webauthn.expiresAt = Date.now() - 1));
  let res = await passwordless(stale.cookie, ownerKey.getJSON(origin, stale.options));
  t.equal(res.status, 401, 'an expired challenge');
  t.equal(res.body.error.code, 'invalid_credential');
  const fresh = await options();
  await editSession(app, fresh.cookie, (d) => (d.webauthn.expiresAt = Date.now() + 60_000));
  t.equal((await passwordless(fresh.cookie, ownerKey.getJSON(origin, fresh.options))).status, 200, 'a challenge still inside its time works');

  // One message whatever failed.
  const messages = new Set<string>();
  const unknown = await options();
  const forged = { ...ownerKey.getJSON(origin, unknown.options) };
  res = await passwordless(unknown.cookie, { ...forged, id: 'AAAAAAAAAAAAAAAAAAAAAA', rawId: 'AAAAAAAAAAAAAAAAAAAAAA' });
  t.equal(res.status, 401, 'an unknown credential');
  messages.add(res.body.error.message);
  const tampered = await options();
  const assertion = editorKey.getJSON(origin, tampered.options);
  res = await passwordless(tampered.cookie, {
    ...assertion,
    response: { ...assertion.response, signature: Buffer.from('not a signature').toString('base64url') },
  });
  t.equal(res.status, 401, 'a bad signature');
  messages.add(res.body.error.message);
  const mfaLogin = await app.json('/api/v1/auth/login', post({ email: owner.user.email, password: TEST_PASSWORD }));
  let half = cookieHeader(mfaLogin);
  const mfaOptions = await app.json('/api/v1/auth/mfa/passkey/options', post(undefined, { cookie: half }));
  half = cookieHeader(mfaOptions, half);
  res = await app.json(
    '/api/v1/auth/mfa/verify',
    post({ passkey: editorKey.getJSON(origin, { ...mfaOptions.body.data, allowCredentials: [] }) }, { cookie: half }),
  );
  t.equal(res.status, 401, 'another user’s passkey as a second factor');
  messages.add(res.body.error.message);
  t.same([...messages], ['The passkey was not accepted'], 'one generic message');

  // Passwordless failures with the editor's credential lock the editor's account (5),
  // long before the address limit (20): the right assertion then waits too.
  for (let i = 0; i < 4; i++) {
    const o = await options();
    const a = editorKey.getJSON(origin, o.options);
    const r = await passwordless(o.cookie, { ...a, response: { ...a.response, signature: Buffer.from(`bad ${i}`).toString('base64url') } });
    t.equal(r.status, 401, `failure ${i + 2}`);
  }
  const locked = await options();
  expectRateLimited(t, await passwordless(locked.cookie, editorKey.getJSON(origin, locked.options)), 'the editor’s passkey after five failures');
  const ok = await options();
  const okRes = await passwordless(ok.cookie, ownerKey.getJSON(origin, ok.options));
  t.equal(okRes.status, 200, `another account from the same address still signs in: ${JSON.stringify(okRes.body)}`);
});

t.test('anonymous passkey sign-in options (each stores a challenge) are limited per address', async (t) => {
  const app = await startApp(t);
  let res;
  for (let i = 0; i < 60; i++) {
    res = await app.fetch('/api/v1/auth/passkey/login/options', { method: 'POST' });
    if (res.status !== 200) break;
  }
  t.equal(res!.status, 200, 'sixty in a row are fine');
  const limited = await app.json('/api/v1/auth/passkey/login/options', { method: 'POST' });
  expectRateLimited(t, limited, 'the sixty-first');
});

import t from 'tap';
import { WebAuthnEmulator } from 'nid-webauthn-emulator';
import { cookieHeader, signIn, TEST_PASSWORD } from './helpers/auth.js';
import { startApp } from './helpers/harness.js';
import { base32Decode, totpAt, totpNow } from './helpers/totp.js';

t.test('the independent TOTP helper matches RFC 6238 test vectors', async (t) => {
  const key = Buffer.from('12345678901234567890');
  // RFC 6238 appendix B, SHA-1, 8 digits.
  for (const [time, code] of [[59, '94287082'], [1111111109, '07081804'], [1111111111, '14050471'], [1234567890, '89005924'], [2000000000, '69279037'], [20000000000, '65353130']] as const) {
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
  const bad = await app.json('/api/v1/me/security/totp/confirm', { method: 'POST', json: { code: '000000' === totpNow(secret) ? '111111' : '000000' }, headers });
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
  t.notOk(hashes.some((h) => codes.some((c) => h.code_hash.includes(c.replace('-', '')))), 'stored hashed');

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
  const authenticator = new WebAuthnEmulator();

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
  res = await app.json('/api/v1/auth/mfa/verify', { method: 'POST', json: { passkey: authenticator.getJSON(origin, mfaOptions.body.data) }, headers: { cookie: half } });
  t.equal(res.status, 200, JSON.stringify(res.body));

  const counter = await app.deps.db.selectFrom('passkeys').select('counter').executeTakeFirstOrThrow();
  t.ok(counter.counter >= 2, 'the sign counter is kept');

  // A clone of the authenticator whose counter went backwards is refused.
  await app.deps.db.updateTable('passkeys').set({ counter: 1000 }).execute();
  const again = await app.fetch('/api/v1/auth/passkey/login/options', { method: 'POST' });
  res = await app.json('/api/v1/auth/passkey/login', { method: 'POST', json: { response: authenticator.getJSON(origin, ((await again.json()) as any).data) }, headers: { cookie: cookieHeader(again) } });
  t.equal(res.status, 401, 'a sign counter that did not increase is refused');

  res = await app.json(`/api/v1/me/security/passkeys/${passkeyId}`, { method: 'PATCH', json: { name: 'Work laptop' }, headers: owner.headers });
  t.equal(res.body.data.name, 'Work laptop');
  const sec = await app.json('/api/v1/me/security', { headers: owner.headers });
  t.same(sec.body.data.passkeys.map((p: { name: string }) => p.name), ['Work laptop']);
  res = await app.fetch(`/api/v1/me/security/passkeys/${passkeyId}/remove`, { method: 'POST', headers: owner.headers });
  t.equal(res.status, 204);
  res = await app.fetch(`/api/v1/me/security/passkeys/${passkeyId}/remove`, { method: 'POST', headers: owner.headers });
  t.equal(res.status, 404);
});

import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { signedInApp } from './helpers/auth.js';
import { startFakeReleaseSource } from './helpers/fake-release-source.js';
import type { TestApp } from './helpers/harness.js';

// The release source's device flow (RFC 8628) against a fake source: every answer of the
// token endpoint, the interval and slow_down rules, the token sealed at rest, disconnect.

const LOOPBACK = { fetchAllowLoopback: true };

/** The interval has passed: the next poll may ask the token endpoint (the test moves the grant's clock, not its own). */
const due = (app: TestApp) =>
  app.deps.db
    .updateTable('release_source')
    .set({ next_poll_at: new Date(Date.now() - 1000).toISOString() })
    .execute();

/** Every byte of the database (file and WAL). */
function databaseBytes(app: TestApp): Buffer {
  return Buffer.concat(
    readdirSync(app.dataDir)
      .filter((n) => n.startsWith('placard.db'))
      .map((n) => readFileSync(path.join(app.dataDir, n))),
  );
}

t.test('device flow: pending, the interval, slow_down, approval, the token sealed, disconnect', async (t) => {
  const fake = await startFakeReleaseSource(t, { interval: 2 });
  const { app, call } = await signedInApp(t, { config: LOOPBACK });

  const none = await call('POST', '/api/v1/player-releases/release-source/device', {});
  t.equal(none.status, 409, 'no URL and none configured');
  t.equal(none.body.error.code, 'release_source_not_configured');
  const noGrant = await call('POST', '/api/v1/player-releases/release-source/device/poll');
  t.equal(noGrant.status, 409);
  t.equal(noGrant.body.error.code, 'no_device_grant');

  const started = await call('POST', '/api/v1/player-releases/release-source/device', { url: fake.url });
  t.equal(started.status, 200, JSON.stringify(started.body));
  t.match(started.body.data, {
    url: fake.url,
    state: 'pending',
    userCode: fake.userCode,
    verificationUri: `${fake.url}/activate`,
    verificationUriComplete: `${fake.url}/activate?user_code=${fake.userCode}`,
    intervalSec: 2,
    connectedAt: null,
    error: null,
  });
  t.ok(Date.parse(started.body.data.expiresAt) > Date.now(), 'expiresAt ahead');
  const authorize = fake.requests.find((r) => r.path === '/oauth/device_authorization')!;
  t.equal(authorize.method, 'POST');
  t.equal(authorize.form.client_id, 'placard-server', 'form-encoded, as the client placard-server');
  t.ok(
    fake.requests.some((r) => r.path === '/.well-known/oauth-authorization-server'),
    'endpoints discovered (RFC 8414)',
  );

  // Polled early: answered without asking the source.
  const early = await call('POST', '/api/v1/player-releases/release-source/device/poll');
  t.equal(early.status, 200);
  t.equal(early.body.data.state, 'pending');
  t.equal(fake.tokenRequests().length, 0, 'the token endpoint is not asked before the interval');

  await due(app);
  const pending = await call('POST', '/api/v1/player-releases/release-source/device/poll');
  t.equal(pending.body.data.state, 'pending');
  t.equal(fake.tokenRequests().length, 1);
  const asked = fake.tokenRequests()[0]!;
  t.same(
    asked.form,
    { grant_type: 'urn:ietf:params:oauth:grant-type:device_code', device_code: fake.deviceCode, client_id: 'placard-server' },
    'the token request (RFC 8628 3.4)',
  );
  t.equal(asked.error, 'authorization_pending');
  const again = await call('POST', '/api/v1/player-releases/release-source/device/poll');
  t.equal(again.body.data.state, 'pending');
  t.equal(fake.tokenRequests().length, 1, 'right after an answer: not asked again');

  fake.slowDown();
  await due(app);
  const before = Date.now();
  const slowed = await call('POST', '/api/v1/player-releases/release-source/device/poll');
  const after = Date.now();
  t.equal(fake.tokenRequests()[1]?.error, 'slow_down');
  t.equal(slowed.body.data.state, 'pending');
  t.equal(slowed.body.data.intervalSec, 7, 'slow_down adds 5 s to the interval');
  const row = await app.deps.db.selectFrom('release_source').selectAll().executeTakeFirstOrThrow();
  const next = Date.parse(row.next_poll_at!);
  t.ok(next >= before + 7000 && next <= after + 7000, 'the next poll waits the new interval');
  await call('POST', '/api/v1/player-releases/release-source/device/poll');
  t.equal(fake.tokenRequests().length, 2, 'not asked within the longer interval');

  fake.approve();
  const deviceCode = fake.deviceCode!;
  await due(app);
  const connected = await call('POST', '/api/v1/player-releases/release-source/device/poll');
  t.equal(connected.status, 200);
  t.match(connected.body.data, { state: 'connected', userCode: null, verificationUri: null, intervalSec: null, error: null });
  t.ok(connected.body.data.connectedAt);
  t.equal(fake.tokenRequests().length, 3);
  t.equal(fake.tokenRequests()[2]!.status, 200);

  const stored = await app.deps.db.selectFrom('release_source').selectAll().executeTakeFirstOrThrow();
  t.ok(stored.token_sealed?.startsWith('v1.'), 'the token is sealed');
  t.equal(stored.device_code_sealed, null, 'the device code is forgotten once settled');
  t.notOk(databaseBytes(app).includes(fake.accessToken), 'the database holds no plaintext token');
  t.notOk(databaseBytes(app).includes(deviceCode), 'nor the device code');

  await due(app);
  t.equal((await call('POST', '/api/v1/player-releases/release-source/device/poll')).body.data.state, 'connected');
  t.equal(fake.tokenRequests().length, 3, 'connected: never asked again');
  const listed = await call('GET', '/api/v1/player-releases');
  t.match(listed.body.releaseSource, { url: fake.url, state: 'connected', userCode: null });

  t.equal((await call('DELETE', '/api/v1/player-releases/release-source')).status, 204);
  t.equal((await app.deps.db.selectFrom('release_source').selectAll().execute()).length, 0, 'grant, token and URL forgotten');
  t.equal((await call('GET', '/api/v1/player-releases')).body.releaseSource, null);
  const twice = await call('DELETE', '/api/v1/player-releases/release-source');
  t.equal(twice.status, 404);
  t.equal((await call('POST', '/api/v1/player-releases/release-source/device/poll')).body.error.code, 'no_device_grant');
});

t.test('device flow: access_denied, expired_token, the code’s lifetime, an unreachable source', async (t) => {
  const fake = await startFakeReleaseSource(t);
  const { app, call } = await signedInApp(t, { config: { ...LOOPBACK, releaseSourceUrl: fake.url } });

  const started = await call('POST', '/api/v1/player-releases/release-source/device');
  t.equal(started.body.data.url, fake.url, 'the configured URL by default');
  fake.deny();
  await due(app);
  const denied = await call('POST', '/api/v1/player-releases/release-source/device/poll');
  t.match(denied.body.data, { state: 'denied', userCode: null, error: /denied/ });
  t.equal(fake.tokenRequests().at(-1)!.error, 'access_denied');
  const count = fake.tokenRequests().length;
  await due(app);
  t.equal((await call('POST', '/api/v1/player-releases/release-source/device/poll')).body.data.state, 'denied');
  t.equal(fake.tokenRequests().length, count, 'denied: never asked again');
  t.equal((await call('POST', '/api/v1/player-releases/check')).body.error.code, 'release_source_not_connected');

  await call('POST', '/api/v1/player-releases/release-source/device');
  fake.expire();
  await due(app);
  const expired = await call('POST', '/api/v1/player-releases/release-source/device/poll');
  t.match(expired.body.data, { state: 'expired', error: /expired/ });
  t.equal(fake.tokenRequests().at(-1)!.error, 'expired_token');

  // The code's lifetime passed: expired without asking.
  await call('POST', '/api/v1/player-releases/release-source/device');
  await app.deps.db
    .updateTable('release_source')
    .set({ expires_at: new Date(Date.now() - 1000).toISOString(), next_poll_at: new Date(Date.now() - 1000).toISOString() })
    .execute();
  const asked = fake.tokenRequests().length;
  const lapsed = await call('POST', '/api/v1/player-releases/release-source/device/poll');
  t.equal(lapsed.body.data.state, 'expired');
  t.equal(fake.tokenRequests().length, asked, 'a lapsed code is not sent');

  await fake.close();
  const unreachable = await call('POST', '/api/v1/player-releases/release-source/device', { url: fake.url });
  t.equal(unreachable.status, 200);
  t.match(unreachable.body.data, { state: 'failed', error: /could not be fetched/ });
  t.equal((await call('POST', '/api/v1/player-releases/release-source/device', { url: 'ftp://example.org' })).status, 400, 'http(s) only');
});

t.test('the outbound policy applies: a loopback source is refused unless allowed', async (t) => {
  const fake = await startFakeReleaseSource(t);
  const { call } = await signedInApp(t);
  const res = await call('POST', '/api/v1/player-releases/release-source/device', { url: fake.url });
  t.match(res.body.data, { state: 'failed', error: /loopback/ });
  t.equal(fake.requests.length, 0, 'nothing was sent');
});

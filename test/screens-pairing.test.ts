import t from 'tap';
import { signIn } from './helpers/auth.js';
import { startApp } from './helpers/harness.js';
import { pairScreen } from './helpers/screens.js';
import { sha256Hex } from '../server/src/platform/security/secrets.js';
import { MAX_PENDING_PER_ADDRESS, rejectPairingSession } from '../server/src/modules/screens/pairing.service.js';

t.test('pairing: session, resolve (case/dash-insensitive), approve, poll, enroll once', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const started = await app.json('/api/v1/player/pairing-sessions', {
    method: 'POST',
    json: { playerFamily: 'android', playerVersion: '2.1.0', deviceName: 'Cafe TV' },
  });
  t.equal(started.status, 201);
  const s = started.body.data;
  t.match(s.code, /^[ABCDEFGHJKMNPQRSTUVWXYZ23456789]{6}$/, 'six unambiguous characters');
  t.ok(s.pollSecret.length >= 40, 'poll secret of 256 bits');
  t.equal(s.pollIntervalSec, 3);
  const ttl = Date.parse(s.expiresAt) - Date.now();
  t.ok(ttl > 14 * 60_000 && ttl <= 15 * 60_000, 'expires in 15 minutes');

  // Poll needs the secret.
  t.equal((await app.json(`/api/v1/player/pairing-sessions/${s.id}`)).status, 401);
  t.equal((await app.json(`/api/v1/player/pairing-sessions/${s.id}`, { headers: { 'x-pairing-secret': 'wrong' } })).body.error.code, 'invalid_credential');
  const pending = await app.json(`/api/v1/player/pairing-sessions/${s.id}`, { headers: { 'x-pairing-secret': s.pollSecret } });
  t.same(pending.body.data.status, 'pending');
  t.notOk('enrollmentToken' in pending.body.data);

  // The console resolves the code however it is typed.
  const messy = `${s.code.slice(0, 3).toLowerCase()}-${s.code.slice(3)}`;
  const resolved = await app.json('/api/v1/screens/pairing/resolve', { method: 'POST', headers: owner.headers, json: { code: messy } });
  t.equal(resolved.status, 200);
  t.match(resolved.body.data, { id: s.id, code: s.code, status: 'pending', playerFamily: 'android', deviceName: 'Cafe TV' });
  t.equal((await app.json('/api/v1/screens/pairing/resolve', { method: 'POST', headers: owner.headers, json: { code: 'ZZZZZZ' } })).status, 404);

  const approved = await app.json(`/api/v1/screens/pairing/${s.id}/approve`, { method: 'POST', headers: owner.headers, json: { name: 'Cafe' } });
  t.equal(approved.status, 200);
  const screen = approved.body.data.screen;
  t.match(screen, { name: 'Cafe', status: 'pending', disabled: false, revoked: false, playerFamily: 'android', playerVersion: '2.1.0', groupIds: [] });
  t.equal(
    (await app.json(`/api/v1/screens/pairing/${s.id}/approve`, { method: 'POST', headers: owner.headers, json: { name: 'x' } })).status,
    409,
    'approve twice is a conflict',
  );
  t.equal(
    (await app.json('/api/v1/screens/pairing/resolve', { method: 'POST', headers: owner.headers, json: { code: s.code } })).status,
    404,
    'an approved code no longer resolves',
  );

  const polled = await app.json(`/api/v1/player/pairing-sessions/${s.id}`, { headers: { 'x-pairing-secret': s.pollSecret } });
  t.equal(polled.body.data.status, 'approved');
  const token = polled.body.data.enrollmentToken;
  t.type(token, 'string');
  const stored = await app.deps.db.selectFrom('pairing_sessions').select('enrollment_token_hash').where('id', '=', s.id).executeTakeFirstOrThrow();
  t.equal(stored.enrollment_token_hash, sha256Hex(token), 'only the hash of the enrollment token is stored');

  const enrolled = await app.json('/api/v1/player/enroll', { method: 'POST', json: { enrollmentToken: token } });
  t.equal(enrolled.status, 201);
  t.equal(enrolled.body.data.screenId, screen.id);
  t.match(enrolled.body.data.credential, /^svc_device_[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{40,}$/);
  const again = await app.json('/api/v1/player/enroll', { method: 'POST', json: { enrollmentToken: token } });
  t.equal(again.status, 401, 'the token works once');
  t.equal(again.body.error.code, 'invalid_credential');

  const cred = await app.deps.db.selectFrom('device_credentials').selectAll().where('screen_id', '=', screen.id).executeTakeFirstOrThrow();
  const secret = enrolled.body.data.credential.split('.')[1];
  t.equal(cred.secret_hash, sha256Hex(secret), 'the credential is stored hashed');
  t.notOk(JSON.stringify(cred).includes(secret));

  const after = await app.json(`/api/v1/player/pairing-sessions/${s.id}`, { headers: { 'x-pairing-secret': s.pollSecret } });
  t.equal(after.body.data.status, 'enrolled');
  t.notOk('enrollmentToken' in after.body.data);

  const hb = await app.json('/api/v1/player/heartbeat', { method: 'POST', headers: { authorization: `Bearer ${enrolled.body.data.credential}` }, json: {} });
  t.equal(hb.status, 200, 'the credential works');
});

t.test('reject and expiry', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const a = (await app.json('/api/v1/player/pairing-sessions', { method: 'POST', json: {} })).body.data;
  const rejected = await app.json(`/api/v1/screens/pairing/${a.id}/reject`, { method: 'POST', headers: owner.headers });
  t.same(rejected.body.data, { id: a.id, status: 'rejected' });
  t.equal((await app.json(`/api/v1/player/pairing-sessions/${a.id}`, { headers: { 'x-pairing-secret': a.pollSecret } })).body.data.status, 'rejected');
  t.equal((await app.json(`/api/v1/screens/pairing/${a.id}/approve`, { method: 'POST', headers: owner.headers, json: { name: 'x' } })).status, 409);

  const b = (await app.json('/api/v1/player/pairing-sessions', { method: 'POST', json: { playerFamily: 'toaster' } })).body.data;
  const row = await app.deps.db.selectFrom('pairing_sessions').select('player_family').where('id', '=', b.id).executeTakeFirstOrThrow();
  t.equal(row.player_family, null, 'an unknown family is recorded as absent');
  await app.deps.db
    .updateTable('pairing_sessions')
    .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
    .where('id', '=', b.id)
    .execute();
  t.equal((await app.json(`/api/v1/player/pairing-sessions/${b.id}`, { headers: { 'x-pairing-secret': b.pollSecret } })).body.data.status, 'expired');
  t.equal(
    (await app.json('/api/v1/screens/pairing/resolve', { method: 'POST', headers: owner.headers, json: { code: b.code } })).status,
    404,
    'an expired code does not resolve',
  );
  t.equal((await app.json(`/api/v1/screens/pairing/${b.id}/approve`, { method: 'POST', headers: owner.headers, json: { name: 'x' } })).status, 409);
});

t.test('approve places the screen in a location and groups; unknown ids in the body are 400', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const now = new Date().toISOString();
  await app.deps.db
    .insertInto('locations')
    .values({
      id: '0190f5a2-7b3c-7def-8abc-000000000001',
      name: 'Main',
      address: null,
      time_zone: 'Europe/Paris',
      latitude: null,
      longitude: null,
      notes: null,
      created_at: now,
      updated_at: now,
    })
    .execute();
  await app.deps.db
    .insertInto('screen_groups')
    .values({ id: '0190f5a2-7b3c-7def-8abc-000000000002', name: 'Bar', description: null, policy: null, span: null, created_at: now, updated_at: now })
    .execute();
  const s = (await app.json('/api/v1/player/pairing-sessions', { method: 'POST', json: {} })).body.data;
  const missing = await app.json(`/api/v1/screens/pairing/${s.id}/approve`, {
    method: 'POST',
    headers: owner.headers,
    json: { name: 'x', locationId: '0190f5a2-7b3c-7def-8abc-0000000000ff' },
  });
  t.match(missing, { status: 400, body: { error: { code: 'validation_failed', details: { issues: [{ path: ['locationId'], code: 'invalid_reference' }] } } } });
  const ok = await app.json(`/api/v1/screens/pairing/${s.id}/approve`, {
    method: 'POST',
    headers: owner.headers,
    json: { name: 'Bar TV', locationId: '0190f5a2-7b3c-7def-8abc-000000000001', groupIds: ['0190F5A2-7B3C-7DEF-8ABC-000000000002'] },
  });
  t.equal(ok.status, 200);
  t.match(ok.body.data.screen, {
    locationId: '0190f5a2-7b3c-7def-8abc-000000000001',
    timeZone: 'Europe/Paris',
    groupIds: ['0190f5a2-7b3c-7def-8abc-000000000002'],
  });
});

t.test('roles: viewers and editors cannot pair; resolve is throttled per address', async (t) => {
  const app = await startApp(t);
  await signIn(app);
  const editor = await signIn(app, { role: 'editor' });
  t.equal((await app.json('/api/v1/screens/pairing/resolve', { method: 'POST', headers: editor.headers, json: { code: 'ABCDEF' } })).status, 403);
  const admin = await signIn(app, { role: 'admin' });
  let last = 0;
  for (let i = 0; i < 25; i++) {
    last = (await app.json('/api/v1/screens/pairing/resolve', { method: 'POST', headers: admin.headers, json: { code: 'ZZZZZZ' } })).status;
    if (last === 429) break;
  }
  t.equal(last, 429, 'guessing codes gets rate limited');
});

t.test('an enrollment token cannot be used twice even concurrently', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const s = (await app.json('/api/v1/player/pairing-sessions', { method: 'POST', json: {} })).body.data;
  await app.json(`/api/v1/screens/pairing/${s.id}/approve`, { method: 'POST', headers: owner.headers, json: { name: 'x' } });
  const token = (await app.json(`/api/v1/player/pairing-sessions/${s.id}`, { headers: { 'x-pairing-secret': s.pollSecret } })).body.data.enrollmentToken;
  const results = await Promise.all([1, 2, 3, 4].map(() => app.json('/api/v1/player/enroll', { method: 'POST', json: { enrollmentToken: token } })));
  t.same(results.map((r) => r.status).sort(), [201, 401, 401, 401]);
  const creds = await app.deps.db.selectFrom('device_credentials').selectAll().execute();
  t.equal(creds.length, 1, 'one credential');
});

t.test('pairScreen helper pairs a working screen', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const screen = await pairScreen(app, owner);
  const res = await app.json('/api/v1/player/liveness', { method: 'POST', headers: screen.headers });
  t.equal(res.status, 200);
});

t.test('reject is conditional on pending: after (or racing) an approve it is 409 and the screen keeps its session', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const a = (await app.json('/api/v1/player/pairing-sessions', { method: 'POST', json: {} })).body.data;
  // The reject read the session while it was pending; the approve commits first.
  t.equal((await app.json(`/api/v1/screens/pairing/${a.id}/approve`, { method: 'POST', headers: owner.headers, json: { name: 'First' } })).status, 200);
  await t.rejects(rejectPairingSession(app.deps.db, a.id, owner.user.id), { code: 'conflict' });
  const row = await app.deps.db.selectFrom('pairing_sessions').selectAll().where('id', '=', a.id).executeTakeFirstOrThrow();
  t.equal(row.status, 'approved', 'the approved session is not turned into a rejected one');
  t.ok(row.screen_id);
  const viaHttp = await app.json(`/api/v1/screens/pairing/${a.id}/reject`, { method: 'POST', headers: owner.headers });
  t.equal(viaHttp.status, 409);
  t.equal(viaHttp.body.error.code, 'conflict');
  t.equal((await app.json(`/api/v1/screens/pairing/0190f5a2-7b3c-7def-8abc-0000000000ee/reject`, { method: 'POST', headers: owner.headers })).status, 404);
  const expired = (await app.json('/api/v1/player/pairing-sessions', { method: 'POST', json: {} })).body.data;
  await app.deps.db
    .updateTable('pairing_sessions')
    .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
    .where('id', '=', expired.id)
    .execute();
  t.equal(
    (await app.json(`/api/v1/screens/pairing/${expired.id}/reject`, { method: 'POST', headers: owner.headers })).status,
    409,
    'an expired session is not rejected',
  );

  // Concurrent approve + reject: exactly one wins, and a screen exists only with an approved session.
  for (let i = 0; i < 6; i++) {
    const s = (await app.json('/api/v1/player/pairing-sessions', { method: 'POST', json: {} })).body.data;
    const [approve, reject] = await Promise.all([
      app.json(`/api/v1/screens/pairing/${s.id}/approve`, { method: 'POST', headers: owner.headers, json: { name: `race ${i}` } }),
      app.json(`/api/v1/screens/pairing/${s.id}/reject`, { method: 'POST', headers: owner.headers }),
    ]);
    t.same([approve.status, reject.status].sort(), [200, 409], `race ${i}: one wins`);
    const session = await app.deps.db.selectFrom('pairing_sessions').selectAll().where('id', '=', s.id).executeTakeFirstOrThrow();
    const screens = await app.deps.db.selectFrom('screens').select('id').where('name', '=', `race ${i}`).execute();
    if (approve.status === 200) {
      t.equal(session.status, 'approved');
      t.same(
        screens.map((x) => x.id),
        [session.screen_id],
      );
    } else {
      t.equal(session.status, 'rejected');
      t.same(screens, [], 'no screen for a rejected session');
    }
  }
});

t.test('an enrollment token expires 15 minutes after approval', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const s = (await app.json('/api/v1/player/pairing-sessions', { method: 'POST', json: {} })).body.data;
  const approved = await app.json(`/api/v1/screens/pairing/${s.id}/approve`, { method: 'POST', headers: owner.headers, json: { name: 'Late' } });
  t.equal(approved.status, 200);
  const polled = (await app.json(`/api/v1/player/pairing-sessions/${s.id}`, { headers: { 'x-pairing-secret': s.pollSecret } })).body.data;
  const ttl = Date.parse(polled.expiresAt) - Date.now();
  t.ok(ttl > 14 * 60_000 && ttl <= 15 * 60_000, 'the poll says when the token expires');
  await app.deps.db
    .updateTable('pairing_sessions')
    .set({ enrollment_expires_at: new Date(Date.now() - 1000).toISOString() })
    .where('id', '=', s.id)
    .execute();
  const late = await app.json('/api/v1/player/enroll', { method: 'POST', json: { enrollmentToken: polled.enrollmentToken } });
  t.equal(late.status, 401);
  t.equal(late.body.error.code, 'invalid_credential');
  const after = (await app.json(`/api/v1/player/pairing-sessions/${s.id}`, { headers: { 'x-pairing-secret': s.pollSecret } })).body.data;
  t.equal(after.status, 'expired');
  t.notOk('enrollmentToken' in after, 'no fresh token once expired');
  t.same(await app.deps.db.selectFrom('device_credentials').select('id').execute(), [], 'no credential issued');
});

t.test('enrolment is throttled per address: guessing tokens gets 429 with Retry-After', async (t) => {
  const app = await startApp(t);
  let res = { status: 0, headers: new Headers(), body: null as any };
  let attempts = 0;
  for (; attempts < 30; attempts++) {
    res = await app.json('/api/v1/player/enroll', { method: 'POST', json: { enrollmentToken: `guess-${attempts}` } });
    if (res.status === 429) break;
    t.equal(res.status, 401, `guess ${attempts}`);
  }
  t.equal(res.status, 429, `rate limited after ${attempts} wrong tokens`);
  t.equal(res.body.error.code, 'rate_limited');
  t.ok(Number(res.headers.get('retry-after')) > 0, 'Retry-After');
  t.ok(attempts >= 5, 'not before a few honest mistakes');
});

t.test('one address holds at most 10 live pending pairing sessions', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const made = [];
  for (let i = 0; i < MAX_PENDING_PER_ADDRESS; i++) {
    const r = await app.json('/api/v1/player/pairing-sessions', { method: 'POST', json: {} });
    t.equal(r.status, 201, `session ${i + 1}`);
    made.push(r.body.data);
  }
  const over = await app.json('/api/v1/player/pairing-sessions', { method: 'POST', json: {} });
  t.equal(over.status, 429);
  t.equal(over.body.error.code, 'rate_limited');
  t.ok(Number(over.headers.get('retry-after')) > 0);
  // A decided or expired session no longer counts.
  await app.json(`/api/v1/screens/pairing/${made[0].id}/reject`, { method: 'POST', headers: owner.headers });
  t.equal((await app.json('/api/v1/player/pairing-sessions', { method: 'POST', json: {} })).status, 201, 'room again after a reject');
  t.equal((await app.json('/api/v1/player/pairing-sessions', { method: 'POST', json: {} })).status, 429);
  await app.deps.db
    .updateTable('pairing_sessions')
    .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
    .where('id', '=', made[1].id)
    .execute();
  t.equal((await app.json('/api/v1/player/pairing-sessions', { method: 'POST', json: {} })).status, 201, 'room again after an expiry');
});

t.test('a burst of pairing sessions from one address gets exactly the cap, each with its own code', async (t) => {
  const app = await startApp(t);
  const burst = await Promise.all(
    Array.from({ length: MAX_PENDING_PER_ADDRESS + 6 }, () => app.json('/api/v1/player/pairing-sessions', { method: 'POST', json: {} })),
  );
  const statuses = burst.map((r) => r.status);
  t.equal(statuses.filter((s) => s === 201).length, MAX_PENDING_PER_ADDRESS, `${MAX_PENDING_PER_ADDRESS} started: ${statuses.join(' ')}`);
  t.equal(statuses.filter((s) => s === 429).length, 6, 'the rest refused');
  const live = await app.deps.db.selectFrom('pairing_sessions').select('code').where('status', '=', 'pending').execute();
  t.equal(live.length, MAX_PENDING_PER_ADDRESS, 'no more than the cap stored');
  t.equal(new Set(live.map((r) => r.code)).size, live.length, 'codes unique');
});

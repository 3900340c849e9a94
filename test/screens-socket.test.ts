import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { WebSocket } from 'ws';
import pino from 'pino';
import { signIn } from './helpers/auth.js';
import { startApp, type TestApp } from './helpers/harness.js';
import { pairScreen } from './helpers/screens.js';
import { bumpManifestRevision } from '../server/src/modules/screens/revision.js';
import { resolveDeviceCredential } from '../server/src/modules/screens/device-auth.js';
import { RealtimeHub, type RealtimeOptions, type SocketIdentity } from '../server/src/platform/realtime/hub.js';
import { ApiError } from '../server/src/platform/http/errors.js';

const wsUrl = (app: TestApp, path = '/api/v1/player/socket') => app.url.replace(/^http/, 'ws') + path;

interface Opened {
  ws: WebSocket;
  messages: any[];
  next(type: string, timeoutMs?: number): Promise<any>;
  closed: Promise<{ code: number; reason: string }>;
}

function open(url: string, options: { headers?: Record<string, string>; protocols?: string[] } = {}): Promise<Opened> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, options.protocols ?? [], { headers: options.headers });
    const messages: any[] = [];
    const waiters: { type: string; resolve: (m: any) => void }[] = [];
    ws.on('message', (data) => {
      const msg = JSON.parse(String(data));
      messages.push(msg);
      for (const w of [...waiters])
        if (w.type === msg.type) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(msg);
        }
    });
    const closed = new Promise<{ code: number; reason: string }>((r) => ws.on('close', (code, reason) => r({ code, reason: String(reason) })));
    ws.on('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => reject(Object.assign(new Error(`refused ${res.statusCode}`), { statusCode: res.statusCode, body })));
    });
    ws.on('error', (err) => reject(err));
    ws.on('open', () =>
      resolve({
        ws,
        messages,
        closed,
        next(type, timeoutMs = 3000) {
          const seen = messages.find((m) => m.type === type && !m.__taken);
          if (seen) {
            seen.__taken = true;
            return Promise.resolve(seen);
          }
          return new Promise((res, rej) => {
            const timer = setTimeout(() => rej(new Error(`no ${type} within ${timeoutMs} ms`)), timeoutMs);
            waiters.push({ type, resolve: (m) => (clearTimeout(timer), (m.__taken = true), res(m)) });
          });
        },
      }),
    );
  });
}

async function refused(url: string, options: Parameters<typeof open>[1] = {}): Promise<{ statusCode: number; body: any }> {
  try {
    const o = await open(url, options);
    o.ws.close();
    throw new Error('the upgrade was accepted');
  } catch (err) {
    const e = err as { statusCode?: number; body?: string };
    if (!e.statusCode) throw err;
    return { statusCode: e.statusCode, body: e.body ? JSON.parse(e.body) : null };
  }
}

t.test('socket: credential in the Authorization header or as a subprotocol; anything else refused before the upgrade', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const s = await pairScreen(app, owner);

  const native = await open(wsUrl(app), { headers: { authorization: `Bearer ${s.credential}` } });
  const hello = await native.next('hello');
  t.match(hello, { screenId: s.screenId, manifestRevision: 1 });
  native.ws.close();

  const browser = await open(wsUrl(app), { protocols: ['placard.v1', `bearer.${s.credential}`] });
  t.equal(browser.ws.protocol, 'placard.v1', 'the server picks placard.v1');
  await browser.next('hello');
  browser.ws.send(JSON.stringify({ type: 'ping' }));
  t.ok((await browser.next('pong')).serverTime, 'a client ping gets a pong');
  browser.ws.close();

  const none = await refused(wsUrl(app));
  t.equal(none.statusCode, 401);
  t.equal(none.body.error.code, 'unauthenticated');
  t.equal((await refused(wsUrl(app), { protocols: [`bearer.${s.credential}`] })).statusCode, 401, 'the bearer subprotocol needs placard.v1 beside it');
  const bad = await refused(wsUrl(app), { headers: { authorization: 'Bearer svc_device_abcdefgh.abcdefghijklmnopqrstuvwxyz' } });
  t.equal(bad.statusCode, 401);
  t.equal(bad.body.error.code, 'invalid_credential');
  t.equal((await refused(wsUrl(app), { headers: { cookie: owner.headers.cookie } })).statusCode, 401, 'a console session is not a device');
  t.equal((await refused(wsUrl(app, '/api/v1/elsewhere'), { headers: { authorization: `Bearer ${s.credential}` } })).statusCode, 404);

  const plain = await app.json('/api/v1/player/socket', { headers: s.headers });
  t.equal(plain.status, 426);
  t.equal(plain.body.error.code, 'upgrade_required');
  t.equal((await app.json('/api/v1/player/socket')).status, 401);
});

t.test('socket pushes command.pending and manifest.changed within a second', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const s = await pairScreen(app, owner);
  const other = await pairScreen(app, owner, { name: 'other' });
  const sock = await open(wsUrl(app), { headers: s.headers });
  const otherSock = await open(wsUrl(app), { headers: other.headers });
  await sock.next('hello');
  await otherSock.next('hello');

  const cmd = (await app.json(`/api/v1/screens/${s.screenId}/commands`, { method: 'POST', headers: owner.headers, json: { type: 'reload' } })).body.data;
  const pending = await sock.next('command.pending', 1000);
  t.equal(pending.commandId, cmd.id);

  await bumpManifestRevision(app.deps, [s.screenId]);
  const changed = await sock.next('manifest.changed', 1000);
  t.equal(changed.revision, 2);
  const row = await app.deps.db.selectFrom('screens').select('manifest_revision').where('id', '=', s.screenId).executeTakeFirstOrThrow();
  t.equal(row.manifest_revision, 2);
  // A console change that affects the screen pushes too.
  await app.json(`/api/v1/screens/${s.screenId}`, { method: 'PATCH', headers: owner.headers, json: { orientation: 'portrait' } });
  t.equal((await sock.next('manifest.changed', 1000)).revision, 3);
  t.notOk(
    otherSock.messages.some((m) => m.type === 'manifest.changed' || m.type === 'command.pending'),
    'channels are per screen',
  );
  const listed = (await app.json(`/api/v1/screens/${s.screenId}`, { headers: owner.headers })).body.data;
  t.equal(listed.socketConnected, true);
  sock.ws.close();
  otherSock.ws.close();
});

t.test('a heartbeat that reports a new display size pushes manifest.changed with the new revision', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const s = await pairScreen(app, owner);
  const sock = await open(wsUrl(app), { headers: s.headers });
  await sock.next('hello');
  const beat = (json: unknown) => app.json('/api/v1/player/heartbeat', { method: 'POST', headers: s.headers, json });

  const first = await beat({ display: { width: 1280, height: 720 } });
  t.equal(first.body.data.manifestRevision, 2);
  t.equal((await sock.next('manifest.changed')).revision, 2, 'pushed with the revision the reply carries');
  const same = await beat({ display: { width: 1280.2, height: 720 } });
  t.equal(same.body.data.manifestRevision, 2, 'the same size (after rounding) is no change');
  const bigger = await beat({ display: { width: 3840, height: 2160 } });
  t.equal(bigger.body.data.manifestRevision, 3);
  t.equal((await sock.next('manifest.changed')).revision, 3);
  // Messages on one socket arrive in order: once this command.pending is here, any push of
  // the heartbeats before it is here too.
  await beat({ display: { width: 3840, height: 2160 }, playerVersion: '2.0.0' });
  await app.json(`/api/v1/screens/${s.screenId}/commands`, { method: 'POST', headers: owner.headers, json: { type: 'identify' } });
  await sock.next('command.pending');
  t.same(
    sock.messages.filter((m) => m.type === 'manifest.changed').map((m) => m.revision),
    [2, 3],
    'no push when the size did not change',
  );
  sock.ws.close();
});

t.test('a disabled or revoked screen’s socket is closed at once, and cannot reopen', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const s = await pairScreen(app, owner);
  const first = await open(wsUrl(app), { headers: s.headers });
  await app.json(`/api/v1/screens/${s.screenId}/disable`, { method: 'POST', headers: owner.headers });
  t.equal((await first.closed).code, 4003);
  const whileDisabled = await refused(wsUrl(app), { headers: s.headers });
  t.equal(whileDisabled.statusCode, 403);
  t.equal(whileDisabled.body.error.code, 'screen_disabled');
  await app.json(`/api/v1/screens/${s.screenId}/enable`, { method: 'POST', headers: owner.headers });
  const second = await open(wsUrl(app), { headers: s.headers });
  await app.json(`/api/v1/screens/${s.screenId}/revoke`, { method: 'POST', headers: owner.headers });
  t.equal((await second.closed).code, 4001);
  const revoked = await refused(wsUrl(app), { headers: s.headers });
  t.equal(revoked.statusCode, 401);
  t.equal(revoked.body.error.code, 'credential_revoked');
});

t.test('the hub pings and drops sockets that stop answering', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const s = await pairScreen(app, owner);
  // A second hub over the same database with a short ping interval, on its own HTTP server.
  const hub = new RealtimeHub(pino({ level: 'silent' }), { pingIntervalMs: 100 });
  hub.setAuthenticator(async (token) => {
    const r = await resolveDeviceCredential(app.deps.db, token);
    return { screenId: r.screen.id, credentialId: r.credentialId, manifestRevision: r.screen.manifest_revision };
  });
  const server = http.createServer((_req, res) => res.end());
  server.on('upgrade', (req, socket, head) => hub.handleUpgrade(req, socket, head));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    hub.close();
    server.close();
  });
  const url = `ws://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/player/socket`;
  const live = await open(url, { headers: s.headers });
  const ping = await live.next('ping', 2000);
  t.ok(ping.serverTime, 'JSON ping for clients that cannot see protocol pings');
  t.equal(hub.count(s.screenId), 1);
  live.ws.close();
  await live.closed;
  // A client that stops answering protocol pings is terminated by the server.
  const silent = await open(url, { headers: s.headers });
  await silent.next('hello');
  (silent.ws as any)._socket.pause(); // reads nothing, so answers no pings
  t.equal(hub.count(s.screenId), 1);
  const started = Date.now();
  while (hub.count(s.screenId) > 0 && Date.now() - started < 5000) await new Promise((r) => setTimeout(r, 50));
  t.equal(hub.count(s.screenId), 0, 'the silent socket was dropped');
  silent.ws.terminate();
});

t.test('enrolling again closes the sockets opened with the superseded credential', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const s = await pairScreen(app, owner);
  const other = await pairScreen(app, owner, { name: 'bystander' });
  const old = await open(wsUrl(app), { headers: s.headers });
  const bystander = await open(wsUrl(app), { headers: other.headers });
  await old.next('hello');
  await bystander.next('hello');

  // The same screen pairs again (a replaced device): approve with its screenId, enrol.
  const session = (await app.json('/api/v1/player/pairing-sessions', { method: 'POST', json: { playerFamily: 'edge' } })).body.data;
  t.equal(
    (await app.json(`/api/v1/screens/pairing/${session.id}/approve`, { method: 'POST', headers: owner.headers, json: { name: 'Lobby', screenId: s.screenId } }))
      .status,
    200,
  );
  const token = (await app.json(`/api/v1/player/pairing-sessions/${session.id}`, { headers: { 'x-pairing-secret': session.pollSecret } })).body.data
    .enrollmentToken;
  const enrolled = await app.json('/api/v1/player/enroll', { method: 'POST', json: { enrollmentToken: token } });
  t.equal(enrolled.status, 201);
  t.equal(enrolled.body.data.screenId, s.screenId);

  const closed = await old.closed;
  t.equal(closed.code, 4001, 'the old credential’s socket is closed as revoked');
  t.match(closed.reason, /replaced/);
  const again = await refused(wsUrl(app), { headers: s.headers });
  t.equal(again.body.error.code, 'credential_revoked', 'the old credential cannot reopen it');
  const fresh = await open(wsUrl(app), { headers: { authorization: `Bearer ${enrolled.body.data.credential}` } });
  t.equal((await fresh.next('hello')).screenId, s.screenId, 'the new credential opens it');
  t.equal(app.deps.realtime!.count(s.screenId), 1);
  t.equal(app.deps.realtime!.count(other.screenId), 1, 'other screens’ sockets stay open');
  t.equal(bystander.ws.readyState, WebSocket.OPEN);
  fresh.ws.close();
  bystander.ws.close();
});

/** A hub on its own HTTP server whose credential check the test controls. */
async function hubWith(t: Test, authenticator: Parameters<RealtimeHub['setAuthenticator']>[0], options: RealtimeOptions = {}) {
  const hub = new RealtimeHub(pino({ level: 'silent' }), options);
  hub.setAuthenticator(authenticator);
  const server = http.createServer((_req, res) => res.end());
  server.on('upgrade', (req, socket, head) => hub.handleUpgrade(req, socket, head));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => {
    hub.close();
    server.close();
  });
  return { hub, url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1/player/socket` };
}

t.test('closeScreen with exceptCredentialId closes only the other credentials’ sockets', async (t) => {
  const ids: Record<string, SocketIdentity> = {
    tokA: { screenId: 'screen-1', credentialId: 'cred-old', manifestRevision: 1 },
    tokB: { screenId: 'screen-1', credentialId: 'cred-new', manifestRevision: 1 },
  };
  const { hub, url } = await hubWith(t, async (token) => ids[token] ?? Promise.reject(new ApiError('invalid_credential', 'no')));
  const a = await open(url, { headers: { authorization: 'Bearer tokA' } });
  const b = await open(url, { headers: { authorization: 'Bearer tokB' } });
  await a.next('hello');
  await b.next('hello');
  t.equal(hub.closeScreen('screen-1', 4001, 'replaced', { exceptCredentialId: 'cred-new' }), 1);
  t.equal((await a.closed).code, 4001);
  t.equal(hub.send('screen-1', { type: 'manifest.changed', revision: 2 }), 1);
  t.equal((await b.next('manifest.changed')).revision, 2, 'the current credential’s socket stays');
  b.ws.close();
});

t.test('the credential is checked again after the handshake: a revoke or disable in between closes the socket', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  for (const [action, code, errorCode] of [
    ['revoke', 4001, 'credential_revoked'],
    ['disable', 4003, 'screen_disabled'],
  ] as const) {
    const s = await pairScreen(app, owner, { name: action });
    let calls = 0;
    const { hub, url } = await hubWith(t, async (token) => {
      const call = ++calls;
      const r = await resolveDeviceCredential(app.deps.db, token);
      if (call === 1) {
        // The console acts after this check passed but before the socket is registered:
        // its closeScreen finds nothing to close.
        if (action === 'revoke')
          await app.deps.db.updateTable('device_credentials').set({ revoked_at: new Date().toISOString() }).where('id', '=', r.credentialId).execute();
        else await app.deps.db.updateTable('screens').set({ disabled_at: new Date().toISOString() }).where('id', '=', r.screen.id).execute();
        hub.closeScreen(r.screen.id, code, action);
      }
      return { screenId: r.screen.id, credentialId: r.credentialId, manifestRevision: r.screen.manifest_revision };
    });
    const sock = await open(url, { headers: s.headers });
    const closed = await sock.closed;
    t.equal(closed.code, code, `${action}: closed by the second check (${errorCode})`);
    t.notOk(
      sock.messages.some((m) => m.type === 'hello'),
      `${action}: no hello for a refused socket`,
    );
    t.equal(calls, 2, 'checked twice');
    for (let i = 0; i < 100 && hub.count(s.screenId) > 0; i++) await new Promise((r) => setTimeout(r, 50));
    t.equal(hub.count(s.screenId), 0, 'gone from the channel');
  }
});

t.test('pushes that arrive while the second check runs are held and sent after hello', async (t) => {
  let calls = 0;
  let secondCheck!: () => void;
  const reached = new Promise<void>((r) => (secondCheck = r));
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  const { hub, url } = await hubWith(t, async () => {
    if (++calls === 2) {
      secondCheck();
      await released;
    }
    return { screenId: 'screen-9', credentialId: 'c', manifestRevision: 4 };
  });
  const sock = await open(url, { headers: { authorization: 'Bearer anything' } });
  await reached;
  t.equal(hub.send('screen-9', { type: 'command.pending', commandId: 'x' }), 1, 'counted as sent');
  release();
  await sock.next('command.pending');
  t.same(
    sock.messages.map((m) => m.type),
    ['hello', 'command.pending'],
    'hello first, then the held push',
  );
  t.equal(sock.messages[0].manifestRevision, 4);
  sock.ws.close();
});

t.test('manifest.changed to many screens goes out in turn (a fixed window): a place frees when a told screen fetches or lapses', async (t) => {
  const ids = (n: number) => Array.from({ length: n }, (_, i) => `s${i + 1}`);
  const { hub, url } = await hubWith(
    t,
    async (token) =>
      token.startsWith('s') ? { screenId: token, credentialId: `c-${token}`, manifestRevision: 1 } : Promise.reject(new ApiError('invalid_credential', 'no')),
    { manifestLine: { window: 2, minWindow: 2, maxWindow: 2, waitMs: 300 } },
  );
  const sockets = new Map<string, Awaited<ReturnType<typeof open>>>();
  for (const id of ids(5)) {
    const socket = await open(url, { headers: { authorization: `Bearer ${id}` } });
    await socket.next('hello');
    sockets.set(id, socket);
  }
  hub.pushManifestChanged('nobody', 2);
  t.match(hub.manifestPushes(), { fetching: 0, waiting: 0 }, 'a screen without a socket: nothing to do');
  for (const id of ids(5)) hub.pushManifestChanged(id, 2);
  t.match(hub.manifestPushes(), { fetching: 2, waiting: 3 }, 'two told, three wait');
  t.equal((await sockets.get('s1')!.next('manifest.changed')).revision, 2);
  t.equal((await sockets.get('s2')!.next('manifest.changed')).revision, 2);
  hub.pushManifestChanged('s4', 3);
  t.match(hub.manifestPushes(), { fetching: 2, waiting: 3 }, 'told again while waiting: still one place in the line');
  hub.fetched('s5', 2);
  t.match(hub.manifestPushes(), { fetching: 2, waiting: 2 }, 's5 fetched revision 2 by itself (its heartbeat showed it): not told');
  hub.fetched('s1', 2);
  t.equal((await sockets.get('s3')!.next('manifest.changed')).revision, 2, 's1 fetched: s3 is told');
  t.match(hub.manifestPushes(), { fetching: 2, waiting: 1 });
  // Neither s2 nor s3 fetches: their places lapse and s4 is told, with the newest revision.
  t.equal((await sockets.get('s4')!.next('manifest.changed', 5000)).revision, 3, 'lapsed places: s4 told revision 3');
  t.equal(hub.manifestPushes().waiting, 0);
  hub.fetched('s4', 3);
  for (const socket of sockets.values()) socket.ws.close();
});

t.test('the manifest route frees the place of a screen told manifest.changed', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const s = await pairScreen(app, owner);
  const socket = await open(wsUrl(app), { headers: s.headers });
  await socket.next('hello');
  await bumpManifestRevision(app.deps, [s.screenId]);
  const told = await socket.next('manifest.changed');
  t.match(app.deps.realtime!.manifestPushes(), { fetching: 1, waiting: 0 }, 'told, to fetch');
  const res = await app.fetch('/api/v1/player/manifest', { headers: s.headers });
  t.equal(res.status, 200);
  t.ok(told.revision > 0);
  t.match(app.deps.realtime!.manifestPushes(), { fetching: 0, waiting: 0 }, 'fetched: its place is free');
  socket.ws.close();
});

t.test('the line’s window grows as told screens fetch while others wait', async (t) => {
  const { hub, url } = await hubWith(t, async (token) => ({ screenId: token, credentialId: `c-${token}`, manifestRevision: 1 }), {
    manifestLine: { window: 2, minWindow: 2, maxWindow: 64, waitMs: 60_000 },
  });
  const sockets = new Map<string, Awaited<ReturnType<typeof open>>>();
  for (let i = 0; i < 30; i++) {
    const socket = await open(url, { headers: { authorization: `Bearer g${i}` } });
    await socket.next('hello');
    sockets.set(`g${i}`, socket);
  }
  for (const id of sockets.keys()) hub.pushManifestChanged(id, 2);
  t.match(hub.manifestPushes(), { fetching: 2, waiting: 28, window: 2 });
  // Rounds: every screen told fetches; each fetch while others wait adds a place.
  const told = new Set<string>();
  const rounds: number[] = [];
  while (told.size < 30) {
    const now = [...sockets].filter(([id, s]) => !told.has(id) && s.messages.some((m) => m.type === 'manifest.changed')).map(([id]) => id);
    if (now.length === 0) {
      await new Promise((r) => setTimeout(r, 20));
      continue;
    }
    rounds.push(now.length);
    for (const id of now) {
      told.add(id);
      hub.fetched(id, 2);
    }
  }
  t.ok(rounds.length < 15, `fewer rounds than a fixed window of 2 needs (${rounds.join(', ')})`);
  t.ok(Math.max(...rounds) > 2, 'some round told more than the first window');
  t.ok(hub.manifestPushes().window > 2, 'the window grew');
  for (const socket of sockets.values()) socket.ws.close();
});

t.test('the line’s window halves when the event loop runs late, grows by one a fetch when on time, within bounds', async (t) => {
  const { afterTick, afterFetch } = await import('../server/src/platform/realtime/fetch-line.js');
  t.equal(afterTick(64, 40, 16), 32, 'late: halved');
  t.equal(afterTick(20, 40, 16), 16, 'not below the minimum');
  t.equal(afterTick(64, 15, 16), 64, 'a little late: as it was');
  t.equal(afterFetch(64, 2, true, 4096), 65, 'on time, screens waiting: one more place');
  t.equal(afterFetch(64, 2, false, 4096), 64, 'nobody waiting: as it was');
  t.equal(afterFetch(64, 15, true, 4096), 64, 'the loop ran late: as it was');
  t.equal(afterFetch(4096, 2, true, 4096), 4096, 'not above the maximum');
});

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { WebSocket } from 'ws';
import pino from 'pino';
import { signIn } from './helpers/auth.js';
import { startApp, type TestApp } from './helpers/harness.js';
import { pairScreen } from './helpers/screens.js';
import { bumpManifestRevision } from '../server/src/modules/screens/revision.js';
import { resolveDeviceCredential } from '../server/src/modules/screens/device-auth.js';
import { RealtimeHub } from '../server/src/platform/realtime/hub.js';

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
      for (const w of [...waiters]) if (w.type === msg.type) {
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
  t.notOk(otherSock.messages.some((m) => m.type === 'manifest.changed' || m.type === 'command.pending'), 'channels are per screen');
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
  t.same(sock.messages.filter((m) => m.type === 'manifest.changed').map((m) => m.revision), [2, 3], 'no push when the size did not change');
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

import http from 'node:http';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { IDLE_TIMEOUT_MS } from '../server/src/server.js';
import { heldRoute } from './helpers/sample-routes.js';
import { startApp, tempDataDir } from './helpers/harness.js';
import { startServerProcess } from './helpers/server-process.js';

t.test('close() lets in-flight requests finish and refuses new ones', async (t) => {
  const { route: slow, inside, release } = heldRoute('GET', '/api/v1/test-slow');
  const app = await startApp(t, { extraRoutes: [slow] });
  // Long uploads on slow links are not cut at Node's default 300 s; silent connections are.
  t.equal(app.server.server.requestTimeout, 0, 'no deadline on a whole request');
  t.equal(app.server.server.timeout, IDLE_TIMEOUT_MS, 'an idle timeout instead');
  const pending = app.json('/api/v1/test-slow');
  await inside;
  const closed = app.server.close(5_000);
  await t.rejects(app.fetch('/healthz'), 'no new connections once closing');
  release();
  const res = await pending;
  t.equal(res.status, 200);
  t.same(res.body, { data: { done: true } }, 'the in-flight request completed');
  await closed;
});

t.test('the server process stops cleanly on SIGTERM and checkpoints the WAL', async (t) => {
  const dir = tempDataDir(t);
  const server = await startServerProcess(t, dir);
  const { child, url } = server;
  const health = await fetch(`${url}/healthz`);
  t.equal(health.status, 200);
  t.match(health.headers.get('x-request-id'), /.+/);
  t.equal((await fetch(`${url}/api/v1/openapi.json`)).status, 200);
  for (const sub of ['media', 'uploads', 'backups', 'releases']) t.ok(existsSync(path.join(dir, sub)), `${sub}/ made`);

  child.kill('SIGTERM');
  t.same(await server.exited, { code: 0, signal: null }, 'exit 0');
  const out = server.output();
  t.match(out, /stopped cleanly/);
  const wal = path.join(dir, 'placard.db-wal');
  t.ok(!existsSync(wal) || statSync(wal).size === 0, 'the WAL is folded into placard.db');
  t.ok(statSync(path.join(dir, 'placard.db')).size > 0);
  const lines = out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { msg: string; reqId?: string; path?: string });
  t.ok(
    lines.some((l) => l.msg === 'request' && l.path === '/api/v1/openapi.json' && l.reqId),
    'access log lines carry the request id',
  );
  t.notOk(
    lines.some((l) => l.path === '/healthz'),
    'health polls stay out of the info log',
  );
});

t.test('SIGINT lets a request still being received finish before the process exits', async (t) => {
  const server = await startServerProcess(t, tempDataDir(t));
  // A sign-in whose body is still arriving when the signal comes. `Expect: 100-continue`
  // makes the server say when it has taken the request in, so no timing is guessed.
  const req = http.request(`${server.url}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked', expect: '100-continue' },
  });
  const answered = new Promise<{ status: number; body: string }>((resolve, reject) => {
    req.on('response', (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject);
  });
  const accepted = new Promise<void>((resolve) => req.once('continue', resolve));
  req.flushHeaders();
  await accepted;
  req.write('{"email":"someone@example.com",');
  server.child.kill('SIGINT');
  await new Promise((r) => setTimeout(r, 300));
  t.equal(server.child.exitCode, null, 'the process waits for the request');
  req.end('"password":"not the right one"}');
  const res = await answered;
  t.equal(res.status, 401, 'the in-flight request got its answer');
  t.equal(JSON.parse(res.body).error.code, 'invalid_credential');
  t.same(await server.exited, { code: 0, signal: null }, 'then the process exits 0');
  t.match(server.output(), /"signal":"SIGINT"/);
  t.match(server.output(), /stopped cleanly/);
});

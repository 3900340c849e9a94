import t from 'tap';
import { tempDataDir } from './helpers/harness.js';
import { startServerProcess } from './helpers/server-process.js';

/**
 * The access line of every request (platform/http/middleware.ts): written by the process
 * logger with the request id first, the same JSON a per-request child logger wrote before
 * the child became lazy (issue 24); /healthz and /readyz only at debug.
 */
t.test('the access line: its fields in order, the request id the caller sent, health checks quiet', async (t) => {
  const server = await startServerProcess(t, tempDataDir(t));
  const res = await fetch(`${server.url}/api/v1/nope?secret=1`, { headers: { 'x-request-id': 'log-req-1' } });
  t.equal(res.status, 404);
  await (await fetch(`${server.url}/healthz`, { headers: { 'x-request-id': 'log-req-2' } })).arrayBuffer();
  const lines = () =>
    server
      .output()
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  const end = Date.now() + 10_000;
  let line: Record<string, unknown> | undefined;
  while (!(line = lines().find((l) => l.msg === 'request' && l.reqId === 'log-req-1')) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  t.ok(line, 'the access line is written');
  t.same(Object.keys(line ?? {}), ['level', 'time', 'app', 'reqId', 'method', 'path', 'status', 'ms', 'msg']);
  t.match(line, { level: 30, app: 'placard', reqId: 'log-req-1', method: 'GET', path: '/api/v1/nope', status: 404 });
  t.type(line?.ms, 'number');
  t.notOk(
    lines().some((l) => l.reqId === 'log-req-2'),
    '/healthz is logged at debug only',
  );
  server.child.kill('SIGTERM');
  await server.exited;
});

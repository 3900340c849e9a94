import t from 'tap';
import { tempDataDir } from './helpers/harness.js';
import { startServerProcess, type ServerProcess } from './helpers/server-process.js';

// The last-resort handlers of main.ts (platform/faults.ts), in the real process: a fault
// is logged with its request id and the server stays up and ready, unless the process can
// no longer work (a wedged database) or faults come in a storm; then it stops with status 1.

const SCRIPT = { script: 'test/helpers/fault-server.ts' };

interface LogLine {
  level: number;
  msg: string;
  reqId?: string;
  fault?: string;
  outsideRequest?: boolean;
  err?: { message: string };
}

function logLines(server: ServerProcess): LogLine[] {
  return server
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogLine);
}

async function until<T>(what: string, probe: () => T | undefined, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const got = probe();
    if (got !== undefined) return got;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const alive = (s: ServerProcess) => s.child.exitCode === null && s.child.signalCode === null;

t.test('an error event nobody listens to, inside a request: logged with its request id, the connection cut, the server stays ready', async (t) => {
  const server = await startServerProcess(t, tempDataDir(t), { FAULT_GRACE_MS: '300' }, SCRIPT);
  const started = Date.now();
  const answer = await fetch(`${server.url}/api/v1/test-faults/stream-error`, { headers: { 'x-request-id': 'fault-req-1' } }).then(
    (r) => `status ${r.status}`,
    (err: Error) => `failed: ${err.message}`,
  );
  t.match(answer, /^failed/, 'the request the fault left unanswered has its connection closed');
  t.ok(Date.now() - started < 10_000, 'after the grace period, not the idle timeout');
  const line = await until('the fault log line', () => logLines(server).find((l) => l.fault === 'uncaughtException'));
  t.equal(line.reqId, 'fault-req-1', 'the log names the request');
  t.equal(line.level, 50, 'at error level');
  t.match(line.err?.message, /injected: an error event/);
  await until('the self-check', () => logLines(server).find((l) => /self-check after the fault passed/.test(l.msg)));
  t.ok(alive(server), 'the process is alive');
  t.equal((await fetch(`${server.url}/readyz`)).status, 200, 'and ready');
  server.child.kill('SIGTERM');
  t.same(await server.exited, { code: 0, signal: null });
});

t.test('an unhandled rejection is logged with the request id; the answer and the server are unharmed', async (t) => {
  const server = await startServerProcess(t, tempDataDir(t), {}, SCRIPT);
  const res = await fetch(`${server.url}/api/v1/test-faults/rejection`, { headers: { 'x-request-id': 'fault-req-2' } });
  t.equal(res.status, 200);
  const line = await until('the fault log line', () => logLines(server).find((l) => l.fault === 'unhandledRejection'));
  t.equal(line.reqId, 'fault-req-2');
  t.match(line.err?.message, /injected: a rejection/);
  t.equal((await fetch(`${server.url}/readyz`)).status, 200);
  t.ok(alive(server));
  server.child.kill('SIGTERM');
  t.same(await server.exited, { code: 0, signal: null });
});

t.test('a fault the process cannot outlive (the database wedged): the self-check fails and it stops with status 1', async (t) => {
  const server = await startServerProcess(t, tempDataDir(t), { FAULT_CHECK_MS: '500', PLACARD_SHUTDOWN_TIMEOUT_MS: '500' }, SCRIPT);
  t.equal((await fetch(`${server.url}/api/v1/test-faults/wedge`, { headers: { 'x-request-id': 'fault-req-3' } })).status, 200);
  const exit = await Promise.race([server.exited, new Promise((r) => setTimeout(() => r('still running'), 20_000))]);
  t.same(exit, { code: 1, signal: null }, 'exits 1 so systemd restarts it');
  const lines = logLines(server);
  const fault = lines.find((l) => l.fault === 'uncaughtException');
  t.ok(fault, 'the fault is logged');
  t.equal(fault?.reqId, 'fault-req-3', 'a timer set in a request keeps its request id, even after the answer');
  t.ok(
    lines.some((l) => l.level === 60 && /stopping after a fault/.test(l.msg)),
    'says why it stops',
  );
});

t.test('a storm of faults stops the process', async (t) => {
  const server = await startServerProcess(t, tempDataDir(t), { FAULT_MAX: '3' }, SCRIPT);
  for (let i = 0; i < 3; i++) t.equal((await fetch(`${server.url}/api/v1/test-faults/rejection`)).status, 200);
  await until('three faults logged', () => (logLines(server).filter((l) => l.fault === 'unhandledRejection').length >= 3 ? true : undefined));
  t.ok(alive(server), 'three faults in a minute are survived');
  await fetch(`${server.url}/api/v1/test-faults/rejection`).catch(() => null);
  const exit = await Promise.race([server.exited, new Promise((r) => setTimeout(() => r('still running'), 20_000))]);
  t.same(exit, { code: 1, signal: null }, 'the fourth stops it');
  t.ok(logLines(server).some((l) => /4 faults within 60 s/.test(JSON.stringify(l))));
});

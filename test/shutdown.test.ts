import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { once } from 'node:events';
import t from 'tap';
import { z } from 'zod';
import { defineRoute, ok } from '../server/src/platform/http/route.js';
import { startApp, tempDataDir } from './helpers/harness.js';

t.test('close() lets in-flight requests finish and refuses new ones', async (t) => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  let entered!: () => void;
  const inside = new Promise<void>((r) => (entered = r));
  const slow = defineRoute({
    method: 'GET',
    path: '/api/v1/test-slow',
    auth: 'public',
    tags: ['Test'],
    summary: 'waits for the test',
    responses: { 200: { description: 'done', data: z.object({ finished: z.boolean() }) } },
    handler: async () => {
      entered();
      await gate;
      return ok({ finished: true });
    },
  });
  const app = await startApp(t, { extraRoutes: [slow] });
  const pending = app.json('/api/v1/test-slow');
  await inside;
  const closed = app.server.close(5_000);
  await t.rejects(app.fetch('/healthz'), 'no new connections once closing');
  release();
  const res = await pending;
  t.equal(res.status, 200);
  t.same(res.body, { data: { finished: true } }, 'the in-flight request completed');
  await closed;
});

t.test('the server process stops cleanly on SIGTERM and checkpoints the WAL', async (t) => {
  const dir = tempDataDir(t);
  const child = spawn(process.execPath, ['--import=tsx', 'server/src/main.ts'], {
    env: { ...process.env, PLACARD_PORT: '0', PLACARD_HOST: '127.0.0.1', PLACARD_DATA_DIR: dir, PLACARD_LOG_LEVEL: 'info' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line: ${out}`)), 30_000);
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const m = /"url":"(http:\/\/[^"]+)"/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', () => reject(new Error(`exited early: ${out}`)));
  });
  const health = await fetch(`${url}/healthz`);
  t.equal(health.status, 200);
  t.match(health.headers.get('x-request-id'), /.+/);
  t.equal((await fetch(`${url}/api/v1/openapi.json`)).status, 200);
  for (const sub of ['media', 'uploads', 'backups', 'releases']) t.ok(existsSync(path.join(dir, sub)), `${sub}/ made`);

  child.kill('SIGTERM');
  const [code] = await once(child, 'exit');
  t.equal(code, 0, 'exit 0');
  t.match(out, /stopped cleanly/);
  const wal = path.join(dir, 'placard.db-wal');
  t.ok(!existsSync(wal) || statSync(wal).size === 0, 'the WAL is folded into placard.db');
  t.ok(statSync(path.join(dir, 'placard.db')).size > 0);
  const lines = out.trim().split('\n').map((l) => JSON.parse(l) as { msg: string; reqId?: string; path?: string });
  t.ok(lines.some((l) => l.msg === 'request' && l.path === '/api/v1/openapi.json' && l.reqId), 'access log lines carry the request id');
  t.notOk(lines.some((l) => l.path === '/healthz'), 'health polls stay out of the info log');
});

import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import t from 'tap';
import { cookieHeader, TEST_PASSWORD } from './helpers/auth.js';
import { mediaDigest, writeMedia } from './helpers/data-dir.js';
import { tempDataDir } from './helpers/harness.js';
import { startServerProcess } from './helpers/server-process.js';

// The SIGKILL evidence of issue 8, in its own file (two server processes take a while).

t.test('SIGKILL mid-backup under a write load: live data intact, the unfinished backup discarded', async (t) => {
  const dataDir = tempDataDir(t);
  // Enough media that archiving takes a while: the kill lands while the tar is being written.
  writeMedia(dataDir, 160, 1024 * 1024);
  const mediaBefore = await mediaDigest(dataDir);
  const server = await startServerProcess(t, dataDir);
  const call = async (p: string, init: RequestInit & { json?: unknown } = {}) => {
    const { json, ...rest } = init;
    const res = await fetch(server.url + p, {
      ...rest,
      headers: { ...(json !== undefined ? { 'content-type': 'application/json' } : {}), ...(rest.headers as Record<string, string>) },
      ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
    });
    const text = await res.text();
    return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : null };
  };
  const setup = await call('/api/v1/auth/setup', { method: 'POST', json: { email: 'owner@example.test', password: TEST_PASSWORD, displayName: 'Owner' } });
  t.equal(setup.status, 201);
  const headers = { cookie: cookieHeader(setup), 'x-csrf-token': setup.body.data.csrfToken };

  // Write load: settings edits, each acknowledged one remembered.
  let acknowledged = 0;
  let stop = false;
  const load = (async () => {
    for (let i = 1; !stop; i++) {
      try {
        const res = await call('/api/v1/settings', { method: 'PATCH', headers, json: { serverName: `write ${i}` } });
        if (res.status === 200) acknowledged = res.body.data.revision;
      } catch {
        return; // the server died
      }
    }
  })();
  const started = await call('/api/v1/system/maintenance/backup', { method: 'POST', headers, json: {} });
  t.equal(started.status, 202);
  const backups = path.join(dataDir, 'backups');
  // Mid-backup means: the archive is on disk and has grown past the database into the media
  // (16 MiB of the ~160 MiB). Watched on disk, not through the progress the server reports.
  const archiveBytes = () => {
    const f = readdirSync(backups).find((n) => n.startsWith('.partial-') && n.endsWith('.tar'));
    return f ? (statSync(path.join(backups, f), { throwIfNoEntry: false })?.size ?? 0) : 0;
  };
  let killedAt = 0;
  for (let i = 0; i < 20_000 && !killedAt; i++) {
    const size = archiveBytes();
    if (size > 16 * 1024 * 1024) {
      server.child.kill('SIGKILL');
      killedAt = size;
      break;
    }
    if (readdirSync(backups).some((n) => n.startsWith('placard-backup-'))) break; // finished first: the test failed to interrupt it
    await new Promise((r) => setTimeout(r, 2));
  }
  t.ok(killedAt > 0, `killed while the archive was being written (${Math.round(killedAt / 1048576)} MiB of it on disk)`);
  await server.exited;
  stop = true;
  await load;
  t.ok(acknowledged > 0, `${acknowledged} acknowledged writes before the kill`);
  t.ok(
    readdirSync(backups).some((f) => f.startsWith('.partial-')),
    'the kill left an unfinished backup',
  );
  t.same(
    readdirSync(backups).filter((f) => f.startsWith('placard-backup-')),
    [],
    'and no finished one',
  );
  t.same(await mediaDigest(dataDir), mediaBefore, 'live media identical by sha256 after the kill');

  const again = await startServerProcess(t, dataDir);
  const login = await fetch(`${again.url}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'owner@example.test', password: TEST_PASSWORD }),
  });
  t.equal(login.status, 200);
  const body = (await login.json()) as { data: { csrfToken: string } };
  const h = { cookie: cookieHeader({ headers: login.headers }), 'x-csrf-token': body.data.csrfToken };
  const settings = (await (await fetch(`${again.url}/api/v1/settings`, { headers: h })).json()) as { data: { revision: number; serverName: string } };
  t.ok(settings.data.revision >= acknowledged, `every acknowledged write survived (revision ${settings.data.revision} >= ${acknowledged})`);
  t.match(settings.data.serverName, /^write \d+$/);
  const list = (await (await fetch(`${again.url}/api/v1/system/backups`, { headers: h })).json()) as { data: { items: unknown[] } };
  t.same(list.data.items, [], 'no backup is listed');
  for (let i = 0; i < 100 && readdirSync(backups).some((f) => f.startsWith('.partial-')); i++) await new Promise((r) => setTimeout(r, 20));
  t.same(
    readdirSync(backups).filter((f) => f.startsWith('.partial-')),
    [],
    'the unfinished backup was discarded at start (its writer is gone)',
  );
  const ready = await fetch(`${again.url}/readyz`);
  t.equal(ready.status, 200, `ready after the restart: ${await ready.text()}`);
  again.child.kill('SIGTERM');
  await again.exited;
  const db = new SQLite(path.join(dataDir, 'placard.db'), { readonly: true });
  t.equal(db.pragma('integrity_check', { simple: true }), 'ok', 'the live database is intact');
  db.close();
  t.same(await mediaDigest(dataDir), mediaBefore, 'and the media store');
});

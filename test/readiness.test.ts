import { spawn } from 'node:child_process';
import { existsSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import sharp from 'sharp';
import t from 'tap';
import { loadConfig } from '../server/src/config.js';
import { resolveMediaTools } from '../server/src/platform/media/tools.js';
import { signIn } from './helpers/auth.js';
import { startApp, TEST_POOL_SIZE, tempDataDir } from './helpers/harness.js';
import { sha256, TUS, tusUpload } from './helpers/media.js';
import { startServerProcess } from './helpers/server-process.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function cli(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import=tsx', path.join(ROOT, 'server/src/cli.ts'), ...args], { cwd: ROOT, env: { ...process.env, ...env } });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

t.test('/readyz is 200 when the database and media tools answer', async (t) => {
  const app = await startApp(t);
  const res = await app.json('/readyz');
  t.equal(res.status, 200, JSON.stringify(res.body));
  t.equal(res.body.data.status, 'ready');
  for (const name of ['database', 'sharp', 'ffmpeg', 'ffprobe', 'restore', 'mediaStore', 'uploads', 'diskSpace'])
    t.equal(res.body.data.checks[name].ok, true, name);
  t.match(res.body.data.checks.ffmpeg.detail, /ffmpeg version/);
});

t.test('/readyz is 503 not_ready naming ffmpeg when PLACARD_FFMPEG points nowhere', async (t) => {
  const app = await startApp(t, { config: { ffmpegPath: '/nonexistent' } });
  const res = await app.json('/readyz');
  t.equal(res.status, 503);
  t.equal(res.body.error.code, 'not_ready');
  t.match(res.body.error.message, /ffmpeg/);
  t.notMatch(res.body.error.message, /ffprobe/, 'only what is missing is named');
  t.equal(res.body.error.details.checks.ffmpeg.ok, false);
  t.equal(res.body.error.details.checks.database.ok, true);
  const health = await app.json('/healthz');
  t.equal(health.status, 200, 'liveness does not depend on the tools');
});

t.test('/readyz is 503 while a restore is in progress, and 200 after', async (t) => {
  const app = await startApp(t);
  app.deps.state.restoreInProgress = true;
  let res = await app.json('/readyz');
  t.equal(res.status, 503);
  t.match(res.body.error.message, /restore/);
  app.deps.state.restoreInProgress = false;
  res = await app.json('/readyz');
  t.equal(res.status, 200);
});

t.test('/readyz is 503 when the database does not answer', async (t) => {
  const app = await startApp(t);
  await app.database.db.destroy();
  const res = await app.json('/readyz');
  t.equal(res.status, 503);
  t.equal(res.body.error.details.checks.database.ok, false);
});

t.test('the real server started with PLACARD_FFMPEG=/nonexistent answers /readyz 503', async (t) => {
  const server = await startServerProcess(t, tempDataDir(t), { PLACARD_FFMPEG: '/nonexistent', PLACARD_FFPROBE: '/nonexistent/ffprobe' });
  const res = await fetch(`${server.url}/readyz`);
  t.equal(res.status, 503);
  const body = (await res.json()) as { error: { code: string; message: string; details: { checks: Record<string, { ok: boolean; detail: string }> } } };
  t.equal(body.error.code, 'not_ready');
  t.match(body.error.message, /ffmpeg/);
  t.match(body.error.message, /ffprobe/);
  t.match(body.error.details.checks.ffmpeg!.detail, /\/nonexistent/, 'the configured path is used as given, not replaced');
  t.equal(body.error.details.checks.sharp!.ok, true);
  t.equal((await fetch(`${server.url}/healthz`)).status, 200);
  server.child.kill('SIGTERM');
  t.same(await server.exited, { code: 0, signal: null });
});

t.test('ffmpeg resolution order: the setting, then the npm packages, then PATH', async (t) => {
  t.same(resolveMediaTools({ ffmpegPath: '/opt/x/ffmpeg', ffprobePath: '/opt/x/ffprobe' }), {
    ffmpeg: { path: '/opt/x/ffmpeg', source: 'env' },
    ffprobe: { path: '/opt/x/ffprobe', source: 'env' },
  });
  // A binary on PATH loses to the one shipped in an npm package.
  const bin = tempDataDir(t);
  for (const name of ['ffmpeg', 'ffprobe']) writeFileSync(path.join(bin, name), '#!/bin/sh\n', { mode: 0o755 });
  const savedPath = process.env.PATH;
  t.teardown(() => void (process.env.PATH = savedPath));
  process.env.PATH = `${bin}${path.delimiter}${savedPath}`;
  const resolved = resolveMediaTools({ ffmpegPath: null, ffprobePath: null });
  t.not(resolved.ffmpeg!.path, path.join(bin, 'ffmpeg'));
  t.match(resolved.ffmpeg!.source, /^(ffmpeg-static|npm-installer)$/);
  t.equal(resolved.ffprobe!.source, 'npm-installer');
});

// Storage readiness (issue 15): the media store and uploads directories take a new file,
// the disk has free space above the floor; and what needs them answers 503, never 500.

const pngBytes = () =>
  sharp({ create: { width: 64, height: 48, channels: 3, background: '#3366aa' } })
    .png()
    .toBuffer();

/** Swaps a directory of the data dir for a plain file; answers the function that puts it back. */
function replaceDirByFile(dataDir: string, name: string): () => void {
  const dir = path.join(dataDir, name);
  const aside = `${dir}.aside`;
  if (existsSync(dir)) renameSync(dir, aside);
  writeFileSync(dir, 'not a directory');
  return () => {
    rmSync(dir, { force: true });
    if (existsSync(aside)) renameSync(aside, dir);
  };
}

t.test('/readyz checks media/, uploads/ and free space, and says which is wrong', async (t) => {
  const app = await startApp(t);
  const res = await app.json('/readyz');
  t.equal(res.status, 200);
  for (const name of ['mediaStore', 'uploads', 'diskSpace']) t.equal(res.body.data.checks[name].ok, true, `${name}: ${res.body.data.checks[name].detail}`);
  t.match(res.body.data.checks.diskSpace.detail, /MiB free \(floor 256 MiB\)/);
  t.same(
    readdirSync(path.join(app.dataDir, 'media')).filter((n) => n.startsWith('.readiness-probe')),
    [],
    'the probe leaves no file behind',
  );
});

t.test('media/ replaced by a file: /readyz 503 naming the media store, and upload complete answers 503 not_ready (not 500), keeping the upload', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const bytes = await pngBytes();
  const id = await tusUpload(app, owner, bytes, { filename: 'blue.png' });
  const restoreDir = replaceDirByFile(app.dataDir, 'media');

  const ready = await app.json('/readyz');
  t.equal(ready.status, 503);
  t.equal(ready.body.error.code, 'not_ready');
  t.match(ready.body.error.message, /mediaStore \(media\/ is not writable: (ENOTDIR|EEXIST)/);
  t.notMatch(ready.body.error.message, /uploads|diskSpace|database/, 'only what is wrong is named');
  t.equal(ready.body.error.details.checks.database.ok, true);
  t.notMatch(JSON.stringify(ready.body), new RegExp(app.dataDir.replace(/[/.]/g, '\\$&')), 'the public answer does not show the data directory');

  const complete = await app.json(`/api/v1/uploads/${id}/complete`, { method: 'POST', headers: owner.headers, json: {} });
  t.equal(complete.status, 503, JSON.stringify(complete.body));
  t.equal(complete.body.error.code, 'not_ready');
  t.match(complete.body.error.message, /cannot use its data directory/);
  t.ok(existsSync(path.join(app.dataDir, 'uploads', `${id}.part`)), 'the upload is kept');
  const assets = await app.json('/api/v1/assets', { headers: owner.headers });
  t.same(assets.body.data.items, [], 'no asset half made');

  restoreDir();
  await new Promise((r) => setTimeout(r, 5_100)); // the storage checks are cached for 5 s
  t.equal((await app.json('/readyz')).status, 200, 'ready again once the directory is back');
  const again = await app.json(`/api/v1/uploads/${id}/complete`, { method: 'POST', headers: owner.headers, json: {} });
  t.equal(again.status, 201, 'and the kept upload completes');
  t.equal(again.body.data.sha256, sha256(bytes));
});

t.test('uploads/ replaced by a file: /readyz 503 naming uploads; creating and sending an upload answer 503, and the upload survives', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const created = await app.fetch('/api/v1/uploads', { method: 'POST', headers: { ...owner.headers, ...TUS, 'upload-length': '10' } });
  t.equal(created.status, 201);
  const location = created.headers.get('location')!;
  const restoreDir = replaceDirByFile(app.dataDir, 'uploads');

  const ready = await app.json('/readyz');
  t.equal(ready.status, 503);
  t.equal(ready.body.error.details.checks.uploads.ok, false);
  t.equal(ready.body.error.details.checks.mediaStore.ok, true);

  const create = await app.json('/api/v1/uploads', { method: 'POST', headers: { ...owner.headers, ...TUS, 'upload-length': '10' } });
  t.equal(create.status, 503, JSON.stringify(create.body));
  t.equal(create.body.error.code, 'not_ready');
  const patch = await app.json(location, {
    method: 'PATCH',
    headers: { ...owner.headers, ...TUS, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
    body: Buffer.from('0123456789'),
  });
  t.equal(patch.status, 503, JSON.stringify(patch.body));
  const rows = await app.deps.db.selectFrom('uploads').select('id').execute();
  t.equal(rows.length, 1, 'the upload is not thrown away for an unusable directory');

  restoreDir();
  const resumed = await app.fetch(location, {
    method: 'PATCH',
    headers: { ...owner.headers, ...TUS, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
    body: Buffer.from('0123456789'),
  });
  t.equal(resumed.status, 204, 'it resumes once the directory is back');
});

t.test('free space below PLACARD_MIN_FREE_BYTES: /readyz 503 naming diskSpace; 0 turns the check off', async (t) => {
  const low = await startApp(t, { config: { minFreeBytes: 2 ** 50 } });
  const res = await low.json('/readyz');
  t.equal(res.status, 503);
  t.match(res.body.error.message, /diskSpace \(\d+ MiB free, below the floor of \d+ MiB \(PLACARD_MIN_FREE_BYTES\)\)/);
  t.equal(res.body.error.details.checks.mediaStore.ok, true);
  const off = await startApp(t, { config: { minFreeBytes: 0 } });
  t.equal((await off.json('/readyz')).status, 200);
  t.equal(loadConfig({}).minFreeBytes, 256 * 1024 * 1024, 'the default floor is 256 MiB');
  t.equal(loadConfig({ PLACARD_MIN_FREE_BYTES: '0' }).minFreeBytes, 0);
  t.throws(() => loadConfig({ PLACARD_MIN_FREE_BYTES: '-1' }), /PLACARD_MIN_FREE_BYTES/);
});

t.test('storage checks are cached briefly: a break shows within seconds, not on every poll', async (t) => {
  const app = await startApp(t);
  t.equal((await app.json('/readyz')).status, 200);
  replaceDirByFile(app.dataDir, 'media');
  t.equal((await app.json('/readyz')).status, 200, 'the cached answer');
  await new Promise((r) => setTimeout(r, 5_100));
  t.equal((await app.json('/readyz')).status, 503, 'then the fresh one');
});

t.test('/readyz answers 503 within seconds when the database is held, instead of hanging', async (t) => {
  const app = await startApp(t);
  // SQLite has one connection; PostgreSQL's pool is held whole.
  const pool = app.database.pool;
  const holds = pool ? TEST_POOL_SIZE : 1;
  const releases: (() => void)[] = [];
  const held = Array.from({ length: holds }, () => app.deps.db.connection().execute(() => new Promise<void>((r) => releases.push(r))));
  while (releases.length < holds) await new Promise((r) => setTimeout(r, 10));
  const started = Date.now();
  const res = await app.json('/readyz');
  const took = Date.now() - started;
  for (const release of releases) release();
  await Promise.all(held);
  t.equal(res.status, 503);
  t.match(res.body.error.details.checks.database.detail, /did not answer within 2000 ms/);
  if (pool)
    t.match(
      res.body.error.details.checks.database.detail,
      new RegExp(`PostgreSQL pool: ${TEST_POOL_SIZE} of ${TEST_POOL_SIZE} connections busy, [1-9]\\d* waiting`),
      'the pool says why (the ping waits, perhaps with others)',
    );
  t.ok(took < 4_000, `answered in ${took} ms`);
  const after = await app.json('/readyz');
  t.equal(after.status, 200, 'ready again once released');
  if (pool) t.match(after.body.data.checks.database.detail, /^answers \(PostgreSQL pool: \d+ of \d+ connections busy, 0 waiting\)$/);
});

t.test(
  'the real server short of disk space: /readyz 503, and placard wait-ready lets the service start with a warning; another failing check still fails it',
  async (t) => {
    const dataDir = tempDataDir(t);
    const server = await startServerProcess(t, dataDir, { PLACARD_MIN_FREE_BYTES: String(2 ** 50) });
    t.equal((await fetch(`${server.url}/readyz`)).status, 503);
    const port = new URL(server.url).port;
    const waited = await cli(['wait-ready', '--timeout', '20'], { PLACARD_DATA_DIR: dataDir, PLACARD_PORT: port, PLACARD_HOST: '127.0.0.1' });
    t.equal(waited.code, 0, waited.err);
    t.match(waited.err, /short of disk space: Not ready: diskSpace/);
    server.child.kill('SIGTERM');
    await server.exited;

    const other = await startServerProcess(t, tempDataDir(t), { PLACARD_MIN_FREE_BYTES: String(2 ** 50), PLACARD_FFMPEG: '/nonexistent' });
    const failed = await cli(['wait-ready', '--timeout', '2'], { PLACARD_PORT: new URL(other.url).port, PLACARD_HOST: '127.0.0.1' });
    t.equal(failed.code, 1, 'a missing ffmpeg beside low disk space still fails the start');
    t.match(failed.err, /was not ready within 2s/);
    other.child.kill('SIGTERM');
    await other.exited;
  },
);

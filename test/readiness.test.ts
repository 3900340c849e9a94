import { writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { resolveMediaTools } from '../server/src/platform/media/tools.js';
import { startApp, tempDataDir } from './helpers/harness.js';
import { startServerProcess } from './helpers/server-process.js';

t.test('/readyz is 200 when the database and media tools answer', async (t) => {
  const app = await startApp(t);
  const res = await app.json('/readyz');
  t.equal(res.status, 200, JSON.stringify(res.body));
  t.equal(res.body.data.status, 'ready');
  for (const name of ['database', 'sharp', 'ffmpeg', 'ffprobe', 'restore']) t.equal(res.body.data.checks[name].ok, true, name);
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

import t from 'tap';
import { startApp } from './helpers/harness.js';

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

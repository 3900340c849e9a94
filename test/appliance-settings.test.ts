import { execFileSync } from 'node:child_process';
import t from 'tap';
import { getSettings, DEFAULT_SETTINGS } from '../server/src/modules/system/settings.js';
import { registerStatusContributor } from '../server/src/modules/system/hooks.js';
import { signIn } from './helpers/auth.js';
import { TEST_DATABASE_URL } from './helpers/postgres.js';
import { startApp } from './helpers/harness.js';

t.test('settings: defaults, patch with If-Match, validation, roles', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const viewer = await signIn(app, { role: 'viewer' });

  const first = await app.json('/api/v1/settings', { headers: viewer.headers });
  t.equal(first.status, 200);
  t.equal(first.body.data.serverName, 'Placard');
  t.equal(first.body.data.revision, 0);
  t.equal(first.headers.get('etag'), '"0"');
  t.same(first.body.data.backups, DEFAULT_SETTINGS.backups);

  const denied = await app.json('/api/v1/settings', { method: 'PATCH', headers: viewer.headers, json: { serverName: 'x' } });
  t.equal(denied.status, 403, 'a viewer cannot change settings');

  const patched = await app.json('/api/v1/settings', {
    method: 'PATCH',
    headers: { ...owner.headers, 'if-match': '"0"' },
    json: { serverName: '  Lobby screens ', timeZone: 'Europe/Paris', uploads: { maxSizeBytes: 10 * 1024 * 1024 }, publicUrl: 'http://signage.local:8080/' },
  });
  t.equal(patched.status, 200, JSON.stringify(patched.body));
  t.equal(patched.body.data.revision, 1);
  t.equal(patched.body.data.serverName, 'Lobby screens', 'trimmed');
  t.equal(patched.body.data.publicUrl, 'http://signage.local:8080', 'trailing slash dropped');
  t.equal(patched.body.data.uploads.maxSizeBytes, 10 * 1024 * 1024);
  t.equal(patched.body.data.uploads.abandonAfterHours, DEFAULT_SETTINGS.uploads.abandonAfterHours, 'sections merge key by key');

  const stale = await app.json('/api/v1/settings', { method: 'PATCH', headers: { ...owner.headers, 'if-match': '"0"' }, json: { serverName: 'Stale' } });
  t.equal(stale.status, 412);
  t.equal(stale.body.error.code, 'version_conflict');
  t.equal((await getSettings(app.deps.db)).serverName, 'Lobby screens', 'a stale edit changes nothing');

  for (const [label, body] of [
    ['unknown key', { colour: 'red' }],
    ['unknown nested key', { uploads: { maxSize: 1 } }],
    ['bad time zone', { timeZone: 'Mars/Olympus' }],
    ['bad url', { publicUrl: 'ftp://x' }],
    ['too small upload limit', { uploads: { maxSizeBytes: 10 } }],
    ['wrong type', { network: { allowPrivateFetchTargets: 'yes' } }],
    ['empty name', { serverName: '   ' }],
  ] as const) {
    const res = await app.json('/api/v1/settings', { method: 'PATCH', headers: owner.headers, json: body });
    t.equal(res.status, 400, label);
    t.equal(res.body.error.code, 'validation_failed', label);
  }
  const badIfMatch = await app.json('/api/v1/settings', { method: 'PATCH', headers: { ...owner.headers, 'if-match': 'banana' }, json: {} });
  t.equal(badIfMatch.status, 400);

  const noIfMatch = await app.json('/api/v1/settings', { method: 'PATCH', headers: owner.headers, json: { approvals: { required: true } } });
  t.equal(noIfMatch.status, 200, 'If-Match is optional');
  t.equal(noIfMatch.body.data.revision, 2);
  const s = await getSettings(app.deps.db);
  t.equal(s.approvals.required, true, 'getSettings reads what PATCH wrote');
  t.equal(s.timeZone, 'Europe/Paris');

  const identity = await app.json('/api/v1/system/identity');
  t.equal(identity.body.data.name, 'Lobby screens', 'identity shows the server name');
  t.equal(identity.body.data.publicUrl, 'http://signage.local:8080', 'and the public URL setting');
});

t.test('a stored settings document with a bad or unknown field still reads whole', async (t) => {
  const app = await startApp(t);
  await app.deps.db
    .insertInto('settings')
    .values({
      id: 1,
      data: JSON.stringify({ serverName: 'Kept', timeZone: 'Nowhere/Bad', removedLongAgo: 1, uploads: { maxSizeBytes: 5 * 1024 * 1024 } }),
      revision: 4,
      updated_at: new Date().toISOString(),
      updated_by: null,
    })
    .execute();
  const s = await getSettings(app.deps.db);
  t.equal(s.serverName, 'Kept');
  t.equal(s.timeZone, 'UTC', 'the bad field falls back to its default');
  t.equal(s.uploads.maxSizeBytes, 5 * 1024 * 1024);
  t.notOk('removedLongAgo' in s);
});

t.test('system status: versions, database, disk, tools, backups, contributed sections', async (t) => {
  const app = await startApp(t);
  // Registered in this app only (deps.scope): no other test's app sees them.
  registerStatusContributor(app.deps, { key: 'testFleet', title: 'Fleet (test)', collect: () => ({ online: 3, offline: 1 }) });
  registerStatusContributor(app.deps, {
    key: 'testBroken',
    title: 'Broken (test)',
    collect: () => {
      throw new Error('queue table missing');
    },
  });
  const viewer = await signIn(app, { role: 'owner' });
  const upBefore = process.uptime();
  const res = await app.json('/api/v1/system/status', { headers: viewer.headers });
  const upAfter = process.uptime();
  t.equal(res.status, 200, JSON.stringify(res.body).slice(0, 500));
  const s = res.body.data;
  // The server runs in this process: its uptime is this process's.
  t.ok(s.uptimeSec >= Math.floor(upBefore) && s.uptimeSec <= Math.ceil(upAfter), `uptime ${s.uptimeSec} s within ${upBefore}..${upAfter}`);
  t.ok(Date.parse(s.startedAt) <= Date.now() && Date.parse(s.startedAt) >= Date.now() - upAfter * 1000 - 1000, 'startedAt is when this process started');
  // ffmpeg and ffprobe versions as fields: what the binaries the server uses say themselves.
  for (const name of ['ffmpeg', 'ffprobe'] as const) {
    const bin = app.deps.tools[name];
    t.ok(bin, `${name} resolved`);
    const first = execFileSync(bin!.path, ['-hide_banner', '-version'], { encoding: 'utf8' }).split('\n')[0]!;
    const expected = first.split(' ')[2];
    t.equal(s.tools[name].ok, true);
    t.equal(s.tools[name].version, expected, `${name} ${expected}`);
  }
  t.match(s.version, /^\d+\.\d+\.\d+/);
  t.equal(s.runtime.node, process.version);
  // The engine's version: SQLite's library, or the PostgreSQL server's (PLACARD_TEST_DATABASE_URL).
  t.match(s.database.sqliteVersion, TEST_DATABASE_URL ? /^\d+\.\d+/ : /^3\.\d+/);
  t.ok(s.database.sizeBytes > 0);
  t.equal(s.database.schemaVersion, s.database.schemaVersionKnown);
  t.ok(s.storage.totalBytes > 0 && s.storage.freeBytes >= 0);
  t.type(s.tools.sharp.ok, 'boolean');
  t.match(s.tools.sharp.version, /^\d+\.\d+\.\d+/, "sharp's version, from the check (sharp itself is not loaded to show it)");
  t.match(s.tools.sharp.libvips, /^\d+\.\d+/);
  t.equal(s.backups.count, 0);
  t.equal(s.backups.last, null);
  t.same(s.sections.testFleet, { title: 'Fleet (test)', ok: true, data: { online: 3, offline: 1 } });
  t.equal(s.sections.testBroken.ok, false, 'a failing contributor shows as a failed section, not a failed page');
  t.match(s.sections.testBroken.error, /queue table missing/);
  t.equal(s.sections.mediaStore.ok, true);
  t.equal(s.sections.mediaStore.data.mediaFiles, 0);

  const anonymous = await app.json('/api/v1/system/status');
  t.equal(anonymous.status, 401);
});

t.test('maintenance: unknown action 404, bad options 400, vacuum runs with progress', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const editor = await signIn(app, { role: 'editor' });
  const unknown = await app.json('/api/v1/system/maintenance/defragment', { method: 'POST', headers: owner.headers, json: {} });
  t.equal(unknown.status, 404);
  t.equal(unknown.body.error.code, 'not_found');
  t.match(unknown.body.error.message, /backup/, 'names the known actions');
  const forbidden = await app.json('/api/v1/system/maintenance/vacuum', { method: 'POST', headers: editor.headers, json: {} });
  t.equal(forbidden.status, 403);
  const badOptions = await app.json('/api/v1/system/maintenance/backup', {
    method: 'POST',
    headers: owner.headers,
    json: { options: { includeMedia: 'yes' } },
  });
  t.equal(badOptions.status, 400);
  const extra = await app.json('/api/v1/system/maintenance/vacuum', { method: 'POST', headers: owner.headers, json: { options: { full: true } } });
  t.equal(extra.status, 400, 'an action without options refuses some');

  const started = await app.json('/api/v1/system/maintenance/vacuum', { method: 'POST', headers: owner.headers, json: {} });
  t.equal(started.status, 202);
  t.equal(started.body.data.action, 'vacuum');
  t.match(started.headers.get('location'), `/api/v1/system/maintenance/runs/${started.body.data.id}`);
  let run = started.body.data;
  for (let i = 0; i < 200 && run.state === 'running'; i++) {
    await new Promise((r) => setTimeout(r, 25));
    run = (await app.json(`/api/v1/system/maintenance/runs/${run.id}`, { headers: owner.headers })).body.data;
  }
  t.equal(run.state, 'succeeded', JSON.stringify(run));
  t.equal(run.progress, 1);
  t.type(run.result.sizeAfterBytes, 'number');
  const list = await app.json('/api/v1/system/maintenance/runs', { headers: owner.headers });
  t.ok(list.body.data.items.some((r: { id: string }) => r.id === run.id));
  t.ok(list.body.data.actions.some((a: { name: string }) => a.name === 'restore'));
  const missing = await app.json('/api/v1/system/maintenance/runs/0190f5a2-7b3c-7def-8abc-0123456789ab', { headers: owner.headers });
  t.equal(missing.status, 404);
});

import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import t from 'tap';
import { createBackup } from '../server/src/modules/system/backup-create.js';
import { listBackups } from '../server/src/modules/system/backup-store.js';
import { verifyBackup } from '../server/src/modules/system/backup-verify.js';
import { mediaServiceOf } from '../server/src/modules/media/service.js';
import { registerRestoreParticipant } from '../server/src/modules/system/index.js';
import { getSettings } from '../server/src/modules/system/settings.js';
import { cookieHeader, signIn, TEST_PASSWORD } from './helpers/auth.js';
import { archivedDatabase, dumpTables } from './helpers/backup-db.js';
import { TEST_DATABASE_URL } from './helpers/postgres.js';
import { mediaDigest, writeMedia } from './helpers/data-dir.js';
import { heldRoute } from './helpers/sample-routes.js';
import { startApp, tempDataDir, type TestApp } from './helpers/harness.js';

async function runAndWait(app: TestApp, headers: Record<string, string>, action: string, options: Record<string, unknown> = {}) {
  const res = await app.json(`/api/v1/system/maintenance/${action}`, { method: 'POST', headers, json: { wait: true, options } });
  return res;
}

t.test('a backup taken under a write load is a consistent snapshot with the media store', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  writeMedia(app.dataDir, 40, 256 * 1024);

  // Writes keep landing while the backup runs: keys load-0, load-1, ... in order.
  let n = 0;
  let stop = false;
  const load = (async () => {
    while (!stop) {
      await app.deps.db
        .insertInto('meta')
        .values({ key: `load-${n}`, value: String(n) })
        .execute();
      n++;
      await new Promise((r) => setImmediate(r));
    }
  })();
  const started = await app.json('/api/v1/system/maintenance/backup', { method: 'POST', headers: owner.headers, json: {} });
  t.equal(started.status, 202);
  const second = await app.json('/api/v1/system/maintenance/vacuum', { method: 'POST', headers: owner.headers, json: {} });
  t.equal(second.status, 409, 'exclusive actions do not overlap');
  t.equal(second.body.error.code, 'conflict');
  let run = started.body.data;
  const seenProgress: number[] = [run.progress];
  while (run.state === 'running') {
    await new Promise((r) => setTimeout(r, 5));
    run = (await app.json(`/api/v1/system/maintenance/runs/${run.id}`, { headers: owner.headers })).body.data;
    seenProgress.push(run.progress);
  }
  stop = true;
  await load;
  t.equal(run.state, 'succeeded', JSON.stringify(run.error));
  t.same(
    seenProgress,
    [...seenProgress].sort((a, b) => a - b),
    `progress never goes back (${[...new Set(seenProgress)].map((p) => p.toFixed(2)).join(' ')})`,
  );
  t.ok(
    seenProgress.some((p) => p > 0 && p < 1),
    'progress passed through values between 0 and 1',
  );
  t.equal(seenProgress.at(-1), 1, 'and ended at 1');
  t.ok(n > 0, `${n} writes during the backup`);
  const name = run.result.backup.name as string;
  t.match(name, /^placard-backup-\d{8}T\d{9}Z-manual-[a-z0-9]{4}\.tar$/);

  const file = path.join(app.dataDir, 'backups', name);
  const staging = tempDataDir(t);
  const verified = await verifyBackup(file, { extractTo: staging });
  t.equal(verified.header.includesMedia, true);
  t.equal(verified.manifest.files.filter((f) => f.path.startsWith('media/')).length, 40, 'every media file is in it');
  t.same(await mediaDigest(staging), await mediaDigest(app.dataDir), 'media identical by sha256');
  t.equal(verified.header.engine, TEST_DATABASE_URL ? 'postgres' : 'sqlite', 'the header names the engine');
  t.ok(
    verified.manifest.files.some((f) => f.path === (TEST_DATABASE_URL ? 'placard.pgdump' : 'placard.db')),
    'the database entry is the engine’s',
  );
  const copy = await archivedDatabase(t, staging);
  if (!TEST_DATABASE_URL) t.equal((await sql<{ integrity_check: string }>`pragma integrity_check`.execute(copy)).rows[0]?.integrity_check, 'ok');
  const keys = (await copy.selectFrom('meta').select('value').where('key', 'like', 'load-%').execute()).map((r) => Number(r.value)).sort((a, b) => a - b);
  t.same(
    keys,
    keys.map((_, i) => i),
    `a prefix of the writes, with no gap (${keys.length} of ${n})`,
  );
  t.ok(existsSync(path.join(staging, 'secret.key')), 'the secret key travels with the backup');

  // Listing, download, status.
  const list = await app.json('/api/v1/system/backups', { headers: owner.headers });
  t.equal(list.body.data.items.length, 1);
  t.equal(list.body.data.items[0].name, name);
  const download = await app.fetch(`/api/v1/system/backups/${name}`, { headers: owner.headers });
  t.equal(download.status, 200);
  t.equal(download.headers.get('content-type'), 'application/x-tar');
  const bytes = Buffer.from(await download.arrayBuffer());
  t.same(createHash('sha256').update(bytes).digest('hex'), createHash('sha256').update(readFileSync(file)).digest('hex'), 'the download is the file');
  const admin = await signIn(app, { role: 'admin' });
  t.equal((await app.fetch(`/api/v1/system/backups/${name}`, { headers: admin.headers })).status, 403, 'only owners download (secret.key inside)');
  t.equal((await app.fetch(`/api/v1/system/backups/../placard.db`, { headers: owner.headers })).status, 404);
  const status = await app.json('/api/v1/system/status', { headers: owner.headers });
  t.equal(status.body.data.backups.last.name, name, 'status shows the last backup');
});

t.test('retention keeps the newest N backups', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  await app.json('/api/v1/settings', { method: 'PATCH', headers: owner.headers, json: { backups: { keep: 2 } } });
  const names: string[] = [];
  for (let i = 0; i < 3; i++) {
    const res = await runAndWait(app, owner.headers, 'backup', { includeMedia: false });
    t.equal(res.status, 200);
    t.equal(res.body.data.state, 'succeeded');
    names.push(res.body.data.result.backup.name);
  }
  const list = await app.json('/api/v1/system/backups', { headers: owner.headers });
  t.same(list.body.data.items.map((b: { name: string }) => b.name).sort(), names.slice(1).sort());
  const del = await app.fetch(`/api/v1/system/backups/${names[2]}`, { method: 'DELETE', headers: owner.headers });
  t.equal(del.status, 204);
  t.equal((await app.fetch(`/api/v1/system/backups/${names[2]}`, { method: 'DELETE', headers: owner.headers })).status, 404);
});

t.test('retention never deletes an uploaded backup (older than every local one) and keeps pre-upgrade ones apart', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  await app.json('/api/v1/settings', { method: 'PATCH', headers: owner.headers, json: { backups: { keep: 1 } } });
  const first = await runAndWait(app, owner.headers, 'backup', { includeMedia: false });
  const old = readFileSync(path.join(app.dataDir, 'backups', first.body.data.result.backup.name));
  const uploaded = await app.json('/api/v1/system/backups', { method: 'POST', headers: { ...owner.headers, 'content-type': 'application/x-tar' }, body: old });
  t.equal(uploaded.status, 201, JSON.stringify(uploaded.body));
  t.equal(uploaded.body.data.kind, 'uploaded', 'listed as uploaded (its header says manual)');
  t.equal(uploaded.body.data.createdAt, first.body.data.result.backup.createdAt, 'it keeps the time it was made: the oldest here');
  const made: string[] = [];
  for (let i = 0; i < 2; i++) made.push((await runAndWait(app, owner.headers, 'backup', { includeMedia: false })).body.data.result.backup.name);
  const names = () =>
    readdirSync(path.join(app.dataDir, 'backups'))
      .filter((n) => n.endsWith('.tar'))
      .sort();
  t.same(names(), [made[1], uploaded.body.data.name].sort(), 'the newest local backup and the uploaded one');

  // Pre-upgrade backups (install.sh --upgrade): the newest two stay whatever backups.keep says.
  const pre: string[] = [];
  for (let i = 0; i < 3; i++)
    pre.push((await createBackup({ dataDir: app.dataDir, databaseFile: app.database.file, kind: 'pre-upgrade', includeMedia: false, keep: 1 })).name);
  t.same(names(), [made[1], uploaded.body.data.name, pre[1], pre[2]].sort());
  t.same((await listBackups(app.dataDir)).map((b) => b.kind).sort(), ['manual', 'pre-upgrade', 'pre-upgrade', 'uploaded']);
});

t.test('restore round trip: data and media identical by sha256, /readyz 503 during it', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  writeMedia(app.dataDir, 40, 256 * 1024);
  await app.json('/api/v1/settings', { method: 'PATCH', headers: owner.headers, json: { serverName: 'Before' } });
  const before = await mediaDigest(app.dataDir);
  const backup = await runAndWait(app, owner.headers, 'backup');
  t.equal(backup.body.data.state, 'succeeded');
  const name = backup.body.data.result.backup.name;

  // Change everything after the backup.
  await app.json('/api/v1/settings', { method: 'PATCH', headers: owner.headers, json: { serverName: 'After' } });
  const later = await signIn(app, { role: 'editor' });
  writeMedia(app.dataDir, 3, 1024);
  t.not(Object.keys(await mediaDigest(app.dataDir)).length, Object.keys(before).length);

  // What the backup holds, table by table.
  const archived = tempDataDir(t);
  await verifyBackup(path.join(app.dataDir, 'backups', name), { extractTo: archived });
  const backedUp = await dumpTables(await archivedDatabase(t, archived));
  t.ok(Object.keys(backedUp).length > 10, `${Object.keys(backedUp).length} tables`);
  t.not(JSON.stringify(await dumpTables(app.deps.db)), JSON.stringify(backedUp), 'the live database differs before the restore');

  const started = await app.json('/api/v1/system/maintenance/restore', { method: 'POST', headers: owner.headers, json: { options: { backup: name } } });
  t.equal(started.status, 202, JSON.stringify(started.body));
  // Hold the database connection: the swap waits for it, so the restore is surely still running.
  const during = await app.deps.db.connection().execute(async () => app.json('/readyz'));
  t.equal(during.status, 503, '/readyz answers 503 while the restore runs');
  t.equal(during.body.error.code, 'not_ready');
  let run = started.body.data;
  while (run.state === 'running') {
    await new Promise((r) => setTimeout(r, 10));
    const res = await app.json(`/api/v1/system/maintenance/runs/${run.id}`, { headers: owner.headers });
    if (res.status === 200) run = res.body.data;
  }
  t.equal(run.state, 'succeeded', JSON.stringify(run.error));
  t.same(await dumpTables(app.deps.db), backedUp, 'every table, every row: the database is the backup’s');
  t.equal((await app.json('/readyz')).status, 200, 'ready again after');
  t.equal((await getSettings(app.deps.db)).serverName, 'Before', 'the database is the backup’s');
  t.same(await mediaDigest(app.dataDir), before, 'media identical by sha256');
  const editorAfter = await app.json('/api/v1/auth/login', { method: 'POST', json: { email: later.user.email, password: TEST_PASSWORD } });
  t.equal(editorAfter.status, 401, 'a user made after the backup is gone');
  const ownerAgain = await app.json('/api/v1/auth/login', { method: 'POST', json: { email: owner.user.email, password: TEST_PASSWORD } });
  t.equal(ownerAgain.status, 200, 'the owner signs in on the restored database');
  const headers = { cookie: cookieHeader(ownerAgain), 'x-csrf-token': ownerAgain.body.data.csrfToken };
  t.equal((await app.json('/api/v1/system/status', { headers })).status, 200);
  t.notOk(existsSync(path.join(app.dataDir, 'restore-journal.json')));
  t.same(
    readdirSync(app.dataDir).filter((f) => f.startsWith('.restore-staging') || f.startsWith('.pre-restore')),
    [],
    'no staging left behind',
  );
});

t.test('while a restore runs, /api answers 503 (a write would be lost at the swap) but the status and the run; after it, writes work', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  await app.json('/api/v1/settings', { method: 'PATCH', headers: owner.headers, json: { serverName: 'In the backup' } });
  const name = (await runAndWait(app, owner.headers, 'backup', { includeMedia: false })).body.data.result.backup.name;

  // Hold the restore mid-way, deterministically: a restore participant (the hook modules with
  // background work register) that takes its time to pause, as a long job would.
  let reached!: () => void;
  const pausing = new Promise<void>((resolve) => (reached = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  registerRestoreParticipant(app.deps, {
    key: 'test-slow-to-pause',
    pause: async () => {
      reached();
      await released;
    },
    resume: async () => {},
  });
  t.teardown(() => release());
  const started = await app.json('/api/v1/system/maintenance/restore', { method: 'POST', headers: owner.headers, json: { options: { backup: name } } });
  t.equal(started.status, 202);
  await pausing;

  const write = await app.json('/api/v1/settings', { method: 'PATCH', headers: owner.headers, json: { serverName: 'Written during the restore' } });
  t.equal(write.status, 503, 'a write is refused, not accepted and then lost');
  t.equal(write.body.error.code, 'not_ready');
  t.match(write.body.error.message, /restore is in progress/);
  t.equal(write.headers.get('retry-after'), '10');
  t.equal((await app.json('/api/v1/settings', { headers: owner.headers })).status, 503, 'reads of the old data too');
  t.equal((await app.json('/api/v1/assets', { method: 'POST', headers: owner.headers, json: {} })).status, 503);
  t.equal((await app.json('/readyz')).status, 503, '/readyz 503');
  const status = await app.json('/api/v1/system/status', { headers: owner.headers });
  t.equal(status.status, 200, 'the status still answers');
  t.equal(status.body.data.maintenance.restoreInProgress, true);
  const progress = await app.json(`/api/v1/system/maintenance/runs/${started.body.data.id}`, { headers: owner.headers });
  t.equal(progress.status, 200, 'and the restore’s own progress');
  t.equal(progress.body.data.state, 'running');
  t.equal((await app.fetch('/healthz')).status, 200, 'liveness is not an /api route');

  release();
  const done = await app.json(`/api/v1/system/maintenance/runs/${started.body.data.id}`, { headers: owner.headers });
  let run = done.body.data;
  while (run.state === 'running') {
    await new Promise((r) => setTimeout(r, 10));
    run = (await app.json(`/api/v1/system/maintenance/runs/${run.id}`, { headers: owner.headers })).body.data;
  }
  t.equal(run.state, 'succeeded', JSON.stringify(run.error));
  t.equal((await getSettings(app.deps.db)).serverName, 'In the backup');
  const after = await app.json('/api/v1/settings', { method: 'PATCH', headers: owner.headers, json: { serverName: 'Written after the restore' } });
  t.equal(after.status, 200, 'writes work again');
  t.equal((await getSettings(app.deps.db)).serverName, 'Written after the restore');
  t.equal((await app.json('/readyz')).status, 200);
});

t.test('a restore waits for writes already under way, and pauses the job queue across the swap', async (t) => {
  // A write that got past the gate before the restore began, held open by the test.
  const { route: slowWrite, inside, release: finish } = heldRoute('POST', '/api/v1/test-slow-write');
  const app = await startApp(t, { extraRoutes: [slowWrite] });
  const owner = await signIn(app);
  await app.json('/api/v1/settings', { method: 'PATCH', headers: owner.headers, json: { serverName: 'In the backup' } });
  const name = (await runAndWait(app, owner.headers, 'backup', { includeMedia: false })).body.data.result.backup.name;
  await app.json('/api/v1/settings', { method: 'PATCH', headers: owner.headers, json: { serverName: 'Live, not in the backup' } });
  const liveName = async () => (await getSettings(app.deps.db)).serverName;
  // Which data is live when the job queue pauses and resumes: the swap is what changes it.
  const jobs = mediaServiceOf(app.deps)!.jobs;
  const pauses: string[] = [];
  const namesSeen: Record<string, string> = {};
  const { pause, resume } = jobs;
  jobs.pause = async () => {
    pauses.push('pause');
    await pause.call(jobs);
    namesSeen.paused = await liveName();
  };
  jobs.resume = async () => {
    pauses.push('resume');
    namesSeen.resuming = await liveName();
    await resume.call(jobs);
  };
  t.teardown(() => Object.assign(jobs, { pause, resume }));

  const write = app.json('/api/v1/test-slow-write', { method: 'POST', json: {} });
  await inside;
  const started = await app.json('/api/v1/system/maintenance/restore', { method: 'POST', headers: owner.headers, json: { options: { backup: name } } });
  t.equal(started.status, 202);
  const runOf = async () => (await app.json(`/api/v1/system/maintenance/runs/${started.body.data.id}`, { headers: owner.headers })).body.data;
  let run = await runOf();
  for (let i = 0; i < 20 && run.message !== 'waiting for writes under way to finish'; i++) run = await runOf();
  t.equal(run.message, 'waiting for writes under way to finish');
  await new Promise((r) => setTimeout(r, 200));
  t.equal(await liveName(), 'Live, not in the backup', 'no swap while the write runs');
  t.same(pauses, [], 'nor are the jobs paused yet');
  t.equal((await runOf()).state, 'running');
  finish();
  t.equal((await write).status, 200, 'the write that got in finishes');
  while (run.state === 'running') run = await runOf();
  t.equal(run.state, 'succeeded', JSON.stringify(run.error));
  t.equal(await liveName(), 'In the backup', 'then the swap happened');
  t.same(pauses, ['pause', 'resume'], 'and the jobs resumed');
  t.same(namesSeen, { paused: 'Live, not in the backup', resuming: 'In the backup' }, 'jobs were paused before the swap and resumed after it');
});

t.test('restore refuses a corrupt, cut-short, foreign or newer backup without touching the live data', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  writeMedia(app.dataDir, 3, 10_000);
  await app.json('/api/v1/settings', { method: 'PATCH', headers: owner.headers, json: { serverName: 'Live' } });
  const backup = await runAndWait(app, owner.headers, 'backup');
  const good = readFileSync(path.join(app.dataDir, 'backups', backup.body.data.result.backup.name));
  const liveMedia = await mediaDigest(app.dataDir);

  const upload = (body: Buffer) =>
    app.json('/api/v1/system/backups', { method: 'POST', headers: { ...owner.headers, 'content-type': 'application/x-tar' }, body });

  const flipped = Buffer.from(good);
  flipped[good.length - 3000] = flipped[good.length - 3000]! ^ 0xff; // inside the last media file or the manifest
  const cut = good.subarray(0, Math.floor(good.length * 0.6));
  const garbage = randomBytes(4096);
  for (const [label, body] of [
    ['a flipped byte', flipped],
    ['cut short', cut],
    ['not a tar', garbage],
    ['empty', Buffer.alloc(0)],
  ] as const) {
    const res = await upload(body);
    t.equal(res.status, 400, `${label}: ${JSON.stringify(res.body)}`);
    t.equal(res.body.error.code, 'validation_failed', label);
  }
  // A backup from a newer Placard: rewrite the header's schema version (same length keeps the tar valid).
  const text = good.toString('latin1');
  const newer = Buffer.from(
    text.replace(/"schemaVersion": (\d+)/, (_m, v: string) => `"schemaVersion": ${'9'.repeat(v.length)}`),
    'latin1',
  );
  const refused = await upload(newer);
  t.equal(refused.status, 400);
  t.match(refused.body.error.message, /newer Placard/);

  // A good upload is kept and can be restored; a corrupt file put in place by hand is refused at restore.
  const ok = await upload(good);
  t.equal(ok.status, 201, JSON.stringify(ok.body));
  t.match(ok.body.data.name, /-uploaded-/);
  const handPlaced = ok.body.data.name.replace('-uploaded-', '-manual-');
  writeFileSync(path.join(app.dataDir, 'backups', handPlaced), Buffer.concat([good.subarray(0, 1024), flipped.subarray(1024)]));
  const res = await runAndWait(app, owner.headers, 'restore', { backup: handPlaced });
  t.equal(res.status, 200);
  t.equal(res.body.data.state, 'failed');
  t.match(res.body.data.error.message, /checksum|damaged/);
  t.equal((await getSettings(app.deps.db)).serverName, 'Live', 'live database untouched');
  t.same(await mediaDigest(app.dataDir), liveMedia, 'live media untouched');
  t.equal((await app.json('/readyz')).status, 200, 'ready after the refused restore');
  const admin = await signIn(app, { role: 'admin' });
  const forbidden = await app.json('/api/v1/system/maintenance/restore', {
    method: 'POST',
    headers: admin.headers,
    json: { options: { backup: ok.body.data.name } },
  });
  t.equal(forbidden.status, 403, 'restore is for owners');
  // A newer backup placed in backups/ by hand (the upload refuses it): the restore action refuses it too.
  const newerName = ok.body.data.name.replace('-uploaded-', '-cli-');
  writeFileSync(path.join(app.dataDir, 'backups', newerName), newer);
  const newerRun = await runAndWait(app, owner.headers, 'restore', { backup: newerName });
  t.equal(newerRun.body.data.state, 'failed');
  t.equal(newerRun.body.data.error.code, 'validation_failed');
  t.match(newerRun.body.data.error.message, /newer Placard/);
  t.equal((await getSettings(app.deps.db)).serverName, 'Live', 'live database untouched');
  t.same(await mediaDigest(app.dataDir), liveMedia, 'live media untouched');
  t.equal((await app.json('/readyz')).status, 200);
  const missing = await runAndWait(app, owner.headers, 'restore', { backup: 'placard-backup-20200101T000000000Z-manual.tar' });
  t.equal(missing.body.data.state, 'failed');
  t.equal(missing.body.data.error.code, 'not_found');
});

import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import t, { type Test } from 'tap';
import { JobQueue } from '../server/src/platform/jobs/queue.js';
import { MediaStore } from '../server/src/platform/media/store.js';
import { signIn, type SignedIn } from './helpers/auth.js';
import { startApp, type TestApp } from './helpers/harness.js';
import { settledAsset, sha256, TUS, uploadAsset } from './helpers/media.js';
import { samplePng } from './helpers/sample-media.js';
import { pairScreen } from './helpers/screens.js';

const HOUR = 3600_000;
const DAY = 24 * HOUR;

/** Starts a maintenance action and waits for its end (`wait: true`); answers the HTTP reply. */
async function runAction(app: TestApp, who: SignedIn, action: string, options?: unknown) {
  return app.json(`/api/v1/system/maintenance/${action}`, {
    method: 'POST',
    headers: who.headers,
    json: { ...(options === undefined ? {} : { options }), wait: true },
  });
}

async function status(app: TestApp, who: SignedIn) {
  const res = await app.json('/api/v1/system/status', { headers: who.headers });
  if (res.status !== 200) throw new Error(`status answered ${res.status}`);
  return res.body.data.sections;
}

/** Every file a ready asset references is on disk with the bytes its name says. */
function checkStore(t: Test, app: TestApp, shas: string[], label: string) {
  const store = new MediaStore(app.dataDir);
  for (const sha of shas) t.equal(sha256(fs.readFileSync(store.pathOf(sha))), sha, `${label}: ${sha.slice(0, 8)} intact`);
}

t.test('status sections media, jobs and fleet count real uploads, failures and screens', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const dir = app.dataDir;
  const red = fs.readFileSync(await samplePng(dir, 'red.png'));
  const blue = fs.readFileSync(await samplePng(dir, 'blue.png', { r: 20, g: 40, b: 220 }, 320, 240));
  const a = await settledAsset(app, owner, (await uploadAsset(app, owner, red, 'red.png')).id);
  const b = await settledAsset(app, owner, (await uploadAsset(app, owner, blue, 'blue.png')).id);
  t.equal(a.state, 'ready');
  t.equal(b.state, 'ready');
  // PNG magic, then garbage: accepted as an image, fails in processing for good.
  const broken = Buffer.concat([red.subarray(0, 64), randomBytes(4000)]);
  const c = await settledAsset(app, owner, (await uploadAsset(app, owner, broken, 'broken.png')).id);
  t.equal(c.state, 'failed');
  const siteId = (await app.json('/api/v1/assets/websites', { method: 'POST', headers: owner.headers, json: { url: 'https://example.test/' } })).body.data.id;
  // A website gets a thumbnail in the background (a card here: tests reach no website); wait for it, it counts below.
  let site: any;
  for (let i = 0; i < 200; i++) {
    site = (await app.json(`/api/v1/assets/${siteId}`, { headers: owner.headers })).body.data;
    if (site.variants.length) break;
    await new Promise((r) => setTimeout(r, 50));
  }

  const online = await pairScreen(app, owner, { name: 'Online' });
  await pairScreen(app, owner, { name: 'Never' });
  const disabled = await pairScreen(app, owner, { name: 'Disabled' });
  t.equal((await app.json('/api/v1/player/heartbeat', { method: 'POST', headers: online.headers, json: { playerVersion: '1.0.0' } })).status, 200);
  t.equal((await app.json(`/api/v1/screens/${disabled.screenId}/disable`, { method: 'POST', headers: owner.headers, json: {} })).status, 200);

  const s = await status(app, owner);
  t.equal(s.media.ok, true, JSON.stringify(s.media));
  const m = s.media.data;
  t.equal(m.assets, 4);
  t.match(m.byState, { ready: 3, failed: 1, processing: 0, uploading: 0, archived: 0 });
  t.match(m.byKind, { image: 3, website: 1, video: 0 });
  t.equal(m.originalBytes, red.length + blue.length + broken.length, 'originals: the sum of the uploaded sizes');
  const variants = [...a.variants, ...b.variants, ...site.variants].filter((v: any) => v.sha256 !== a.sha256 && v.sha256 !== b.sha256);
  t.ok(variants.length >= 2, 'thumbnails were made');
  t.equal(m.variants, variants.length);
  t.equal(
    m.variantBytes,
    variants.reduce((n: number, v: any) => n + v.sizeBytes, 0),
  );
  const stored = new Set([a.sha256, b.sha256, c.sha256, ...variants.map((v: any) => v.sha256)]);
  t.equal(m.storedFiles, stored.size, 'distinct files in the store');
  t.equal(m.partialUploads, 0);

  const j = s.jobs.data;
  t.equal(s.jobs.ok, true);
  t.equal(j.queued, 0);
  t.equal(j.running, 0);
  t.equal(j.done, 3, 'two images processed, one website thumbnail');
  t.equal(j.failedLast24h, 1, 'the broken PNG');
  t.equal(j.lastFailure.kind, 'media.process');
  t.equal(j.oldestQueuedAt, null);
  // A job waiting for a retry shows as queued, retrying, with its age.
  const waiting = JobQueue.row('media.process', { assetId: c.id }, { delayMs: DAY });
  await app.deps.db
    .insertInto('jobs')
    .values({ ...waiting, attempts: 1, created_at: new Date(Date.now() - 90_000).toISOString() })
    .execute();
  const j2 = (await status(app, owner)).jobs.data;
  t.match(j2, { queued: 1, due: 0, retrying: 1 });
  t.ok(j2.oldestQueuedAgeSec >= 90, `oldest age ${j2.oldestQueuedAgeSec}`);

  t.equal(s.fleet.ok, true);
  t.same(s.fleet.data, { screens: 3, online: 1, stale: 0, offline: 0, neverSeen: 1, disabled: 1, revoked: 0 });
  // An old contact makes the screen offline.
  await app.deps.db
    .updateTable('screens')
    .set({ last_seen_ms: Date.now() - DAY })
    .where('id', '=', online.screenId)
    .execute();
  t.match((await status(app, owner)).fleet.data, { online: 0, offline: 1 });
});

t.test('prune-media: removes orphans and stale partial uploads, keeps referenced files; dry run removes nothing', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const editor = await signIn(app, { role: 'editor' });
  const asset = await settledAsset(app, owner, (await uploadAsset(app, owner, fs.readFileSync(await samplePng(app.dataDir)), 'red.png')).id);
  const referenced = [asset.sha256, ...asset.variants.map((v: any) => v.sha256)];
  const store = new MediaStore(app.dataDir);
  const old = new Date(Date.now() - 2 * HOUR);

  // An orphan from long ago, a young orphan (a job may be about to commit it), an orphan row without a file.
  const orphan = randomBytes(5000);
  const orphanSha = sha256(orphan);
  fs.mkdirSync(path.dirname(store.pathOf(orphanSha)), { recursive: true });
  fs.writeFileSync(store.pathOf(orphanSha), orphan);
  fs.utimesSync(store.pathOf(orphanSha), old, old);
  const young = randomBytes(3000);
  fs.mkdirSync(path.dirname(store.pathOf(sha256(young))), { recursive: true });
  fs.writeFileSync(store.pathOf(sha256(young)), young);
  const ghost = 'f'.repeat(64);
  await app.deps.db.insertInto('media_files').values({ sha256: ghost, size_bytes: 10, content_type: 'image/png', created_at: old.toISOString() }).execute();
  // A partial upload left for days.
  const created = await app.fetch('/api/v1/uploads', { method: 'POST', headers: { ...owner.headers, ...TUS, 'upload-length': '100' } });
  const uploadId = created.headers.get('location')!.split('/').pop()!;
  await app.fetch(`/api/v1/uploads/${uploadId}`, {
    method: 'PATCH',
    headers: { ...owner.headers, ...TUS, 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
    body: Buffer.alloc(40, 1),
  });
  await app.deps.db.updateTable('uploads').set({ expires_at: old.toISOString() }).where('id', '=', uploadId).execute();
  const partFile = path.join(app.dataDir, 'uploads', `${uploadId}.part`);

  t.equal((await runAction(app, editor, 'prune-media')).status, 403, 'editors cannot prune');
  for (const bad of [{ dryRun: 'yes' }, { dryRun: true, everything: true }, 'all']) {
    const res = await runAction(app, owner, 'prune-media', bad);
    t.equal(res.status, 400, JSON.stringify(bad));
    t.equal(res.body.error.code, 'validation_failed');
  }

  const dry = await runAction(app, owner, 'prune-media', { dryRun: true });
  t.equal(dry.status, 200, JSON.stringify(dry.body));
  t.equal(dry.body.data.state, 'succeeded', JSON.stringify(dry.body.data));
  t.match(dry.body.data.result, {
    dryRun: true,
    orphanFiles: 1,
    orphanBytes: 5000,
    orphanRows: 1,
    partialUploads: { uploads: 1, bytes: 40 },
    filesRemoved: 0,
    bytesRemoved: 0,
    missingFiles: 0,
  });
  t.ok(fs.existsSync(store.pathOf(orphanSha)), 'a dry run removes nothing');
  t.ok(fs.existsSync(partFile));
  t.ok(await app.deps.db.selectFrom('media_files').select('sha256').where('sha256', '=', ghost).executeTakeFirst());

  const real = await runAction(app, owner, 'prune-media', {});
  t.equal(real.body.data.state, 'succeeded', JSON.stringify(real.body.data));
  const r = real.body.data.result;
  t.match(r, { dryRun: false, orphanFiles: 1, orphanBytes: 5000, orphanRows: 1, partialUploads: { uploads: 1, bytes: 40 } });
  t.equal(r.filesRemoved, 2, 'the orphan and the part file');
  t.equal(r.bytesRemoved, 5040);
  t.equal(real.body.data.progress, 1);
  t.notOk(fs.existsSync(store.pathOf(orphanSha)), 'the old orphan is gone');
  t.ok(fs.existsSync(store.pathOf(sha256(young))), 'a young orphan is kept');
  t.notOk(fs.existsSync(partFile), 'the stale part file is gone');
  t.notOk(await app.deps.db.selectFrom('media_files').select('sha256').where('sha256', '=', ghost).executeTakeFirst(), 'the orphan row is gone');
  checkStore(t, app, referenced, 'after pruning');
  const preview = await app.fetch(`/api/v1/assets/${asset.id}/preview`, { headers: owner.headers });
  t.equal(preview.status, 200);
  t.equal(sha256(Buffer.from(await preview.arrayBuffer())), asset.sha256, 'the asset still serves its bytes');

  // A referenced file that went missing is reported.
  fs.rmSync(store.pathOf(asset.variants.find((v: any) => v.purpose === 'thumbnail').sha256));
  const again = await runAction(app, owner, 'prune-media', { dryRun: true });
  t.match(again.body.data.result, { orphanFiles: 0, missingFiles: 1 });
});

t.test('reprocess-thumbnails regenerates a deleted thumbnail through the job queue', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const asset = await settledAsset(app, owner, (await uploadAsset(app, owner, fs.readFileSync(await samplePng(app.dataDir)), 'red.png')).id);
  const other = await settledAsset(
    app,
    owner,
    (await uploadAsset(app, owner, fs.readFileSync(await samplePng(app.dataDir, 'green.png', { r: 0, g: 200, b: 0 })), 'green.png')).id,
  );
  const thumb = asset.variants.find((v: any) => v.purpose === 'thumbnail');
  const store = new MediaStore(app.dataDir);
  fs.rmSync(store.pathOf(thumb.sha256));
  t.equal((await app.fetch(`/api/v1/assets/${asset.id}/thumbnail`, { headers: owner.headers })).status, 404, 'the thumbnail file is gone');

  for (const bad of [{ assetIds: ['nope'] }, { assetIds: [] }, { kinds: ['website'] }, { all: true }]) {
    const res = await runAction(app, owner, 'reprocess-thumbnails', bad);
    t.equal(res.status, 400, JSON.stringify(bad));
    t.equal(res.body.error.code, 'validation_failed');
  }

  const missing = '0190f5a2-7b3c-7def-8abc-0123456789ab';
  const res = await runAction(app, owner, 'reprocess-thumbnails', { assetIds: [asset.id.toUpperCase(), missing] });
  t.equal(res.status, 200, JSON.stringify(res.body));
  const run = res.body.data;
  t.equal(run.state, 'succeeded', JSON.stringify(run));
  t.match(run.result, { queued: 1, succeeded: 1, failed: 0, skipped: 1, skippedAssets: [{ assetId: missing, reason: 'no such asset' }] });
  t.equal(run.progress, 1);
  t.equal(sha256(fs.readFileSync(store.pathOf(thumb.sha256))), thumb.sha256, 'the thumbnail file is back, with the same bytes');
  const served = await app.fetch(`/api/v1/assets/${asset.id}/thumbnail`, { headers: owner.headers });
  t.equal(served.status, 200);
  const after = (await app.json(`/api/v1/assets/${asset.id}`, { headers: owner.headers })).body.data;
  t.equal(after.state, 'ready');
  t.same(after.variants.map((v: any) => v.id).sort(), asset.variants.map((v: any) => v.id).sort(), 'variants that came out the same keep their ids');
  const jobs = await app.deps.db.selectFrom('jobs').select(['kind', 'state']).where('kind', '=', 'media.reprocess').execute();
  t.same(jobs, [{ kind: 'media.reprocess', state: 'done' }], 'it went through the job queue');

  // Everything ready, by default.
  const all = await runAction(app, owner, 'reprocess-thumbnails', { kinds: ['image'] });
  t.match(all.body.data.result, { queued: 2, succeeded: 2, failed: 0 });
  t.equal((await app.json(`/api/v1/assets/${other.id}`, { headers: owner.headers })).body.data.state, 'ready');

  // An original gone from the store: the job fails for good, the asset stays as it was.
  fs.rmSync(store.pathOf(other.sha256));
  const broken = await runAction(app, owner, 'reprocess-thumbnails', { assetIds: [other.id] });
  t.match(broken.body.data.result, { queued: 1, succeeded: 0, failed: 1, failures: [{ assetId: other.id, error: /original file/ }] });
  t.equal((await app.json(`/api/v1/assets/${other.id}`, { headers: owner.headers })).body.data.state, 'ready');
});

t.test('upload settings: the lower of the setting and the environment cap governs tus, OPTIONS, capabilities and expiry', async (t) => {
  const app = await startApp(t, { config: { uploadMaxBytes: 3 * 1024 * 1024 } });
  const owner = await signIn(app);
  const MiB = 1024 * 1024;
  const create = (length: number) => app.json('/api/v1/uploads', { method: 'POST', headers: { ...owner.headers, ...TUS, 'upload-length': String(length) } });
  const caps = async () => (await app.json('/api/v1/media/capabilities', { headers: owner.headers })).body.data;
  const tusMax = async () => (await app.fetch('/api/v1/uploads', { method: 'OPTIONS' })).headers.get('tus-max-size');

  t.equal(await tusMax(), String(3 * MiB), 'the environment caps the 4 GiB default setting');
  t.match(await caps(), { maxUploadBytes: 3 * MiB, maxUploadBytesHardCap: 3 * MiB });
  t.equal((await create(2.5 * MiB)).status, 201);

  const patched = await app.json('/api/v1/settings', {
    method: 'PATCH',
    headers: owner.headers,
    json: { uploads: { maxSizeBytes: 2 * MiB, abandonAfterHours: 2 } },
  });
  t.equal(patched.status, 200);
  // Right after the PATCH: the cached settings were dropped.
  const refused = await create(2.5 * MiB);
  t.equal(refused.status, 413);
  t.equal(refused.body.error.code, 'payload_too_large');
  t.equal(refused.headers.get('tus-max-size'), String(2 * MiB));
  t.equal(refused.headers.get('tus-resumable'), '1.0.0');
  t.equal(await tusMax(), String(2 * MiB));
  t.match(await caps(), { maxUploadBytes: 2 * MiB, maxUploadBytesHardCap: 3 * MiB, uploadExpiryMs: 2 * HOUR });
  const ok = await create(2 * MiB);
  t.equal(ok.status, 201);
  const expires = Date.parse(ok.headers.get('upload-expires')!);
  t.ok(expires > Date.now() + HOUR && expires <= Date.now() + 2 * HOUR + 1000, 'Upload-Expires follows abandonAfterHours');

  // Raising the setting above the cap changes nothing.
  await app.json('/api/v1/settings', { method: 'PATCH', headers: owner.headers, json: { uploads: { maxSizeBytes: 100 * MiB } } });
  t.equal(await tusMax(), String(3 * MiB));

  // The expiry task applies the setting to uploads already under way: untouched for 3 h > 2 h.
  const rows = await app.deps.db.selectFrom('uploads').select(['id', 'expires_at']).execute();
  t.equal(rows.length, 2);
  const stale = rows[0]!.id;
  await app.deps.db
    .updateTable('uploads')
    .set({ updated_at: new Date(Date.now() - 3 * HOUR).toISOString() })
    .where('id', '=', stale)
    .execute();
  await app.deps.periodic.runNow('uploads.expire');
  t.same(
    (await app.deps.db.selectFrom('uploads').select('id').execute()).map((r) => r.id),
    [rows[1]!.id],
    'the stale one went, the fresh one stays',
  );
  t.notOk(fs.existsSync(path.join(app.dataDir, 'uploads', `${stale}.part`)));
});

t.test('network.allowPrivateFetchTargets decides within PLACARD_FETCH_ALLOW_PRIVATE', async (t) => {
  const diagnose = async (app: TestApp, owner: SignedIn) => {
    const site = await app.json('/api/v1/assets/websites', { method: 'POST', headers: owner.headers, json: { url: 'http://10.255.255.1/' } });
    t.equal(site.status, 201, JSON.stringify(site.body));
    return (await app.json(`/api/v1/assets/${site.body.data.id}/website/diagnostics`, { headers: owner.headers })).body.data;
  };
  const app = await startApp(t, { config: { fetchAllowPrivate: true } });
  const owner = await signIn(app);
  const allowed = await diagnose(app, owner);
  t.equal(allowed.reachable, false, 'no network in tests');
  t.notMatch(allowed.error.message, /private network address/, 'the policy let it through');
  await app.json('/api/v1/settings', { method: 'PATCH', headers: owner.headers, json: { network: { allowPrivateFetchTargets: false } } });
  const refused = await diagnose(app, owner);
  t.match(refused.error.message, /private network address/, 'the setting forbids');

  const envOff = await startApp(t, { config: { fetchAllowPrivate: false } });
  const owner2 = await signIn(envOff);
  t.match((await diagnose(envOff, owner2)).error.message, /private network address/, 'the environment forbids whatever the setting says');
});

t.test('retention settings: noise buckets, screenshots, player history and job history are pruned, recent ones kept', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const screen = await pairScreen(app, owner);
  const db = app.deps.db;
  const patched = await app.json('/api/v1/settings', {
    method: 'PATCH',
    headers: owner.headers,
    json: { retention: { heartbeatDays: 3, noiseHistoryDays: 5, screenshotDays: 2, jobHistoryDays: 10 } },
  });
  t.equal(patched.status, 200);
  const now = Date.now();
  const at = (ms: number) => new Date(ms).toISOString();

  const num = (await db.selectFrom('screens').select('num').where('id', '=', screen.screenId).executeTakeFirstOrThrow()).num!;
  const bucket = (ageDays: number) => ({
    screen_num: num,
    started_ms: now - ageDays * DAY,
    average_level: 40,
    peak_level: 60,
    monitored_ms: 10_000,
    warning_ms: 0,
    loud_ms: 0,
    trigger_count: 0,
    received_ms: now,
  });
  await db
    .insertInto('noise_buckets')
    .values([bucket(6), bucket(4)])
    .execute();
  // More old rows than four delete batches (1 000 each): pruning goes on until none is left.
  const many = Array.from({ length: 4500 }, (_, i) => ({ ...bucket(7), started_ms: now - 7 * DAY - i * 10_000 }));
  for (let i = 0; i < many.length; i += 500)
    await db
      .insertInto('noise_buckets')
      .values(many.slice(i, i + 500))
      .execute();

  const history = (id: string, kind: string, ageDays: number) => ({
    id,
    screen_id: screen.screenId,
    at: at(now - ageDays * DAY),
    at_ms: now - ageDays * DAY,
    kind,
    detail: '{}',
  });
  await db
    .insertInto('screen_history')
    .values([
      history('0190f5a2-7b3c-7def-8abc-00000000000a', 'heartbeat', 4),
      history('0190f5a2-7b3c-7def-8abc-00000000000b', 'heartbeat', 2),
      history('0190f5a2-7b3c-7def-8abc-00000000000c', 'version', 4),
    ])
    .execute();

  const shotsDir = path.join(app.dataDir, 'media', 'screenshots');
  fs.mkdirSync(shotsDir, { recursive: true });
  const shot = (ageDays: number, bytes: Buffer) => {
    const sha = sha256(bytes);
    const file = path.join(shotsDir, sha);
    fs.writeFileSync(file, bytes);
    const when = new Date(now - ageDays * DAY);
    fs.utimesSync(file, when, when);
    return {
      row: {
        id: `0190f5a2-7b3c-7def-8abc-${String(ageDays).padStart(12, '0')}`,
        screen_id: screen.screenId,
        type: 'screenshot',
        params: '{}',
        state: 'succeeded' as const,
        created_by: null,
        source: 'console',
        created_at: at(now - ageDays * DAY),
        expires_at: at(now - ageDays * DAY + HOUR),
        delivered_at: at(now - ageDays * DAY),
        acknowledged_at: at(now - ageDays * DAY),
        completed_at: at(now - ageDays * DAY),
        result: null,
        screenshot_sha256: sha,
        screenshot_type: 'image/png',
      },
      file,
    };
  };
  const oldShot = shot(3, randomBytes(2000));
  const newShot = shot(1, randomBytes(1000));
  await db.insertInto('screen_commands').values([oldShot.row, newShot.row]).execute();

  const job = (state: 'done' | 'failed' | 'queued', ageDays: number) => ({ ...JobQueue.row('media.test', {}), state, updated_at: at(now - ageDays * DAY) });
  const jobs = [job('done', 11), job('failed', 12), job('done', 9), job('queued', 30)];
  await db.insertInto('jobs').values(jobs).execute();

  await app.deps.periodic.runNow('screens.retention');
  await app.deps.periodic.runNow('jobs.prune');

  const buckets = await db.selectFrom('noise_buckets').select('started_ms').where('screen_num', '=', num).execute();
  t.same(
    buckets.map((b) => b.started_ms),
    [now - 4 * DAY],
    'the 6-day and older buckets went (all 4 501), the 4-day one stays',
  );
  const kept = (await db.selectFrom('screen_history').select('id').where('id', 'like', '0190f5a2-7b3c-7def-8abc-00000000000%').execute())
    .map((r) => r.id)
    .sort();
  t.same(kept, ['0190f5a2-7b3c-7def-8abc-00000000000b', '0190f5a2-7b3c-7def-8abc-00000000000c'], 'old heartbeat pruned; recent heartbeat and old event kept');
  t.same(
    (await db.selectFrom('screen_commands').select('id').where('type', '=', 'screenshot').execute()).map((r) => r.id),
    [newShot.row.id],
    'the old screenshot command went',
  );
  t.notOk(fs.existsSync(oldShot.file), 'its file too');
  t.ok(fs.existsSync(newShot.file), 'the recent screenshot stays');
  const screenshotUrl = `/api/v1/screens/${screen.screenId}/commands/${newShot.row.id}/screenshot`;
  t.equal((await app.fetch(screenshotUrl, { headers: owner.headers })).status, 200);
  const left = (await db.selectFrom('jobs').select('id').where('kind', '=', 'media.test').execute()).map((r) => r.id).sort();
  t.same(left, [jobs[2]!.id, jobs[3]!.id].sort(), 'finished jobs past jobHistoryDays went; recent and queued ones stay');
});

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, renameSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import t, { type Test } from 'tap';
import { compareTable, tableChecksum } from '../server/src/modules/system/migrate-to-verify.js';
import { MIGRATIONS } from '../server/src/platform/db/migrations/index.js';
import { migrate, openDatabase } from '../server/src/platform/db/database.js';
import { MediaStore } from '../server/src/platform/media/store.js';
import { cliIn } from './helpers/cli.js';
import { cookieHeader, type SignedIn, TEST_PASSWORD } from './helpers/auth.js';
import { jsonOver, tempDataDir, type TestApp } from './helpers/harness.js';
import { settledAsset, uploadAsset } from './helpers/media.js';
import { freshPostgresDatabase, TEST_DATABASE_URL } from './helpers/postgres.js';
import { samplePng } from './helpers/sample-media.js';
import { pairScreen } from './helpers/screens.js';
import { type ServerProcess, startServerProcess } from './helpers/server-process.js';

// `placard migrate-to postgres://...` (issue 25): a SQLite appliance's data into PostgreSQL, verified.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const NO_POSTGRES = TEST_DATABASE_URL ? false : 'PLACARD_TEST_DATABASE_URL is not set: migrate-to needs a PostgreSQL server to copy into';

const cli = (dataDir: string, args: string[], env: Record<string, string> = {}) => cliIn(dataDir, args, '', env);

/** What the test helpers need of an app (fetch and json), over a server process. */
function client(server: ServerProcess, dataDir: string): TestApp {
  const doFetch = (p: string, init?: RequestInit) => fetch(server.url + p, init);
  return {
    url: server.url,
    dataDir,
    fetch: doFetch,
    json: jsonOver(doFetch),
  } as unknown as TestApp;
}

async function stop(server: ServerProcess): Promise<void> {
  server.child.kill('SIGTERM');
  await server.exited;
}

async function rowsOf(url: string, text: string): Promise<any[]> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return (await c.query(text)).rows;
  } finally {
    await c.end();
  }
}

const noStack = (s: string) => !/\n\s+at /.test(s);

// The demo seed (ffmpeg) and three server starts: more than tap's default two minutes on a slow machine.
t.setTimeout(300_000);

t.test('the demo data and uploaded media move to PostgreSQL, verified, and the server runs on them', { skip: NO_POSTGRES }, async (t) => {
  const dataDir = tempDataDir(t);
  const env = { PLACARD_DEMO: '1' };
  const first = await startServerProcess(t, dataDir, env);
  const a = client(first, dataDir);
  for (let i = 0; ; i++) {
    const demo = await a.json('/api/v1/demo');
    if (demo.body.data.lastError) throw new Error(demo.body.data.lastError);
    if (demo.body.data.seededAt && !demo.body.data.seeding) break;
    if (i > 1800) throw new Error('the demo did not seed');
    await new Promise((r) => setTimeout(r, 100));
  }
  const setup = await a.json('/api/v1/auth/setup', { method: 'POST', json: { email: 'owner@example.test', password: TEST_PASSWORD, displayName: 'Owner' } });
  t.equal(setup.status, 201, 'the first owner');
  const owner = { headers: { cookie: cookieHeader(setup), 'x-csrf-token': setup.body.data.csrfToken } } as SignedIn;
  const png = readFileSync(await samplePng(tempDataDir(t), 'upload.png', { r: 12, g: 160, b: 220 }));
  const uploaded = await settledAsset(a, owner, (await uploadAsset(a, owner, png, 'upload.png')).id);
  t.equal(uploaded.state, 'ready');
  const paired = await pairScreen(a, owner, { name: 'Paired before the move' });

  const listing = async (app: TestApp, who: SignedIn) => {
    const names = async (p: string) => ((await app.json(p, { headers: who.headers })).body.data.items as any[]).map((x) => `${x.id} ${x.name}`).sort();
    return {
      screens: await names('/api/v1/screens?limit=500'),
      playlists: await names('/api/v1/playlists?limit=500'),
      assets: await names('/api/v1/assets?limit=500'),
      layouts: await names('/api/v1/layouts?limit=500'),
      schedules: await names('/api/v1/schedules?limit=500'),
    };
  };
  const before = await listing(a, owner);
  t.equal(before.screens.length, 4, 'three demo screens and the paired one');
  t.equal(before.assets.length, 5, 'four demo assets and the upload');
  const preview = await a.fetch(`/api/v1/assets/${uploaded.id}/preview`, { headers: owner.headers });
  t.equal(preview.status, 200);
  const bytesBefore = Buffer.from(await preview.arrayBuffer());

  const url = (await freshPostgresDatabase(t)).url;
  const refused = await cli(dataDir, ['migrate-to', url], { PLACARD_PORT: String(new URL(first.url).port), PLACARD_HOST: '127.0.0.1' });
  t.equal(refused.code, 1, 'refused while the server answers');
  t.match(refused.err, /the server answers at .*stop it first/);
  t.same(await rowsOf(url, 'select count(*)::int as n from screens'), [{ n: 0 }], 'nothing copied meanwhile');

  await stop(first);
  const moved = await cli(dataDir, ['migrate-to', url]);
  t.equal(moved.code, 0, moved.err);
  t.match(moved.out, /target: .*\(schema \d+, already current; empty\)/, 'the migrated, empty database is accepted');
  t.match(moved.out, /\n {2}screens +4 {2}[0-9a-f]{16} {2}ok\n/, 'screens: 4 rows, checksums match');
  t.match(moved.out, /\n {2}assets +5 {2}[0-9a-f]{16} {2}ok\n/);
  t.match(moved.out, /total: \d+ rows in \d+ tables; every row count and checksum matches/);
  t.match(moved.out, /media: \d+ files stay in .*media.*\nmedia: every recorded file is present/);
  t.notMatch(moved.out, /MISMATCH/);
  t.equal((await rowsOf(url, 'select count(*)::int as n from media_files'))[0].n > 5, true, 'media rows copied');

  // Without a URL: PLACARD_DATABASE_URL's, as an operator who configured the service first runs it.
  const again = await cli(dataDir, ['migrate-to', '--verify-only'], { PLACARD_DATABASE_URL: url });
  t.equal(again.code, 0, `verifies again: ${again.err}`);
  t.match(again.out, /total: \d+ rows in \d+ tables; every row count and checksum matches/, 'the configured database verified');

  // A media file gone from the shared directory: said as a warning, the data still verifies.
  const mediaFile = new MediaStore(dataDir).pathOf(uploaded.sha256);
  renameSync(mediaFile, `${mediaFile}.away`);
  const warned = await cli(dataDir, ['migrate-to', url, '--verify-only']);
  t.equal(warned.code, 0, warned.err);
  t.match(warned.out, new RegExp(`warning: 1 media file\\(s\\) recorded in the database are missing[^\\n]*\\n {2}${uploaded.sha256}`));
  renameSync(`${mediaFile}.away`, mediaFile);

  const second = await startServerProcess(t, dataDir, { ...env, PLACARD_DATABASE_URL: url });
  const b = client(second, dataDir);
  const login = await b.json('/api/v1/auth/login', { method: 'POST', json: { email: 'owner@example.test', password: TEST_PASSWORD } });
  t.equal(login.status, 200, 'the owner signs in on PostgreSQL with the same password');
  const ownerB = { headers: { cookie: cookieHeader(login), 'x-csrf-token': login.body.data.csrfToken } } as SignedIn;
  const demo = await b.json('/api/v1/demo');
  t.equal(demo.body.data.seeding, false, 'the demo is not seeded again: its meta row came along');
  t.same(await listing(b, ownerB), before, 'screens, playlists, assets, layouts, schedules: the same ids and names');
  const previewB = await b.fetch(`/api/v1/assets/${uploaded.id}/preview`, { headers: ownerB.headers });
  t.equal(previewB.status, 200);
  const bytesAfter = Buffer.from(await previewB.arrayBuffer());
  t.ok(bytesAfter.equals(bytesBefore), 'the asset downloads with the same bytes');
  const shas = new Set([uploaded.sha256, ...uploaded.variants.map((v: any) => v.sha256)]);
  t.ok(shas.has(createHash('sha256').update(bytesAfter).digest('hex')), 'bytes of one of its recorded files');
  t.equal((await b.json('/api/v1/player/config', { headers: paired.headers })).status, 200, 'the paired screen authenticates with its credential');
  const newer = await pairScreen(b, ownerB, { name: 'Paired after the move' });
  const nums = await rowsOf(url, 'select id, num from screens order by num');
  t.equal(nums.length, 5);
  t.equal(nums.at(-1).id, newer.screenId, 'a new screen gets a number after the copied ones (the sequence moved on)');
  t.equal(new Set(nums.map((r) => r.num)).size, 5);
  await stop(second);
});

/** A data directory with a migrated SQLite database holding awkward values and a table past the progress step. */
async function sourceDir(t: Test): Promise<string> {
  const dataDir = tempDataDir(t);
  const opened = openDatabase(path.join(dataDir, 'placard.db'));
  await migrate(opened.db);
  const s = opened.sqlite;
  // The child's key sorts before its parent's: the copy must still insert the parent first.
  s.prepare('insert into content_folders (id, name, parent_id, created_at, updated_at) values (?, ?, ?, ?, ?)').run('p', 'parent', null, 't', 't');
  s.prepare('insert into content_folders (id, name, parent_id, created_at, updated_at) values (?, ?, ?, ?, ?)').run('c', 'child', 'p', 't', 't');
  s.prepare('insert into data_output_blobs (sha256, bytes, size_bytes, created_at) values (?, ?, ?, ?)').run(
    'b1',
    Buffer.from([0, 255, 16, 0]),
    9007199254740993n,
    'ünïcødé ✓',
  );
  const insert = s.prepare('insert into meta (key, value) values (?, ?)');
  s.transaction(() => {
    for (let i = 0; i < 12_345; i++) insert.run(`k${String(i).padStart(5, '0')}`, `value ${i} 'quoted' "double"`);
  })();
  await opened.close();
  return dataDir;
}

t.test(
  'values survive exactly, progress is reported, a tampered copy is caught, a target holding data is refused untouched',
  { skip: NO_POSTGRES },
  async (t) => {
    const dataDir = await sourceDir(t);
    const url = (await freshPostgresDatabase(t)).url;
    const moved = await cli(dataDir, ['migrate-to', url]);
    t.equal(moved.code, 0, moved.err);
    t.match(moved.err, /migrate-to: meta: 10000\/12345 rows\n/, 'a progress line while copying the large table');
    t.match(moved.err, /migrate-to: meta: 12345\/12345 rows\n/);
    t.match(
      moved.err,
      /migrate-to: verifying meta: 10000 rows read from SQLite\nmigrate-to: verifying meta: 10000 rows read from PostgreSQL\n/,
      'and while verifying it',
    );
    t.match(moved.out, /\n {2}meta +12345 {2}[0-9a-f]{16} {2}ok\n/);
    t.match(moved.out, /\n {2}content_folders +2 {2}[0-9a-f]{16} {2}ok\n/, 'a self-referencing table, child first in the source, copied parents first');
    const blob = await rowsOf(url, `select encode(bytes, 'hex') as hex, size_bytes::text as size, created_at from data_output_blobs`);
    t.same(blob, [{ hex: '00ff1000', size: '9007199254740993', created_at: 'ünïcødé ✓' }], 'bytes, a 64-bit integer past 2^53 and UTF-8 text, exact');

    // Tampered after the copy: one value changed, then one row gone: each is a mismatch, exit 1.
    await rowsOf(url, `update meta set value = 'value 7 tampered' where key = 'k00007'`);
    const changed = await cli(dataDir, ['migrate-to', url, '--verify-only']);
    t.equal(changed.code, 1);
    t.match(changed.out, /\n {2}meta +12345 {2}[0-9a-f]{16} {2}MISMATCH \(PostgreSQL: 12345 rows, [0-9a-f]{16}; same count, different values\)/);
    t.match(changed.out, /verification FAILED: 1 of \d+ tables differ \(meta\)/);
    t.match(changed.err, /does not match the SQLite database: do not switch to it/);
    await rowsOf(url, `update meta set value = 'value 7 ''quoted'' "double"' where key = 'k00007'`);
    await rowsOf(url, `delete from content_folders where id = 'c'`);
    const gone = await cli(dataDir, ['migrate-to', url, '--verify-only']);
    t.equal(gone.code, 1);
    t.match(gone.out, /content_folders +2 {2}[0-9a-f]{16} {2}MISMATCH \(PostgreSQL: 1 rows/);
    t.notMatch(gone.out, /meta +12345 .*MISMATCH/, 'the restored value matches again');

    // The target now holds data: refused before anything is written, the rows as they were.
    const before = await rowsOf(url, 'select (select count(*)::int from meta) as meta, (select count(*)::int from content_folders) as folders');
    const refused = await cli(dataDir, ['migrate-to', url]);
    t.equal(refused.code, 1);
    t.match(refused.err, /the target database already holds data: .*content_folders \(1 row\).*meta \(at least 1000 rows\).*changed nothing/);
    t.ok(noStack(refused.err));
    t.same(await rowsOf(url, 'select (select count(*)::int from meta) as meta, (select count(*)::int from content_folders) as folders'), before, 'untouched');
  },
);

t.test('a failed copy leaves the target empty (one transaction)', { skip: NO_POSTGRES }, async (t) => {
  const dataDir = await sourceDir(t);
  // A dangling reference SQLite let in with its foreign keys off: PostgreSQL refuses it, late in the copy.
  const opened = openDatabase(path.join(dataDir, 'placard.db'));
  opened.sqlite.pragma('foreign_keys = OFF');
  opened.sqlite
    .prepare('insert into widget_bundles (id, widget_id, revision, sha256, input_sha256, size_bytes, built_at) values (?, ?, ?, ?, ?, ?, ?)')
    .run('wb', 'no-such-widget', 1, 'no-such-blob', 'x', 1, 't');
  await opened.close();
  const url = (await freshPostgresDatabase(t)).url;
  const failed = await cli(dataDir, ['migrate-to', url]);
  t.equal(failed.code, 1);
  t.match(failed.err, /copying widget_bundles failed: .*foreign key.*the transaction was rolled back, the target holds no copied row/);
  t.ok(noStack(failed.err));
  t.same(await rowsOf(url, 'select (select count(*)::int from meta) as meta, (select count(*)::int from content_folders) as folders'), [
    { meta: 0, folders: 0 },
  ]);
});

t.test('the checksum is a real comparison: any changed, missing, reordered or retyped value differs', async (t) => {
  const rows = [
    [1n, 'a', Buffer.from([1, 2]), null, 0.5],
    [2n, 'b', Buffer.from([3]), 7n, 5],
  ];
  const source = await tableChecksum(rows);
  // PostgreSQL's side: int8 arrives as text, float8 as a number, bytea as a Buffer.
  const asPostgres = rows.map((r) => [String(r[0]), r[1], r[2], r[3] === null ? null : String(r[3]), r[4]]);
  const numeric = [true, false, false, true, true];
  t.ok(compareTable('x', source, await tableChecksum(asPostgres, numeric)).ok, 'the same rows, as each database answers them, match');
  const tampered = [
    { what: 'a changed text', rows: [asPostgres[0], [...asPostgres[1]!.slice(0, 1), 'B', ...asPostgres[1]!.slice(2)]] },
    { what: 'a changed blob', rows: [[...asPostgres[0]!.slice(0, 2), Buffer.from([1, 3]), ...asPostgres[0]!.slice(3)], asPostgres[1]] },
    { what: 'a null made empty text', rows: [[...asPostgres[0]!.slice(0, 3), '', asPostgres[0]![4]], asPostgres[1]] },
    { what: 'a missing row', rows: [asPostgres[0]] },
    { what: 'rows in another order', rows: [asPostgres[1], asPostgres[0]] },
    { what: 'a number turned into text', rows: [asPostgres[0], [...asPostgres[1]!.slice(0, 4), '5']] },
  ];
  for (const { what, rows: other } of tampered) {
    const check = compareTable('x', source, await tableChecksum(other as unknown[][], what === 'a number turned into text' ? numeric.slice(0, 4) : numeric));
    t.notOk(check.ok, `${what} is a mismatch`);
  }
});

t.test('bad input: usage, a URL that is not PostgreSQL, an unreachable server, an older SQLite schema', async (t) => {
  const dataDir = tempDataDir(t);
  const opened = openDatabase(path.join(dataDir, 'placard.db'));
  await migrate(opened.db);
  await opened.close();
  const usage = await cli(dataDir, ['migrate-to']);
  t.equal(usage.code, 1);
  t.match(usage.err, /usage: placard migrate-to \[postgres:\/\/.*default: PLACARD_DATABASE_URL/, 'no URL and none configured');
  const mysql = await cli(dataDir, ['migrate-to', 'mysql://root:secret@db/placard']);
  t.equal(mysql.code, 1);
  t.match(mysql.err, /not a PostgreSQL URL \(mysql:\.\.\.\): expected postgres:\/\/user:password@host:5432\/database/);
  t.notMatch(mysql.err, /secret/, 'the password is not echoed');
  const noDb = await cli(dataDir, ['migrate-to', 'postgres://placard@127.0.0.1:55432']);
  t.equal(noDb.code, 1);
  t.match(noDb.err, /the URL names no database/);
  const unreachable = await cli(dataDir, ['migrate-to', 'postgres://placard:secret@127.0.0.1:1/placard']);
  t.equal(unreachable.code, 1);
  t.match(unreachable.err, /cannot connect to postgres:\/\/placard:\*\*\*@127\.0\.0\.1:1\/placard: .*ECONNREFUSED/);
  t.notMatch(unreachable.err, /secret/);
  for (const r of [usage, mysql, noDb, unreachable]) t.ok(noStack(r.err), 'one line, no stack trace');
  t.match((await cli(dataDir, ['help'])).out, /migrate-to \[URL\] \[--verify-only\]/, 'in the help');

  const older = tempDataDir(t);
  const old = openDatabase(path.join(older, 'placard.db'));
  await migrate(old.db, MIGRATIONS.slice(0, 10));
  await old.close();
  const stale = await cli(older, ['migrate-to', 'postgres://placard@127.0.0.1:1/placard']);
  t.equal(stale.code, 1);
  t.match(stale.err, /the SQLite database is at schema \d+, this server's is \d+: run `placard migrate` first/);
  const empty = tempDataDir(t);
  const none = await cli(empty, ['migrate-to', 'postgres://placard@127.0.0.1:1/placard']);
  t.equal(none.code, 1);
  t.match(none.err, /no database at .*placard\.db/);
});

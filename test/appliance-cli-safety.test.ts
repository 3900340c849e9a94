import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { discardPartialBackups } from '../server/src/modules/system/backup-store.js';
import { getSettings, updateSettings } from '../server/src/modules/system/settings.js';
import { migrate, openDatabase, postgresUrlOf } from '../server/src/platform/db/database.js';
import { cookieHeader, signIn, TEST_PASSWORD } from './helpers/auth.js';
import { startApp, tempDataDir } from './helpers/harness.js';
import { cliDatabaseEnv, testDatabaseTarget } from './helpers/postgres.js';

// The CLI's guards: what it refuses, what it must not delete, what a password reset undoes.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function cli(
  dataDir: string,
  args: string[],
  options: { stdin?: string; env?: Record<string, string> } = {},
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import=tsx', path.join(ROOT, 'server/src/cli.ts'), ...args], {
      cwd: ROOT,
      env: { ...process.env, PLACARD_DATA_DIR: dataDir, PLACARD_PORT: '1', ...options.env },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    child.on('close', (code) => resolve({ code, out, err }));
    child.stdin.end(options.stdin ?? '');
  });
}

t.test('placard backup discards only partial files whose writer is gone or that nobody touched for an hour', async (t) => {
  const dataDir = tempDataDir(t);
  const target = await testDatabaseTarget(t, dataDir);
  const opened = openDatabase(target);
  await migrate(opened.db);
  await opened.close();
  const backups = path.join(dataDir, 'backups');
  mkdirSync(backups, { recursive: true });
  const dead = spawnSync(process.execPath, ['-e', '0']).pid; // exited: its pid names a writer that is gone
  const hoursAgo = new Date(Date.now() - 2 * 3_600_000);
  const files = {
    // This test process stands for a server mid-backup and mid-upload: alive, writing.
    liveBackup: `.partial-${process.pid}-placard-backup-20990101T000000000Z-manual-abcd.tar`,
    liveSnapshot: `.partial-${process.pid}-placard-backup-20990101T000000000Z-manual-abcd.tar.db`,
    liveUpload: `.partial-${process.pid}-upload-0123456789ab.tar`,
    deadWriter: `.partial-${dead}-placard-backup-20990101T000000000Z-scheduled-ef01.tar`,
    liveButStale: `.partial-${process.pid}-upload-abcdefabcdef.tar`,
    legacyFresh: '.partial-upload-ffffffffffff.tar',
    legacyStale: '.partial-placard-backup-20200101T000000000Z-manual-0000.tar',
  };
  for (const name of Object.values(files)) writeFileSync(path.join(backups, name), 'partial bytes');
  utimesSync(path.join(backups, files.liveButStale), hoursAgo, hoursAgo);
  utimesSync(path.join(backups, files.legacyStale), hoursAgo, hoursAgo);

  const res = await cli(dataDir, ['backup', '--no-media'], { env: cliDatabaseEnv(target) });
  t.equal(res.code, 0, res.err);
  const left = readdirSync(backups)
    .filter((n) => n.startsWith('.partial-'))
    .sort();
  t.same(
    left,
    [files.liveBackup, files.liveSnapshot, files.liveUpload, files.legacyFresh].sort(),
    'the live writer’s files survive; the dead and the stale go',
  );
  t.ok(existsSync(res.out.trim()), 'and the backup was written');

  // At the server's start nothing of its own is under way: its own pid counts as gone.
  const removed = await discardPartialBackups(dataDir, { atStart: true });
  t.same(removed.sort(), [files.liveBackup, files.liveSnapshot, files.liveUpload].sort());
  t.same(
    readdirSync(backups).filter((n) => n.startsWith('.partial-')),
    [files.legacyFresh],
  );
});

t.test('placard restore refuses a corrupt file, and refuses while the server answers', async (t) => {
  const app = await startApp(t);
  const env = cliDatabaseEnv(postgresUrlOf(app.database));
  const owner = await signIn(app);
  await updateSettings(app.deps.db, { serverName: 'Live' });
  const backup = await cli(app.dataDir, ['backup', '--no-media'], { env });
  t.equal(backup.code, 0, backup.err);
  const file = backup.out.trim();
  await updateSettings(app.deps.db, { serverName: 'Live, later' });

  // While the server answers on its port: refused, nothing touched.
  const port = new URL(app.url).port;
  const answering = await cli(app.dataDir, ['restore', file], { env: { ...env, PLACARD_PORT: port, PLACARD_HOST: '127.0.0.1' } });
  t.equal(answering.code, 1);
  t.match(answering.err, new RegExp(`the server answers at http://127\\.0\\.0\\.1:${port}: stop it first`));
  t.equal((await getSettings(app.deps.db)).serverName, 'Live, later', 'the live database is untouched');
  t.equal((await app.json('/api/v1/settings', { headers: owner.headers })).status, 200, 'the server carries on');

  // A damaged archive: refused after reading it, the data directory unchanged.
  const bytes = readFileSync(file);
  bytes[bytes.length - 2000] = bytes[bytes.length - 2000]! ^ 0xff;
  const corrupt = path.join(tempDataDir(t), 'corrupt.tar');
  writeFileSync(corrupt, bytes);
  const refused = await cli(app.dataDir, ['restore', corrupt], { env });
  t.equal(refused.code, 1);
  t.match(refused.err, /refused: .*(checksum|damaged|manifest|JSON).*; the data directory is unchanged/);
  t.equal((await getSettings(app.deps.db)).serverName, 'Live, later');
  t.same(
    readdirSync(app.dataDir).filter((n) => n.startsWith('.restore-staging') || n === 'restore-journal.json'),
    [],
    'no staging left',
  );
});

t.test('placard reset-password ends the user’s sessions, clears disabled_at and lifts sign-in throttling', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  const email = owner.user.email as string;
  t.equal((await app.json('/api/v1/settings', { headers: owner.headers })).status, 200, 'signed in');
  // Locked out: wrong passwords until the throttle answers 429, and disabled by another owner.
  let throttled = 0;
  for (let i = 0; i < 40 && !throttled; i++) {
    const res = await app.json('/api/v1/auth/login', { method: 'POST', json: { email, password: 'not the password at all' } });
    if (res.status === 429) throttled = i + 1;
  }
  t.ok(throttled > 0, `throttled after ${throttled} failures`);
  await app.deps.db.updateTable('users').set({ disabled_at: new Date().toISOString() }).where('email', '=', email).execute();
  t.ok((await app.deps.db.selectFrom('auth_throttle').selectAll().execute()).length > 0);

  const reset = await cli(app.dataDir, ['reset-password', email, '--password-stdin'], {
    stdin: 'a completely new passphrase\n',
    env: cliDatabaseEnv(postgresUrlOf(app.database)),
  });
  t.equal(reset.code, 0, reset.err);
  t.match(reset.out, /their sessions ended/);

  const user = await app.deps.db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirstOrThrow();
  t.equal(user.disabled_at, null, 'no longer disabled');
  t.same(await app.deps.db.selectFrom('sessions').select('id').where('user_id', '=', user.id).execute(), [], 'no session left');
  t.same(await app.deps.db.selectFrom('auth_throttle').selectAll().execute(), [], 'throttling lifted');
  t.equal((await app.json('/api/v1/settings', { headers: owner.headers })).status, 401, 'the old session no longer works');
  t.equal((await app.json('/api/v1/auth/login', { method: 'POST', json: { email, password: TEST_PASSWORD } })).status, 401, 'the old password is gone');
  const login = await app.json('/api/v1/auth/login', { method: 'POST', json: { email, password: 'a completely new passphrase' } });
  t.equal(login.status, 200, JSON.stringify(login.body));
  t.ok(cookieHeader(login), 'signed in with the new password');
});

import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, chownSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { listBackups } from '../server/src/modules/system/backup-store.js';
import { getSettings, updateSettings } from '../server/src/modules/system/settings.js';
import { migrate, openDatabase } from '../server/src/platform/db/database.js';
import { signIn } from './helpers/auth.js';
import { startApp, tempDataDir, type TestApp } from './helpers/harness.js';
import { cliDatabaseEnv, testDatabaseTarget } from './helpers/postgres.js';

// Encrypted backups (age, passphrase) and the copy to a mounted drive (PLACARD_BACKUP_COPY_DIR),
// by the API, the configured passphrase file and the CLI. See docs/operations.md, Backups.

// Each encryption or decryption derives its key with scrypt (age's work factor 18: seconds of
// CPU in JavaScript, more on a loaded machine): this file needs more than the default 120 s.
t.setTimeout(15 * 60_000);

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PASSPHRASE = 'granite-otter-lantern-velvet';
const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');

async function run(app: TestApp, headers: Record<string, string>, action: string, options: Record<string, unknown> = {}) {
  return app.json(`/api/v1/system/maintenance/${action}`, { method: 'POST', headers, json: { wait: true, options } });
}

async function serverName(app: TestApp) {
  return (await getSettings(app.deps.db)).serverName;
}

function cliIn(
  dataDir: string,
  args: string[],
  options: { stdin?: string; env?: Record<string, string>; as?: string[] } = {},
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const argv = [...(options.as ?? []), process.execPath, '--import=tsx', path.join(ROOT, 'server/src/cli.ts'), ...args];
    const child = spawn(argv[0]!, argv.slice(1), { cwd: ROOT, env: { ...process.env, PLACARD_DATA_DIR: dataDir, PLACARD_PORT: '1', ...options.env } });
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    child.on('close', (code) => resolve({ code, out, err }));
    child.stdin.end(options.stdin ?? '');
  });
}

t.test('an encrypted backup by the API: age file, listed as encrypted, restored only with its passphrase', async (t) => {
  const app = await startApp(t);
  const owner = await signIn(app);
  await updateSettings(app.deps.db, { serverName: 'Encrypted state' });

  const short = await run(app, owner.headers, 'backup', { passphrase: 'too short' });
  t.equal(short.status, 400, 'a short passphrase is refused');
  t.match(short.body.error.message, /options\.passphrase/);

  const made = await run(app, owner.headers, 'backup', { passphrase: PASSPHRASE, includeMedia: false });
  t.equal(made.status, 200, JSON.stringify(made.body));
  t.equal(made.body.data.state, 'succeeded', JSON.stringify(made.body.data.error));
  const name: string = made.body.data.result.backup.name;
  t.match(name, /^placard-backup-\d{8}T\d{9}Z-manual-[a-z0-9]{4}\.tar\.age$/);
  const file = path.join(app.dataDir, 'backups', name);
  const bytes = readFileSync(file);
  t.equal(bytes.subarray(0, 22).toString('latin1'), 'age-encryption.org/v1\n', 'an age file');
  t.equal(bytes.indexOf('placard-backup.json'), -1, 'no plain tar header inside');
  const secret = readFileSync(path.join(app.dataDir, 'secret.key'));
  t.equal(bytes.indexOf(secret.subarray(0, 24)), -1, 'secret.key is not in the clear');

  const listed = await app.json('/api/v1/system/backups', { headers: owner.headers });
  t.equal(listed.status, 200);
  const item = listed.body.data.items.find((b: { name: string }) => b.name === name);
  t.match(item, { encrypted: true, kind: 'manual', serverVersion: null, schemaVersion: null, includesMedia: null, sizeBytes: bytes.length });
  const download = await app.fetch(`/api/v1/system/backups/${name}`, { headers: owner.headers });
  t.equal(download.status, 200);
  t.equal(download.headers.get('content-type'), 'application/octet-stream');
  t.equal(Buffer.from(await download.arrayBuffer()).equals(bytes), true, 'downloaded as it is');

  await updateSettings(app.deps.db, { serverName: 'Changed later' });
  const noPass = await run(app, owner.headers, 'restore', { backup: name });
  t.equal(noPass.body.data.state, 'failed');
  t.match(noPass.body.data.error, { code: 'validation_failed', message: /is encrypted: give options\.passphrase/ });
  const wrong = await run(app, owner.headers, 'restore', { backup: name, passphrase: 'not-the-right-passphrase' });
  t.equal(wrong.body.data.state, 'failed');
  t.match(wrong.body.data.error, { code: 'validation_failed', message: /passphrase does not open this encrypted backup/ });
  t.equal(await serverName(app), 'Changed later', 'a refused restore changed nothing');
  t.equal((await app.fetch('/readyz')).status, 200);

  const restored = await run(app, owner.headers, 'restore', { backup: name, passphrase: PASSPHRASE });
  t.equal(restored.body.data.state, 'succeeded', JSON.stringify(restored.body.data.error));
  t.equal(await serverName(app), 'Encrypted state');

  // Upload it back (an admin moving to a new box): verified by decrypting it.
  const owner2 = await signIn(app);
  const upload = (headers: Record<string, string>) =>
    app.json('/api/v1/system/backups', { method: 'POST', headers: { ...owner2.headers, 'content-type': 'application/octet-stream', ...headers }, body: bytes });
  const noHeader = await upload({});
  t.equal(noHeader.status, 400);
  t.match(noHeader.body.error.message, /encrypted: send its passphrase in the Placard-Backup-Passphrase header/);
  const badHeader = await upload({ 'placard-backup-passphrase': 'not-the-right-passphrase' });
  t.equal(badHeader.status, 400);
  t.match(badHeader.body.error.message, /passphrase does not open/);
  const shortHeader = await upload({ 'placard-backup-passphrase': 'short' });
  t.equal(shortHeader.status, 400);
  const damaged = Buffer.from(bytes);
  damaged[damaged.length - 100] = damaged[damaged.length - 100]! ^ 0xff;
  const broken = await app.json('/api/v1/system/backups', {
    method: 'POST',
    headers: { ...owner2.headers, 'content-type': 'application/octet-stream', 'placard-backup-passphrase': PASSPHRASE },
    body: damaged,
  });
  t.equal(broken.status, 400, 'a damaged encrypted backup is refused');
  const ok = await upload({ 'placard-backup-passphrase': PASSPHRASE });
  t.equal(ok.status, 201, JSON.stringify(ok.body));
  t.match(ok.body.data, { kind: 'uploaded', encrypted: true });
  t.match(ok.body.data.name, /-uploaded-[a-z0-9]{4}\.tar\.age$/);
});

t.test(
  'PLACARD_BACKUP_PASSPHRASE_FILE: every backup encrypted with it, restores open with it; PLACARD_BACKUP_COPY_DIR gets a verified copy only when marked',
  async (t) => {
    const dir = tempDataDir(t);
    const passFile = path.join(dir, 'backup.passphrase');
    writeFileSync(passFile, `${PASSPHRASE}\n`, { mode: 0o640 });
    const copyDir = path.join(dir, 'usb');
    mkdirSync(copyDir);
    const app = await startApp(t, { config: { backupPassphraseFile: passFile, backupCopyDir: copyDir } });
    const owner = await signIn(app);
    await updateSettings(app.deps.db, { serverName: 'First', backups: { keep: 1 } });

    // The drive is not mounted (no marker): the backup stands, the copy is refused and says why.
    const first = await run(app, owner.headers, 'backup', { includeMedia: false });
    t.equal(first.body.data.state, 'succeeded', JSON.stringify(first.body.data.error));
    const firstName: string = first.body.data.result.backup.name;
    t.match(firstName, /\.tar\.age$/, 'encrypted with the configured passphrase');
    t.match(first.body.data.result.backup.copy, { ok: false, dir: copyDir, error: /no \.placard-backup-target: the drive is probably not mounted/ });
    t.same(readdirSync(copyDir), [], 'nothing written into the empty mount point');

    writeFileSync(path.join(copyDir, '.placard-backup-target'), 'marker\n');
    await updateSettings(app.deps.db, { serverName: 'Second' });
    const second = await run(app, owner.headers, 'backup', { includeMedia: false });
    t.equal(second.body.data.state, 'succeeded');
    const secondName: string = second.body.data.result.backup.name;
    t.match(second.body.data.result.backup.copy, { ok: true, path: path.join(copyDir, secondName) });
    t.equal(sha256(path.join(copyDir, secondName)), sha256(path.join(app.dataDir, 'backups', secondName)), 'the copy is the same bytes');
    t.same(
      (await listBackups(app.dataDir)).map((b) => b.name),
      [secondName],
      'keep 1 in backups/',
    );

    await updateSettings(app.deps.db, { serverName: 'Third' });
    const third = await run(app, owner.headers, 'backup', { includeMedia: false });
    const thirdName: string = third.body.data.result.backup.name;
    t.same(third.body.data.result.backup.copy.pruned, [secondName], 'retention applies on the drive too');
    t.same(
      readdirSync(copyDir).filter((f) => !f.startsWith('.')),
      [thirdName],
    );

    // Restore from the copy (the box's disk died): the configured passphrase opens it.
    await updateSettings(app.deps.db, { serverName: 'Lost' });
    const owner2 = await signIn(app);
    const uploaded = await app.json('/api/v1/system/backups', {
      method: 'POST',
      headers: { ...owner2.headers, 'content-type': 'application/octet-stream' },
      body: readFileSync(path.join(copyDir, thirdName)),
    });
    t.equal(uploaded.status, 201, JSON.stringify(uploaded.body));
    const restored = await run(app, owner2.headers, 'restore', { backup: uploaded.body.data.name });
    t.equal(restored.body.data.state, 'succeeded', JSON.stringify(restored.body.data.error));
    t.equal(await serverName(app), 'Third');

    // A passphrase file that cannot be read fails the backup with a clear message.
    writeFileSync(passFile, 'short\n');
    const owner3 = await signIn(app);
    const bad = await run(app, owner3.headers, 'backup', { includeMedia: false });
    t.equal(bad.body.data.state, 'failed');
    t.match(bad.body.data.error.message, /backup passphrase file .*at least 12 characters/);
  },
);

t.test('placard backup/restore --passphrase-stdin, and --out: a directory it cannot write is one clear line, before any work', async (t) => {
  const dataDir = tempDataDir(t);
  // The CLI's database: the file in the data directory, or PLACARD_DATABASE_URL's.
  const target = await testDatabaseTarget(t, dataDir);
  const dbEnv = cliDatabaseEnv(target);
  const cli = (dir: string, args: string[], options: Parameters<typeof cliIn>[2] = {}) => cliIn(dir, args, { ...options, env: { ...dbEnv, ...options.env } });
  const opened = openDatabase(target);
  await migrate(opened.db);
  await updateSettings(opened.db, { serverName: 'CLI encrypted' });
  await opened.close();

  const made = await cli(dataDir, ['backup', '--no-media', '--passphrase-stdin'], { stdin: `${PASSPHRASE}\n` });
  t.equal(made.code, 0, made.err);
  const file = made.out.trim();
  t.match(path.basename(file), /-cli-[a-z0-9]{4}\.tar\.age$/);
  const listed = await cli(dataDir, ['backups']);
  t.match(listed.out, new RegExp(`${path.basename(file).replaceAll('.', '\\.')}\\t.*\\tencrypted`));
  const short = await cli(dataDir, ['backup', '--passphrase-stdin'], { stdin: 'short\n' });
  t.equal(short.code, 1);
  t.match(short.err, /^placard: the passphrase must be at least 12 characters\n$/);

  const later = openDatabase(target);
  await updateSettings(later.db, { serverName: 'Changed' });
  await later.close();
  const noPass = await cli(dataDir, ['restore', file]);
  t.equal(noPass.code, 1);
  t.match(noPass.err, /is encrypted: give its passphrase on stdin \(--passphrase-stdin\)/);
  const wrong = await cli(dataDir, ['restore', file, '--passphrase-stdin'], { stdin: 'not-the-right-passphrase\n' });
  t.equal(wrong.code, 1);
  t.match(wrong.err, /^placard: refused: the passphrase does not open this encrypted backup; the data directory is unchanged\n$/);
  const right = await cli(dataDir, ['restore', file, '--passphrase-stdin'], { stdin: `${PASSPHRASE}\n` });
  t.equal(right.code, 0, right.err);
  const check = openDatabase(target);
  t.equal((await getSettings(check.db)).serverName, 'CLI encrypted');
  await check.close();

  // --out: missing, not a directory.
  const before = readdirSync(path.join(dataDir, 'backups')).length;
  const missing = await cli(dataDir, ['backup', '--no-media', '--out', '/nonexistent/dir']);
  t.equal(missing.code, 1);
  t.equal(missing.err, 'placard: --out /nonexistent/dir does not exist\n', 'one line, no stack');
  const notDir = await cli(dataDir, ['backup', '--no-media', '--out', file]);
  t.equal(notDir.code, 1);
  t.match(notDir.err, /^placard: --out .* is not a directory\n$/);
  t.equal(readdirSync(path.join(dataDir, 'backups')).length, before, 'refused before making a backup');
  const outDir = path.join(dataDir, 'out');
  mkdirSync(outDir);
  const good = await cli(dataDir, ['backup', '--no-media', '--out', outDir]);
  t.equal(good.code, 0, good.err);
  t.ok(existsSync(good.out.trim()) && good.out.trim().startsWith(outDir), 'written into --out');

  // A directory the service user cannot write (the placard command runs as that user).
  if (process.getuid?.() !== 0) {
    t.comment('not root: cannot run the CLI as another user here');
    return;
  }
  chmodSync(path.dirname(dataDir), 0o755);
  chmodSync(dataDir, 0o755);
  const walk = (d: string): string[] =>
    readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? [path.join(d, e.name), ...walk(path.join(d, e.name))] : [path.join(d, e.name)]));
  for (const f of [dataDir, ...walk(dataDir)]) chownSync(f, 65534, 65534);
  const rootOwned = path.join(dataDir, 'root-only');
  mkdirSync(rootOwned, { mode: 0o755 });
  chownSync(rootOwned, 0, 0);
  const denied = await cli(dataDir, ['backup', '--no-media', '--out', rootOwned], {
    as: ['setpriv', '--reuid=65534', '--regid=65534', '--clear-groups'],
    env: { HOME: dataDir, TMPDIR: dataDir },
  });
  t.equal(denied.code, 1, denied.err);
  // (tap's process tracking, injected into every child, may add its own complaint after it.)
  t.match(
    denied.err.split('\n')[0],
    /^placard: --out .*root-only is not writable by this user \(this command runs as uid 65534: the placard command runs as the placard user\); choose a directory it can write, or give it to that user first$/,
  );
  t.notMatch(denied.err, /backup\.ts|commandBackup/, 'no stack trace of the backup');
});

import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { migrate, openDatabase } from '../server/src/platform/db/database.js';
import { hashPassword, verifyPassword } from '../server/src/modules/accounts/passwords.js';
import { findUserByEmail, insertUser } from '../server/src/modules/accounts/users.repo.js';
import { getSettings, updateSettings } from '../server/src/modules/system/settings.js';
import { tempDataDir } from './helpers/harness.js';
import { cliIn } from './helpers/cli.js';
import { cliDatabaseEnv, testDatabaseTarget } from './helpers/postgres.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

t.test('placard CLI: migrate, backup, restore, reset-password, bad input', async (t) => {
  const dataDir = tempDataDir(t);
  // The database the CLI opens: the file in the data directory, or PLACARD_DATABASE_URL's.
  const target = await testDatabaseTarget(t, dataDir, { empty: true });
  const env = cliDatabaseEnv(target);
  const cli = (dir: string, args: string[], stdin?: string) => cliIn(dir, args, stdin, env);
  const migrated = await cli(dataDir, ['migrate']);
  t.equal(migrated.code, 0, migrated.err);
  t.match(migrated.out, /applied migrations/);

  const opened = openDatabase(target);
  await migrate(opened.db);
  await insertUser(opened.db, {
    email: 'owner@example.test',
    displayName: 'Owner',
    role: 'owner',
    passwordHash: await hashPassword('an old password nobody remembers'),
  });
  await updateSettings(opened.db, { serverName: 'Before backup' });
  await opened.close();

  const backup = await cli(dataDir, ['backup', '--no-media']);
  t.equal(backup.code, 0, backup.err);
  const file = backup.out.trim();
  t.match(path.basename(file), /^placard-backup-.*-cli-[a-z0-9]{4}\.tar$/);
  const listed = await cli(dataDir, ['backups']);
  t.match(listed.out, path.basename(file));

  const later = openDatabase(target);
  await updateSettings(later.db, { serverName: 'After backup' });
  await later.close();

  const restored = await cli(dataDir, ['restore', file]);
  t.equal(restored.code, 0, restored.err);
  t.match(restored.out, /restored/);
  const check = openDatabase(target);
  t.equal((await getSettings(check.db)).serverName, 'Before backup');
  await check.close();

  const missing = await cli(dataDir, ['restore', '/nonexistent.tar']);
  t.equal(missing.code, 1);
  t.match(missing.err, /no such file/);

  const reset = await cli(dataDir, ['reset-password', 'owner@example.test']);
  t.equal(reset.code, 0, reset.err);
  const password = /new password: (\S+)/.exec(reset.out)?.[1];
  t.ok(password, 'prints the new password');
  const viaStdin = await cli(dataDir, ['reset-password', 'OWNER@example.test', '--password-stdin', '--disable-mfa'], 'a brand new long password\n');
  t.equal(viaStdin.code, 0, viaStdin.err);
  t.notMatch(viaStdin.out, /new password:/, 'a given password is not echoed');
  const db = openDatabase(target);
  const user = await findUserByEmail(db.db, 'owner@example.test');
  t.ok(await verifyPassword(user!.password_hash, 'a brand new long password'));
  await db.close();
  const short = await cli(dataDir, ['reset-password', 'owner@example.test', '--password-stdin'], 'short\n');
  t.equal(short.code, 1);
  const nobody = await cli(dataDir, ['reset-password', 'nobody@example.test']);
  t.equal(nobody.code, 1);
  t.match(nobody.err, /no user/);
  const unknown = await cli(dataDir, ['frobnicate']);
  t.equal(unknown.code, 2);
  const badKind = await cli(dataDir, ['backup', '--kind', 'weird']);
  t.equal(badKind.code, 1);
});

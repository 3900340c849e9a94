import { existsSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import t from 'tap';
import { knownSchemaVersion } from '../server/src/modules/system/backup-format.js';
import { tempDataDir } from './helpers/harness.js';
import { dbState, fakePackage, fakeSystemctl, installAsync, installedWithData, preUpgradeBackups, readyServer, scratchRoot } from './helpers/install.js';

// install.sh --upgrade and --rollback against a scratch root, with the real CLI (backup,
// schema, restore) and a fake systemctl. See test/install-script.test.ts for the rest.

t.test('a failed restart after --upgrade rolls back: the link, and the database when the new version migrated it', async (t) => {
  const dir = tempDataDir(t);
  const root = scratchRoot(dir);
  const port = await readyServer(t);
  const v1 = fakePackage(dir, '1.0.0');
  const data = await installedWithData(t, root, v1, 'Before the upgrade', ['--port', String(port)]);
  const v2 = fakePackage(path.join(dir, 'v2'), '1.1.0');
  const systemctl = fakeSystemctl(dir);
  const env = { PLACARD_INSTALL_SYSTEMCTL: systemctl.bin, PLACARD_FAKE_DB: path.join(data, 'placard.db') };

  // The new version starts, migrates the database, and never becomes ready.
  const failed = await installAsync(v2, ['--root', root, '--upgrade'], { ...env, PLACARD_FAKE_RESTART: 'fail', PLACARD_FAKE_MIGRATE: '1' });
  t.not(failed.status, 0, 'the upgrade reports failure');
  t.match(failed.out, /version 1\.1\.0 did not become ready; rolling back to 1\.0\.0/);
  t.match(failed.out, /version 1\.1\.0 migrated the database and 1\.0\.0 cannot open it/);
  t.match(failed.out, /restoring .*pre-upgrade.*\.tar with version 1\.0\.0/);
  t.match(failed.out, /version 1\.0\.0 is running again/);
  t.equal(readlinkSync(path.join(root, 'opt/placard/current')), '1.0.0', 'current points at the old version again');
  t.notOk(existsSync(path.join(root, 'opt/placard/previous')), 'previous is as it was (none)');
  // Before restoring, install.sh checks the stopped service stayed stopped (never a restore under a running server).
  t.same(systemctl.calls(), [
    'enable placard.service',
    'restart placard.service',
    'stop placard.service',
    'is-active --quiet placard.service',
    'start placard.service',
  ]);
  t.same(dbState(data), { schema: knownSchemaVersion(), serverName: 'Before the upgrade' }, 'the database is the pre-upgrade backup’s');
  const aside = new SQLite(path.join(data, 'placard.db.pre-restore'), { readonly: true });
  t.equal((aside.prepare('select max(version) as v from schema_migrations').get() as { v: number }).v, 999999, 'the migrated database is kept aside');
  aside.close();

  // A new version that fails without touching the database: only the link goes back.
  writeFileSync(systemctl.log, '');
  const failedAgain = await installAsync(v2, ['--root', root, '--upgrade'], { ...env, PLACARD_FAKE_RESTART: 'fail' });
  t.not(failedAgain.status, 0);
  t.match(failedAgain.out, /rolling back to 1\.0\.0/);
  t.notMatch(failedAgain.out, /restoring/, 'nothing to restore: 1.0.0 opens the database');
  t.equal(readlinkSync(path.join(root, 'opt/placard/current')), '1.0.0');
  t.same(systemctl.calls(), ['enable placard.service', 'restart placard.service', 'stop placard.service', 'start placard.service']);
  t.equal(preUpgradeBackups(data).length, 2, 'each upgrade attempt made its backup');

  // A version before `placard schema` cannot say whether it opens the database: the schema
  // the new version found before it started decides.
  const oldCli = path.join(root, 'opt/placard/1.0.0/dist/server/src/cli.js');
  const realCli = readFileSync(oldCli, 'utf8');
  writeFileSync(oldCli, `if (process.argv[2] === 'schema') { console.error('unknown command: schema'); process.exit(2); }\n${realCli}`);
  // The new version's unit differs, too: the rollback puts the old one back.
  const unit = path.join(root, 'etc/systemd/system/placard.service');
  const oldUnit = readFileSync(unit, 'utf8');
  writeFileSync(path.join(root, 'opt/placard/1.1.0/systemd/placard.service'), `${oldUnit}# 1.1.0\n`);
  writeFileSync(systemctl.log, '');
  const unmigrated = await installAsync(v2, ['--root', root, '--upgrade'], { ...env, PLACARD_FAKE_RESTART: 'fail' });
  t.not(unmigrated.status, 0);
  t.equal(readFileSync(unit, 'utf8'), oldUnit, 'the old version’s unit is back');
  t.same(
    systemctl.calls(),
    ['daemon-reload', 'enable placard.service', 'restart placard.service', 'stop placard.service', 'daemon-reload', 'start placard.service'],
    'and systemd reloaded it',
  );
  t.match(unmigrated.out, /rolling back to 1\.0\.0/);
  t.notMatch(unmigrated.out, /restoring/, 'the schema did not change: nothing written since the backup is thrown away');
  t.same(dbState(data), { schema: knownSchemaVersion(), serverName: 'Before the upgrade' });
  const migrated = await installAsync(v2, ['--root', root, '--upgrade'], { ...env, PLACARD_FAKE_RESTART: 'fail', PLACARD_FAKE_MIGRATE: '1' });
  t.not(migrated.status, 0);
  t.match(migrated.out, /cannot tell whether 1\.0\.0 can open the database .*schema before the upgrade: \d+, now: 999999/);
  t.match(migrated.out, /restoring .*pre-upgrade.*\.tar with version 1\.0\.0/, 'the schema changed: the backup goes back');
  t.same(dbState(data), { schema: knownSchemaVersion(), serverName: 'Before the upgrade' });
});

import { existsSync, readlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { verifyBackup } from '../server/src/modules/system/backup-verify.js';
import { getSettings } from '../server/src/modules/system/settings.js';
import { openDatabase } from '../server/src/platform/db/database.js';
import { tempDataDir } from './helpers/harness.js';
import { fakePackage, install, installedWithData, preUpgradeBackups, scratchRoot } from './helpers/install.js';

// install.sh --upgrade and --rollback against a scratch root, with the real CLI (backup,
// schema, restore) and a fake systemctl. See test/install-script.test.ts for the rest.

t.test('--upgrade takes a pre-upgrade backup with the installed version first; a failed backup stops it', async (t) => {
  const dir = tempDataDir(t);
  const root = scratchRoot(dir);
  const v1 = fakePackage(dir, '1.0.0');
  const data = await installedWithData(t, root, v1, 'Before the upgrade');
  const v2 = fakePackage(path.join(dir, 'v2'), '1.1.0');
  const upgrade = install(v2, ['--root', root, '--upgrade']);
  t.equal(upgrade.status, 0, upgrade.out);
  const backups = preUpgradeBackups(data);
  t.equal(backups.length, 1, 'one pre-upgrade backup');
  t.match(upgrade.out, `backup: ${path.join(data, 'backups', backups[0]!)}`);
  const staging = path.join(dir, 'staging');
  const verified = await verifyBackup(path.join(data, 'backups', backups[0]!), { extractTo: staging });
  t.equal(verified.header.kind, 'pre-upgrade');
  const inside = openDatabase(path.join(staging, 'placard.db'));
  t.equal((await getSettings(inside.db)).serverName, 'Before the upgrade', 'the backup holds the data of before the upgrade');
  await inside.close();
  t.equal(readlinkSync(path.join(root, 'opt/placard/current')), '1.1.0');

  // A database the backup cannot read: the upgrade stops before anything changes.
  const root2 = scratchRoot(path.join(dir, 'second'));
  const data2 = await installedWithData(t, root2, v1, 'Precious');
  writeFileSync(path.join(data2, 'placard.db'), 'this is not a database, but it is all we have'.repeat(100));
  const refused = install(v2, ['--root', root2, '--upgrade']);
  t.not(refused.status, 0, 'the upgrade fails');
  t.match(refused.out, /the backup before the upgrade failed; nothing was changed/);
  t.equal(readlinkSync(path.join(root2, 'opt/placard/current')), '1.0.0', 'still the old version');
  t.notOk(existsSync(path.join(root2, 'opt/placard/1.1.0')), 'the new version was not even copied');
  t.notOk(existsSync(path.join(root2, 'opt/placard/previous')));

  // A plain install of another version over an installed one is an upgrade too (backup first).
  const root3 = scratchRoot(path.join(dir, 'third'));
  const data3 = await installedWithData(t, root3, v1, 'Third');
  const over = install(v2, ['--root', root3]);
  t.equal(over.status, 0, over.out);
  t.match(over.out, /upgrading it to 1\.1\.0/);
  t.equal(preUpgradeBackups(data3).length, 1);
});

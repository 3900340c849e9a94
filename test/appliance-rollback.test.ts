import { readdirSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { knownSchemaVersion } from '../server/src/modules/system/backup-format.js';
import { tempDataDir } from './helpers/harness.js';
import {
  dbState,
  fakePackage,
  fakeSystemctl,
  install,
  installAsync,
  installedWithData,
  preUpgradeBackups,
  readyServer,
  scratchRoot,
} from './helpers/install.js';

// install.sh --upgrade and --rollback against a scratch root, with the real CLI (backup,
// schema, restore) and a fake systemctl. See test/install-script.test.ts for the rest.

t.test('--rollback after the new version migrated: refused naming the backup; --restore-backup restores it', async (t) => {
  const dir = tempDataDir(t);
  const root = scratchRoot(dir);
  const port = await readyServer(t);
  const v1 = fakePackage(dir, '1.0.0');
  const data = await installedWithData(t, root, v1, 'Before the upgrade', ['--port', String(port)]);
  const v2 = fakePackage(path.join(dir, 'v2'), '1.1.0');
  const systemctl = fakeSystemctl(dir);
  const env = { PLACARD_INSTALL_SYSTEMCTL: systemctl.bin, PLACARD_FAKE_DB: path.join(data, 'placard.db') };
  const upgraded = await installAsync(v2, ['--root', root, '--upgrade'], { ...env, PLACARD_FAKE_MIGRATE: '1' });
  t.equal(upgraded.status, 0, upgraded.out);
  t.equal(readlinkSync(path.join(root, 'opt/placard/current')), '1.1.0');
  t.equal(dbState(data).schema, 999999, 'the new version migrated');
  const [backup] = preUpgradeBackups(data);

  writeFileSync(systemctl.log, '');
  const refused = await installAsync(v2, ['--root', root, '--rollback'], env);
  t.not(refused.status, 0, 'refused');
  t.match(refused.out, /version 1\.1\.0 migrated the database and 1\.0\.0 cannot open it/);
  t.match(refused.out, path.join(data, 'backups', backup!), 'names the backup to restore');
  t.match(refused.out, /--rollback --restore-backup/);
  t.equal(readlinkSync(path.join(root, 'opt/placard/current')), '1.1.0', 'nothing changed');
  t.same(systemctl.calls(), [], 'the service was not touched');
  t.equal(install(v2, ['--root', root, '--restore-backup']).status, 1, '--restore-backup only goes with --rollback');

  // A service that does not stop: the backup is not swapped in under it.
  writeFileSync(systemctl.log, '');
  const running = await installAsync(v2, ['--root', root, '--rollback', '--restore-backup'], { ...env, PLACARD_FAKE_ACTIVE: '1' });
  t.not(running.status, 0, running.out);
  t.match(running.out, /placard\.service is still running: not restoring under it/);
  t.equal(readlinkSync(path.join(root, 'opt/placard/current')), '1.1.0', 'the newer version is current again');
  t.equal(dbState(data).schema, 999999, 'the database was not touched');

  writeFileSync(systemctl.log, '');
  const rolled = await installAsync(v2, ['--root', root, '--rollback', '--restore-backup'], env);
  t.equal(rolled.status, 0, rolled.out);
  t.equal(readlinkSync(path.join(root, 'opt/placard/current')), '1.0.0');
  t.equal(readlinkSync(path.join(root, 'opt/placard/previous')), '1.1.0');
  t.same(dbState(data), { schema: knownSchemaVersion(), serverName: 'Before the upgrade' });
  t.same(
    systemctl.calls(),
    ['stop placard.service', 'is-active --quiet placard.service', 'start placard.service'],
    'stopped, checked stopped, restored, started',
  );
  // Every file the restore wrote belongs to the service user, not to root who ran install.sh.
  const uid = statSync(data).uid;
  const walk = (d: string): string[] =>
    readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? [path.join(d, e.name), ...walk(path.join(d, e.name))] : [path.join(d, e.name)]));
  const foreign = walk(data).filter((f) => statSync(f).uid !== uid);
  t.same(foreign, [], `every file in the data directory is owned by uid ${uid}`);
});

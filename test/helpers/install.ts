import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import SQLite from 'better-sqlite3';
import type { Test } from 'tap';
import { updateSettings } from '../../server/src/modules/system/settings.js';
import { migrate, openDatabase } from '../../server/src/platform/db/database.js';

/** Helpers of the install.sh tests (test/install-script.test.ts, test/appliance-upgrade.test.ts). */

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const which = (cmd: string) => spawnSync('sh', ['-c', `command -v ${cmd}`]).status === 0;
const TSX = import.meta.resolve('tsx');

/**
 * A minimal unpacked release package: what install.sh checks and copies. Its node is this
 * machine's (with tsx) and its cli.js runs the real CLI of this checkout, so backups,
 * schema checks and restores made by install.sh are real.
 */
export function fakePackage(dir: string, version: string): string {
  const pkg = path.join(dir, `placard-${version}-linux-x64`);
  mkdirSync(path.join(pkg, 'node/bin'), { recursive: true });
  mkdirSync(path.join(pkg, 'dist/server/src'), { recursive: true });
  mkdirSync(path.join(pkg, 'systemd'), { recursive: true });
  writeFileSync(path.join(pkg, 'node/bin/node'), `#!/bin/sh\nexec '${process.execPath}' --import '${TSX}' "$@"\n`);
  chmodSync(path.join(pkg, 'node/bin/node'), 0o755);
  writeFileSync(path.join(pkg, 'dist/server/src/main.js'), '// server\n');
  writeFileSync(path.join(pkg, 'dist/server/src/cli.js'), `import '${pathToFileURL(path.join(ROOT, 'server/src/cli.ts')).href}';\n`);
  writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: 'placard', version }, null, 2));
  writeFileSync(path.join(pkg, 'ARCH'), 'x64\n');
  copyFileSync(path.join(ROOT, 'systemd/placard.service'), path.join(pkg, 'systemd/placard.service'));
  copyFileSync(path.join(ROOT, 'install.sh'), path.join(pkg, 'install.sh'));
  writeSums(pkg);
  return pkg;
}

/** Every file of an unpacked package under ./, as package.sh writes SHA256SUMS. */
function filesOf(dir: string, prefix = '.'): string[] {
  return readdirSync(path.join(dir, prefix), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesOf(dir, `${prefix}/${e.name}`) : e.isFile() && !(prefix === '.' && e.name === 'SHA256SUMS') ? [`${prefix}/${e.name}`] : [],
  );
}

/** (Re)writes a package's SHA256SUMS, as package.sh does. */
export function writeSums(pkg: string): void {
  const lines = filesOf(pkg)
    .sort()
    .map(
      (f) =>
        `${createHash('sha256')
          .update(readFileSync(path.join(pkg, f)))
          .digest('hex')}  ${f}`,
    );
  writeFileSync(path.join(pkg, 'SHA256SUMS'), `${lines.join('\n')}\n`);
}

export function install(pkg: string, args: string[]) {
  const res = spawnSync('sh', [path.join(pkg, 'install.sh'), ...args], { encoding: 'utf8' });
  return { status: res.status, out: `${res.stdout}${res.stderr}` };
}

/** install.sh without blocking this process (a test's /readyz server must answer meanwhile). */
export function installAsync(pkg: string, args: string[], env: Record<string, string> = {}): Promise<{ status: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn('sh', [path.join(pkg, 'install.sh'), ...args], { env: { ...process.env, ...env } });
    let out = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (out += c));
    child.on('close', (status) => resolve({ status, out }));
  });
}

/** The real CLI of a fake package over a data directory. */
export function cliOf(pkg: string, dataDir: string, args: string[]) {
  const res = spawnSync(path.join(pkg, 'node/bin/node'), [path.join(pkg, 'dist/server/src/cli.js'), ...args], {
    encoding: 'utf8',
    env: { ...process.env, PLACARD_DATA_DIR: dataDir },
  });
  return { status: res.status, out: res.stdout, err: res.stderr };
}

/**
 * A fake systemctl: logs each call; `restart` fails when PLACARD_FAKE_RESTART=fail, after
 * migrating the database the way a newer version would when PLACARD_FAKE_MIGRATE=1;
 * `is-active` answers PLACARD_FAKE_ACTIVE.
 */
export function fakeSystemctl(dir: string): { bin: string; log: string; calls(): string[] } {
  const bin = path.join(dir, 'systemctl');
  const log = path.join(dir, 'systemctl.log');
  writeFileSync(log, '');
  const migrate = path.join(dir, 'migrate.cjs');
  writeFileSync(
    migrate,
    `const Database = require('node:module').createRequire(${JSON.stringify(path.join(ROOT, 'package.json'))})('better-sqlite3');
const db = new Database(process.env.PLACARD_FAKE_DB);
db.prepare("insert into schema_migrations (version, name, applied_at) values (999999, 'from the new version', '2030-01-01T00:00:00.000Z')").run();
db.prepare("update settings set data = json_set(data, '$.serverName', 'Written by the new version')").run();
db.close();
`,
  );
  writeFileSync(
    bin,
    `#!/bin/sh
echo "$*" >>'${log}'
case "$1" in
  restart)
    if [ "\${PLACARD_FAKE_MIGRATE:-}" = 1 ]; then '${process.execPath}' '${migrate}' || exit 99; fi
    [ "\${PLACARD_FAKE_RESTART:-ok}" = ok ] ;;
  is-active) [ "\${PLACARD_FAKE_ACTIVE:-0}" = 1 ] ;;
  *) exit 0 ;;
esac
`,
  );
  chmodSync(bin, 0o755);
  return { bin, log, calls: () => readFileSync(log, 'utf8').split('\n').filter(Boolean) };
}

/** A stand-in server answering /readyz 200, for install.sh's wait after a (re)start. */
export async function readyServer(t: Test): Promise<number> {
  const server = http.createServer((req, res) => {
    res.writeHead(req.url === '/readyz' ? 200 : 404, { 'content-type': 'application/json' });
    res.end('{"data":{"status":"ready"}}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return (server.address() as AddressInfo).port;
}

/** A scratch root with an /etc/passwd and /etc/group of its own. */
export function scratchRoot(dir: string): string {
  const root = path.join(dir, 'root');
  mkdirSync(path.join(root, 'etc'), { recursive: true });
  writeFileSync(path.join(root, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/bash\nsystemd-network:x:999:999::/:/usr/sbin/nologin\n');
  writeFileSync(path.join(root, 'etc/group'), 'root:x:0:\nsystemd-network:x:999:\n');
  return root;
}

/** Installed 1.0.0 (not started) with a real, migrated database whose server name is `name`. */
export async function installedWithData(t: Test, root: string, pkg: string, name: string, args: string[] = []): Promise<string> {
  const first = install(pkg, ['--root', root, '--no-start', ...args]);
  t.equal(first.status, 0, first.out);
  const data = path.join(root, 'var/lib/placard');
  const opened = openDatabase(path.join(data, 'placard.db'));
  await migrate(opened.db);
  await updateSettings(opened.db, { serverName: name });
  await opened.close();
  return data;
}

export function dbState(data: string): { schema: number; serverName: string } {
  const db = new SQLite(path.join(data, 'placard.db'), { readonly: true });
  try {
    const schema = (db.prepare('select max(version) as v from schema_migrations').get() as { v: number }).v;
    const row = db.prepare('select data from settings where id = 1').get() as { data: string };
    return { schema, serverName: JSON.parse(row.data).serverName };
  } finally {
    db.close();
  }
}

export const preUpgradeBackups = (data: string) =>
  readdirSync(path.join(data, 'backups')).filter((f) => /^placard-backup-.*-pre-upgrade-[a-z0-9]{4}\.tar$/.test(f));

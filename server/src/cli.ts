import SQLite from 'better-sqlite3';
import { existsSync, statSync } from 'node:fs';
import { access, constants as fsConstants, copyFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { ConfigError, databaseTarget, loadConfig, type Config } from './config.js';
import { hashPassword, PasswordSchema } from './modules/accounts/passwords.js';
import { endUserSessions, findUserByEmail, updateUser } from './modules/accounts/users.repo.js';
import { createBackup } from './modules/system/backup-create.js';
import { checkPassphrase, configuredPassphrase, isEncryptedFile } from './modules/system/backup-crypto.js';
import { BACKUP_KINDS, BackupError, knownSchemaVersion, type BackupKind } from './modules/system/backup-format.js';
import { discardPartialBackups, listBackups } from './modules/system/backup-store.js';
import { MigrateToError, migrateToPostgres } from './modules/system/migrate-to.js';
import { recoverInterruptedRestore, restoreBackup } from './modules/system/restore.js';
import { DEFAULT_SETTINGS, getSettings, type Settings } from './modules/system/settings.js';
import { migrate, openDatabase } from './platform/db/database.js';
import { randomToken } from './platform/security/secrets.js';
import { providedIdentity, rotateGeneratedKey, storedIdentity, TlsError } from './platform/security/tls.js';
import { SERVER_VERSION } from './version.js';
import { waitUntilReady } from './wait-ready.js';

const HELP = `placard ${SERVER_VERSION}: the Placard server's command line

Usage: placard <command> [options]

  backup [--kind cli|pre-upgrade] [--no-media] [--out DIR] [--passphrase-stdin]
                          online backup (safe while the server runs); prints the file.
                          With PLACARD_DATABASE_URL the database part is a pg_dump
                          Encrypted (age, .tar.age) with the passphrase read from stdin, or
                          with PLACARD_BACKUP_PASSPHRASE_FILE's when that is set; copied to
                          PLACARD_BACKUP_COPY_DIR when that is set; --out DIR: a copy there too
  restore FILE [--force] [--passphrase-stdin]
                          restore a backup; stop the service first (systemctl stop placard;
                          on PostgreSQL every instance). With PLACARD_DATABASE_URL the
                          backup's pg_dump is restored into that database with pg_restore.
                          An encrypted one opens with the passphrase from stdin, else
                          PLACARD_BACKUP_PASSPHRASE_FILE's
  backups                 list backups in the data directory
  migrate                 bring the database schema up to date
  migrate-to [URL] [--verify-only]
                          copy this data directory's SQLite database into an empty
                          PostgreSQL database (postgres://user:password@host/db; without
                          one, PLACARD_DATABASE_URL's), in one
                          transaction, then verify every table's row count and checksum;
                          stop the service first. --verify-only: only compare them again.
                          The media stay in PLACARD_DATA_DIR (docs/operations.md)
  schema                  the database's schema version and the newest this version knows;
                          exit status 3 when the database is newer (this version cannot
                          open it: restore a backup made by this version)
  reset-password EMAIL [--password-stdin] [--disable-mfa]
                          set a new password for a locked-out user (printed unless given
                          on stdin), end their sessions and lift sign-in throttling
  tls                     the HTTPS certificate's fingerprint and the pin screens use
                          (compare them with what the console shows)
  tls-rotate              move the generated certificate to its next key (screens pin both);
                          restart the server after it (docs/trust.md)
  wait-ready [--timeout SECONDS]
                          wait until the local server's /readyz answers 200 (or 503
                          for low disk space alone: said on stderr, exit 0)
  version                 print the version

Configuration comes from the environment (PLACARD_DATA_DIR, PLACARD_PORT, ...), as for the server.
`;

class CliError extends Error {}

function out(line: string): void {
  process.stdout.write(`${line}\n`);
}

function progressPrinter(label: string): (fraction: number, message: string) => void {
  let last = -1;
  const tty = process.stderr.isTTY;
  return (fraction, message) => {
    const pct = Math.floor(fraction * 100);
    if (pct === last) return;
    last = pct;
    if (tty) process.stderr.write(`\r${label}: ${String(pct).padStart(3)}% ${message.slice(0, 60).padEnd(60)}`);
    else if (pct % 10 === 0) process.stderr.write(`${label}: ${pct}% ${message}\n`);
    if (tty && pct === 100) process.stderr.write('\n');
  };
}

function localUrl(config: Config): string {
  const host = config.host === '0.0.0.0' || config.host === '::' ? '127.0.0.1' : config.host.includes(':') ? `[${config.host}]` : config.host;
  return `http://${host}:${config.port}`;
}

async function serverAnswers(config: Config): Promise<boolean> {
  try {
    const res = await fetch(`${localUrl(config)}/healthz`, { signal: AbortSignal.timeout(2_000) });
    const body = (await res.json()) as { data?: { status?: string } };
    return body.data?.status === 'ok';
  } catch {
    return false;
  }
}

async function withDatabase<T>(config: Config, fn: (opened: ReturnType<typeof openDatabase>) => Promise<T>): Promise<T> {
  const file = databaseTarget(config);
  if (!config.databaseUrl && !existsSync(file)) throw new CliError(`no database at ${file} (is PLACARD_DATA_DIR right?)`);
  const opened = openDatabase(file, { poolSize: 2 });
  try {
    return await fn(opened);
  } finally {
    await opened.close();
  }
}

/** A directory this process can write into, or a CliError saying why not (before any work). */
async function writableDir(dir: string, what: string): Promise<string> {
  const full = path.resolve(dir);
  let isDir = false;
  try {
    isDir = statSync(full).isDirectory();
  } catch {
    throw new CliError(`${what} ${full} does not exist`);
  }
  if (!isDir) throw new CliError(`${what} ${full} is not a directory`);
  try {
    await access(full, fsConstants.W_OK | fsConstants.X_OK);
  } catch {
    const who = process.getuid
      ? ` (this command runs as uid ${process.getuid()}${process.getuid() === 0 ? '' : ': the placard command runs as the placard user'})`
      : '';
    throw new CliError(`${what} ${full} is not writable by this user${who}; choose a directory it can write, or give it to that user first`);
  }
  return full;
}

/** The passphrase: from stdin when asked, else the configured file's, else none. */
async function passphraseFor(config: Config, fromStdin: boolean | undefined): Promise<string | null> {
  try {
    if (fromStdin) return checkPassphrase(await readStdin());
    return configuredPassphrase(config.backupPassphraseFile);
  } catch (err) {
    if (err instanceof BackupError) throw new CliError(err.message);
    throw err;
  }
}

async function commandBackup(config: Config, args: string[]): Promise<void> {
  const { values } = parseArgs({
    args,
    options: {
      kind: { type: 'string', default: 'cli' },
      'no-media': { type: 'boolean', default: false },
      out: { type: 'string' },
      'passphrase-stdin': { type: 'boolean', default: false },
    },
  });
  if (!(BACKUP_KINDS as readonly string[]).includes(values.kind!)) throw new CliError(`--kind must be one of ${BACKUP_KINDS.join(', ')}`);
  // SQLite: the file; PostgreSQL: the URL (PLACARD_DATABASE_URL), which pg_dump dumps.
  const file = databaseTarget(config);
  if (!config.databaseUrl && !existsSync(file)) throw new CliError(`no database at ${file} (is PLACARD_DATA_DIR right?)`);
  // Refused before the work: a backup of many gigabytes must not end in "cannot write".
  const outDir = values.out === undefined ? null : await writableDir(values.out, '--out');
  const passphrase = await passphraseFor(config, values['passphrase-stdin']);
  await discardPartialBackups(config.dataDir);
  // Settings from the database when it has them (an older schema may not): retention, media.
  let settings: Settings = DEFAULT_SETTINGS;
  await withDatabase(config, async ({ db }) => {
    settings = await getSettings(db).catch(() => DEFAULT_SETTINGS);
  });
  const info = await createBackup({
    dataDir: config.dataDir,
    databaseFile: file,
    kind: values.kind as BackupKind,
    includeMedia: values['no-media'] ? false : settings.backups.includeMedia,
    keep: settings.backups.keep,
    progress: progressPrinter('backup'),
    passphrase,
    copyTo: config.backupCopyDir,
  });
  const written = path.join(config.dataDir, 'backups', info.name);
  if (info.copy && !info.copy.ok) process.stderr.write(`placard: warning: the backup was made but not copied to ${info.copy.dir}: ${info.copy.error}\n`);
  else if (info.copy?.ok) process.stderr.write(`placard: copied to ${info.copy.path}\n`);
  if (outDir) {
    const dest = path.join(outDir, info.name);
    try {
      await copyFile(written, dest);
    } catch (err) {
      await rm(dest, { force: true });
      throw new CliError(
        `the backup was made (${written}) but copying it to ${outDir} failed: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`,
      );
    }
    out(dest);
  } else {
    out(written);
  }
}

async function commandRestore(config: Config, args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { force: { type: 'boolean', default: false }, 'passphrase-stdin': { type: 'boolean', default: false } },
  });
  const file = positionals[0];
  if (!file) throw new CliError('usage: placard restore FILE [--force] [--passphrase-stdin]');
  let source = path.resolve(file);
  if (!existsSync(source) && existsSync(path.join(config.dataDir, 'backups', file))) source = path.join(config.dataDir, 'backups', file);
  if (!existsSync(source)) throw new CliError(`no such file: ${file}`);
  const passphrase = isEncryptedFile(source) ? await passphraseFor(config, values['passphrase-stdin']) : null;
  if (isEncryptedFile(source) && !passphrase)
    throw new CliError(`${path.basename(source)} is encrypted: give its passphrase on stdin (--passphrase-stdin), or set PLACARD_BACKUP_PASSPHRASE_FILE`);
  if (!values.force && (await serverAnswers(config))) {
    throw new CliError(`the server answers at ${localUrl(config)}: stop it first (systemctl stop placard), or restore from the console (System > Backups)`);
  }
  const recovered = recoverInterruptedRestore(config.dataDir);
  if (recovered) process.stderr.write(`${recovered}\n`);
  try {
    const result = await restoreBackup({
      dataDir: config.dataDir,
      file: source,
      postgresUrl: config.databaseUrl,
      passphrase,
      progress: progressPrinter('restore'),
    });
    out(
      `restored ${path.basename(source)} (made ${result.header.createdAt} by Placard ${result.header.serverVersion}): ${result.files} files, schema ${result.migratedTo}`,
    );
  } catch (err) {
    if (err instanceof BackupError) throw new CliError(`refused: ${err.message}; the data directory is unchanged`);
    throw err;
  }
}

async function commandBackups(config: Config): Promise<void> {
  const list = await listBackups(config.dataDir);
  if (list.length === 0) out('no backups');
  for (const b of list)
    out(
      `${b.name}\t${b.createdAt}\t${b.sizeBytes} bytes\t${b.encrypted ? 'encrypted' : b.includesMedia ? 'with media' : 'database only'}${b.engine ? `\t${b.engine}` : ''}`,
    );
}

async function commandMigrate(config: Config): Promise<void> {
  recoverInterruptedRestore(config.dataDir);
  const opened = openDatabase(databaseTarget(config), { poolSize: 2 });
  try {
    const report = await migrate(opened.db);
    out(report.applied.length ? `applied migrations ${report.applied.join(', ')}; schema ${report.current}` : `schema ${report.current} is up to date`);
  } finally {
    await opened.close();
  }
}

async function commandMigrateTo(config: Config, args: string[]): Promise<number> {
  const { values, positionals } = parseArgs({ args, allowPositionals: true, options: { 'verify-only': { type: 'boolean', default: false } } });
  // Without a URL: the one the server is configured for (PLACARD_DATABASE_URL), set before the move.
  const url = positionals[0] ?? config.databaseUrl;
  if (!url || positionals.length > 1)
    throw new CliError('usage: placard migrate-to [postgres://user:password@host:5432/database] [--verify-only] (default: PLACARD_DATABASE_URL)');
  // The SQLite file must not change under the copy: the server is stopped first.
  if (await serverAnswers(config)) {
    throw new CliError(`the server answers at ${localUrl(config)}: stop it first (systemctl stop placard), then run migrate-to`);
  }
  recoverInterruptedRestore(config.dataDir);
  try {
    const result = await migrateToPostgres({
      sqliteFile: path.join(config.dataDir, 'placard.db'),
      dataDir: config.dataDir,
      url,
      verifyOnly: values['verify-only'],
      out,
      progress: (line) => process.stderr.write(`${line}\n`),
    });
    if (!result.ok)
      process.stderr.write('placard: the copy does not match the SQLite database: do not switch to it; drop and recreate the target, then migrate-to again\n');
    else if (!values['verify-only'])
      out(
        positionals[0]
          ? 'next: set PLACARD_DATABASE_URL to this URL (with its password) and start the server; the SQLite file is left as it was'
          : 'next: start the server (PLACARD_DATABASE_URL names this database); the SQLite file is left as it was',
      );
    return result.ok ? 0 : 1;
  } catch (err) {
    if (err instanceof MigrateToError) throw new CliError(err.message);
    throw err;
  }
}

/** Exit status of `placard schema` when the database is newer than this version knows. */
export const SCHEMA_TOO_NEW_EXIT = 3;

async function commandSchema(config: Config): Promise<number> {
  let found = 0;
  if (config.databaseUrl) {
    // Read-only: one query, nothing migrated.
    const opened = openDatabase(config.databaseUrl, { poolSize: 1 });
    try {
      // No schema_migrations table yet: schema 0.
      const r = await sql<{ v: number | null }>`select max(version) as v from schema_migrations`
        .execute(opened.db)
        .catch(() => ({ rows: [] as { v: number | null }[] }));
      found = Number(r.rows[0]?.v ?? 0);
    } finally {
      await opened.close();
    }
  } else {
    const file = path.join(config.dataDir, 'placard.db');
    if (!existsSync(file)) throw new CliError(`no database at ${file} (is PLACARD_DATA_DIR right?)`);
    // Read-only: nothing is migrated or converted, whichever version wrote the file.
    const sqlite = new SQLite(file, { readonly: true, fileMustExist: true });
    try {
      const table = sqlite.prepare("select name from sqlite_master where type = 'table' and name = 'schema_migrations'").get();
      if (table) found = Number((sqlite.prepare('select max(version) as v from schema_migrations').get() as { v: number | null }).v ?? 0);
    } finally {
      sqlite.close();
    }
  }
  const known = knownSchemaVersion();
  if (found > known) {
    out(`database schema ${found} is newer than this version (${SERVER_VERSION}) knows (${known}): it cannot open it`);
    return SCHEMA_TOO_NEW_EXIT;
  }
  out(`database schema ${found}; this version (${SERVER_VERSION}) knows up to ${known}${found < known ? ' (placard migrate brings it up to date)' : ''}`);
  return 0;
}

function commandTls(config: Config): void {
  if (config.httpsPort === 0) out('HTTPS is off (PLACARD_HTTPS_PORT=0)');
  const id = config.tlsCertFile && config.tlsKeyFile ? providedIdentity(config.tlsCertFile, config.tlsKeyFile) : storedIdentity(config.dataDir);
  if (!id) throw new CliError(`no certificate in ${path.join(config.dataDir, 'tls')} yet: the server makes it at its first start`);
  out(`certificate:  ${id.certFile} (${id.source === 'provided' ? 'PLACARD_TLS_CERT' : 'generated'})`);
  out(`fingerprint:  SHA256 ${id.fingerprintSha256}`);
  out(`pin:          ${id.pin}`);
  out(`names:        ${id.subjectAltNames.join(', ')}`);
  out(`valid until:  ${id.notAfter}`);
}

async function commandTlsRotate(config: Config): Promise<void> {
  if (config.tlsCertFile) throw new CliError('the server uses your certificate (PLACARD_TLS_CERT): rotate it where it comes from (docs/trust.md)');
  try {
    const r = await rotateGeneratedKey(config.dataDir);
    out(`the server's key is now the one screens knew as next (${r.current}); the new next key is ${r.next}`);
    out('restart the server (systemctl restart placard); run the install line from the console again on screens to give them the new next key');
  } catch (err) {
    if (err instanceof TlsError) throw new CliError(err.message);
    throw err;
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

async function commandResetPassword(config: Config, args: string[]): Promise<void> {
  const { values, positionals } = parseArgs({
    args,
    allowPositionals: true,
    options: { 'password-stdin': { type: 'boolean', default: false }, 'disable-mfa': { type: 'boolean', default: false } },
  });
  const email = positionals[0];
  if (!email) throw new CliError('usage: placard reset-password EMAIL [--password-stdin] [--disable-mfa]');
  let password: string;
  let generated = false;
  if (values['password-stdin']) {
    password = await readStdin();
    const check = PasswordSchema.safeParse(password);
    if (!check.success) throw new CliError(`the password is not acceptable: ${check.error.issues[0]?.message}`);
  } else {
    password = randomToken(15); // 20 characters, 120 bits
    generated = true;
  }
  await withDatabase(config, async ({ db }) => {
    const user = await findUserByEmail(db, email);
    if (!user) throw new CliError(`no user with the email ${email}`);
    await updateUser(db, user.id, {
      password_hash: await hashPassword(password),
      disabled_at: null,
      ...(values['disable-mfa'] ? { totp_enabled: 0, totp_secret_sealed: null, totp_pending_sealed: null, totp_last_step: null } : {}),
    });
    if (values['disable-mfa']) {
      await db.deleteFrom('recovery_codes').where('user_id', '=', user.id).execute();
      await db.deleteFrom('passkeys').where('user_id', '=', user.id).execute();
    }
    await endUserSessions(db, user.id);
    await db.deleteFrom('auth_throttle').execute();
    out(
      `reset the password of ${user.email} (${user.role})${values['disable-mfa'] ? '; removed TOTP, recovery codes and passkeys' : ''}; their sessions ended`,
    );
    if (generated) out(`new password: ${password}`);
  });
}

async function commandWaitReady(config: Config, args: string[]): Promise<void> {
  const { values } = parseArgs({ args, options: { timeout: { type: 'string', default: '60' } } });
  const seconds = Number(values.timeout);
  if (!Number.isFinite(seconds) || seconds <= 0) throw new CliError('--timeout must be a number of seconds');
  const answer = await waitUntilReady(localUrl(config), seconds);
  if (!answer.ready) throw new CliError(`the server at ${localUrl(config)} was not ready within ${seconds}s (last answer: ${answer.last})`);
  if (answer.lowDisk) process.stderr.write(`placard: the server is up but short of disk space: ${answer.lowDisk}\n`);
}

export async function runCli(argv: string[]): Promise<number> {
  const [command, ...args] = argv;
  if (!command || command === 'help' || command === '--help' || command === '-h') {
    process.stdout.write(HELP);
    return command ? 0 : 2;
  }
  if (command === 'version' || command === '--version') {
    out(SERVER_VERSION);
    return 0;
  }
  let config: Config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`placard: ${err.message}\n`);
      return 1;
    }
    throw err;
  }
  try {
    switch (command) {
      case 'backup':
        await commandBackup(config, args);
        break;
      case 'restore':
        await commandRestore(config, args);
        break;
      case 'backups':
        await commandBackups(config);
        break;
      case 'migrate':
        await commandMigrate(config);
        break;
      case 'schema':
        return await commandSchema(config);
      case 'migrate-to':
        return await commandMigrateTo(config, args);
      case 'reset-password':
        await commandResetPassword(config, args);
        break;
      case 'tls':
        commandTls(config);
        break;
      case 'tls-rotate':
        await commandTlsRotate(config);
        break;
      case 'wait-ready':
        await commandWaitReady(config, args);
        break;
      default:
        process.stderr.write(`placard: unknown command ${command}\n\n${HELP}`);
        return 2;
    }
    return 0;
  } catch (err) {
    if (err instanceof CliError || (err as { code?: string }).code?.startsWith('ERR_PARSE_ARGS')) {
      process.stderr.write(`placard: ${(err as Error).message}\n`);
      return 1;
    }
    // What the system refused (a directory not writable, a full disk, ...), or a backup that
    // could not be made: one line, no stack trace.
    const e = err as NodeJS.ErrnoException;
    if (err instanceof BackupError || (typeof e.code === 'string' && /^E[A-Z]+$/.test(e.code) && e.syscall)) {
      process.stderr.write(`placard: ${command} failed: ${e.message}\n`);
      return 1;
    }
    throw err;
  }
}

// Run when executed directly (node dist/server/src/cli.js ..., tsx server/src/cli.ts ...).
const self = process.argv[1] ? path.resolve(process.argv[1]) : '';
if (self.endsWith(`${path.sep}cli.js`) || self.endsWith(`${path.sep}cli.ts`)) {
  runCli(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`placard: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
}

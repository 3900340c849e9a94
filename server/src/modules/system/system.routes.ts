import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rm, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Context } from 'koa';
import { z } from 'zod';
import type { AppDeps } from '../../platform/app-deps.js';
import { roleAtLeast, type SessionPrincipal } from '../../platform/http/auth.js';
import { ApiError } from '../../platform/http/errors.js';
import { created, defineRoute, noContent, ok, uuidParam } from '../../platform/http/route.js';
import { durableRename } from '../../platform/db/database.js';
import { checkPassphrase, configuredPassphrase, isEncryptedFile } from './backup-crypto.js';
import { BACKUP_NAME, BackupError, backupName, backupsDir, partialName } from './backup-format.js';
import { discardPartialBackups, listBackups } from './backup-store.js';
import { verifyBackup } from './backup-verify.js';
import { maintenanceActionList } from './hooks.js';
import { findRun, listRuns, maintenanceAction, MaintenanceRunDto, runBackup, startRun, waitForRun } from './maintenance.js';
import { notifySettingsChanged, readSettings, SettingsDocument, SettingsPatch, updateSettings, type StoredSettings } from './settings.js';
import { collectStatus, SystemStatus } from './status.js';
import { applyImport, ExportDocument, exportDocument, previewImport } from './export.js';
import { contentDisposition } from '../../platform/http/send-file.js';
import { ifMatchRevision } from '../../platform/http/revision.js';

const TAGS = ['System'];

const settingsReply = (s: StoredSettings) => ok({ ...s.settings, revision: s.revision, updatedAt: s.updatedAt }, { ETag: `"${s.revision}"` });

const BackupDto = z.object({
  name: z.string(),
  sizeBytes: z.number(),
  createdAt: z.string(),
  kind: z.string(),
  /** null for an encrypted backup (the header is inside the encryption). */
  serverVersion: z.string().nullable(),
  schemaVersion: z.number().nullable(),
  includesMedia: z.boolean().nullable(),
  /** The database engine it holds: sqlite or postgres (null for an encrypted backup). */
  engine: z.enum(['sqlite', 'postgres']).nullable(),
  /** age-encrypted with a passphrase (`.tar.age`). */
  encrypted: z.boolean(),
  downloadUrl: z.string(),
});
const withUrl = <T extends { name: string }>(b: T) => ({ ...b, downloadUrl: `/api/v1/system/backups/${b.name}` });
const BackupParams = z.object({ name: z.string().regex(BACKUP_NAME) });

const MAX_WAIT_MS = 10 * 60_000;

const ImportPreviewDto = z.object({
  sections: z.array(
    z.object({
      key: z.string(),
      version: z.number(),
      changes: z.array(
        z.object({
          action: z.enum(['create', 'update', 'unchanged', 'delete']),
          id: z.string().optional(),
          name: z.string().optional(),
          detail: z.string().optional(),
        }),
      ),
      summary: z.object({ create: z.number(), update: z.number(), unchanged: z.number(), delete: z.number() }),
    }),
  ),
  ignored: z.array(z.object({ key: z.string(), reason: z.string() })),
  applied: z.boolean().optional(),
});

/** Registers the periodic work of this module: the scheduled backup and the sweep of unfinished ones. */
export function installSystem(deps: AppDeps): void {
  const sweep = (atStart: boolean) =>
    discardPartialBackups(deps.config.dataDir, { atStart }).then(
      (removed) => removed.length && deps.logger.warn({ removed }, 'discarded unfinished backups'),
      () => {},
    );
  void sweep(true);
  deps.periodic.every('system.backup.scheduled', 10 * 60_000, async () => {
    // Partial files of writers that died since (a `placard backup` killed midway).
    await sweep(false);
    const { getSettings } = await import('./settings.js');
    const settings = await getSettings(deps.db);
    if (settings.backups.intervalHours === 0 || deps.state.restoreInProgress) return;
    const last = (await listBackups(deps.config.dataDir))[0];
    if (last && Date.now() - Date.parse(last.createdAt) < settings.backups.intervalHours * 3_600_000) return;
    const action = maintenanceAction(deps, 'backup')!;
    const scheduled = {
      ...action,
      name: 'backup',
      run: async ({ progress }: { progress: (f: number, m: string) => void }) => ({ backup: await runBackup(deps, 'scheduled', undefined, progress) }),
    };
    try {
      const run = startRun(deps, scheduled as typeof action, {}, null, null);
      await waitForRun(deps, run.id, 6 * 3_600_000);
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 'conflict')) throw err;
    }
  });
}

function sendFile(ctx: Context, file: string, size: number, name: string, type: string) {
  ctx.status = 200;
  ctx.set('Content-Type', type);
  ctx.set('Content-Length', String(size));
  ctx.set('Content-Disposition', contentDisposition('attachment', name));
  ctx.set('Cache-Control', 'no-store');
  // HEAD: no body at all (a null body would make Koa answer 204 instead of GET's 200).
  if (ctx.method !== 'HEAD') ctx.body = createReadStream(file);
}

export const systemRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/v1/settings',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'The server settings, with their revision (also the ETag)',
    responses: {
      200: { description: 'Settings', data: SettingsDocument, headers: { ETag: { description: 'The revision, quoted: send it back in If-Match' } } },
    },
    handler: async (ctx) => settingsReply(await readSettings(ctx.deps.db)),
  }),
  defineRoute({
    method: 'PATCH',
    path: '/api/v1/settings',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Change settings: any subset of fields; sections merge key by key',
    description: 'Send `If-Match: "<revision>"` to refuse a stale edit (412 `version_conflict`). Unknown keys are refused (400).',
    body: SettingsPatch,
    ifMatch: true,
    responses: {
      200: { description: 'The settings after the change', data: SettingsDocument },
      412: { description: 'version_conflict: someone changed the settings since the revision in If-Match' },
    },
    handler: async (ctx, { body, auth }) => {
      const expectedRevision = ifMatchRevision(ctx) ?? undefined;
      const before = (await readSettings(ctx.deps.db)).settings;
      const after = await updateSettings(ctx.deps.db, body, { expectedRevision, userId: (auth as SessionPrincipal).userId });
      await notifySettingsChanged(ctx.deps, before, after.settings);
      return settingsReply(after);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/system/status',
    auth: 'session',
    minRole: 'viewer',
    tags: TAGS,
    summary: 'What the server runs on and how it is doing: versions, database, disk, tools, backups, and module sections',
    responses: { 200: { description: 'System status', data: SystemStatus } },
    handler: async (ctx) => ok(await collectStatus(ctx.deps)),
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/system/maintenance/{action}',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Start a maintenance action (backup, restore, vacuum, and those modules register)',
    description:
      'Answers 202 with the run at once; follow it at `GET /api/v1/system/maintenance/runs/{id}`. With `"wait": true` the answer waits (up to 10 minutes) ' +
      'and is 200 with the finished run. Options go in `options`: backup `{includeMedia?}`, restore `{backup: <name>}` (owner only). Unknown action: 404. ' +
      'A second exclusive action while one runs: 409.',
    params: z.object({ action: z.string().max(64) }),
    body: z.object({ wait: z.boolean().optional(), options: z.record(z.string(), z.unknown()).optional() }).strict(),
    responses: {
      200: { description: 'The finished run (wait: true)', data: MaintenanceRunDto },
      202: { description: 'The run, started', data: MaintenanceRunDto },
      409: { description: 'conflict: another exclusive action is running' },
    },
    handler: async (ctx, { params, body, auth }) => {
      const action = maintenanceAction(ctx.deps, params.action);
      if (!action) {
        throw new ApiError(
          'not_found',
          `No maintenance action ${JSON.stringify(params.action)}; known: ${maintenanceActionList(ctx.deps)
            .map((a) => a.name)
            .join(', ')}`,
        );
      }
      const principal = auth as SessionPrincipal;
      if (!roleAtLeast(principal.role, action.minRole ?? 'admin'))
        throw new ApiError('forbidden', `The ${action.name} action needs the ${action.minRole} role`);
      let options: unknown = body?.options ?? {};
      if (action.options) {
        const parsed = action.options.safeParse(options);
        if (!parsed.success) {
          const issues = parsed.error.issues.map((i) => ({ location: 'body', path: ['options', ...i.path.map(String)], message: i.message, code: i.code }));
          throw new ApiError(
            'validation_failed',
            `Invalid request body.options${issues[0]?.path.length ? `.${issues[0].path.slice(1).join('.')}` : ''}: ${issues[0]?.message}`,
            { details: { issues } },
          );
        }
        options = parsed.data;
      } else if (Object.keys(options as object).length > 0) {
        throw new ApiError('validation_failed', `The ${action.name} action takes no options`);
      }
      const run = startRun(ctx.deps, action, options, principal.userId, ctx.app);
      if (body?.wait) return ok(await waitForRun(ctx.deps, run.id, MAX_WAIT_MS));
      return { kind: 'json', status: 202, data: run, headers: { Location: `/api/v1/system/maintenance/runs/${run.id}` } };
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/system/maintenance/runs',
    auth: 'session',
    minRole: 'admin',
    extension: true,
    tags: TAGS,
    summary: 'Maintenance runs of this server process, newest first, and the actions there are',
    responses: {
      200: {
        description: 'Runs and actions',
        data: z.object({
          items: z.array(MaintenanceRunDto),
          actions: z.array(z.object({ name: z.string(), summary: z.string(), minRole: z.string(), exclusive: z.boolean() })),
        }),
      },
    },
    handler: (ctx) =>
      ok({
        items: listRuns(ctx.deps),
        actions: maintenanceActionList(ctx.deps).map((a) => ({
          name: a.name,
          summary: a.summary,
          minRole: a.minRole ?? 'admin',
          exclusive: Boolean(a.exclusive),
        })),
      }),
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/system/maintenance/runs/{id}',
    auth: 'session',
    minRole: 'admin',
    extension: true,
    tags: TAGS,
    summary: 'One maintenance run: state, progress (0..1), message, result or error',
    params: z.object({ id: uuidParam }),
    responses: { 200: { description: 'The run', data: MaintenanceRunDto } },
    handler: (ctx, { params }) => {
      const run = findRun(ctx.deps, params.id);
      if (!run) throw new ApiError('not_found', 'No such maintenance run (runs are kept while the server process lives)');
      return ok(run);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/system/backups',
    auth: 'session',
    minRole: 'admin',
    extension: true,
    tags: TAGS,
    summary: 'Backups in the data directory, newest first',
    responses: { 200: { description: 'Backups', data: z.object({ items: z.array(BackupDto), nextCursor: z.null() }) } },
    handler: async (ctx) => ok({ items: (await listBackups(ctx.deps.config.dataDir)).map(withUrl), nextCursor: null }),
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/system/backups',
    auth: 'session',
    minRole: 'owner',
    extension: true,
    tags: TAGS,
    summary: 'Upload a backup archive (the body is the .tar, or an encrypted .tar.age); it is verified end to end before it is kept',
    description:
      "An encrypted backup is decrypted to be verified with the passphrase in the `Placard-Backup-Passphrase` header, else the server's configured one (PLACARD_BACKUP_PASSPHRASE_FILE); it is kept encrypted.",
    rawBody: { contentTypes: ['application/x-tar', 'application/octet-stream'] },
    responses: {
      201: { description: 'The backup, kept', data: BackupDto },
      400: { description: 'validation_failed: not a Placard backup, damaged, made by a newer Placard, or encrypted and the passphrase is missing or wrong' },
      507: { description: 'insufficient_storage: the disk filled up' },
    },
    handler: async (ctx) => {
      const dir = backupsDir(ctx.deps.config.dataDir);
      await mkdir(dir, { recursive: true });
      const partial = path.join(dir, partialName(`upload-${randomBytes(6).toString('hex')}.tar`));
      try {
        try {
          await pipeline(ctx.req, createWriteStream(partial, { mode: 0o600 }));
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOSPC') throw new ApiError('insufficient_storage', 'The disk is full; the upload was discarded');
          throw new ApiError('validation_failed', `The upload did not complete: ${(err as Error).message}`);
        }
        const encrypted = isEncryptedFile(partial);
        try {
          const given = ctx.get('placard-backup-passphrase');
          const passphrase = !encrypted ? null : given ? checkPassphrase(given) : configuredPassphrase(ctx.deps.config.backupPassphraseFile);
          if (encrypted && !passphrase) throw new BackupError('it is encrypted: send its passphrase in the Placard-Backup-Passphrase header');
          await verifyBackup(partial, { passphrase });
        } catch (err) {
          if (err instanceof BackupError) throw new ApiError('validation_failed', `Not a usable backup: ${err.message}`);
          throw err;
        }
        const name = backupName('uploaded', new Date(), encrypted);
        durableRename(partial, path.join(dir, name));
        const info = (await listBackups(ctx.deps.config.dataDir)).find((b) => b.name === name);
        if (!info) throw new ApiError('validation_failed', 'The backup header could not be read');
        return created(withUrl(info));
      } finally {
        await rm(partial, { force: true });
      }
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/system/backups/{name}',
    auth: 'session',
    minRole: 'owner',
    extension: true,
    tags: TAGS,
    summary: 'Download a backup (it holds secret.key: owners only); an encrypted one as it is (application/octet-stream, age)',
    params: BackupParams,
    responses: { 200: { description: 'The archive', content: { 'application/x-tar': {}, 'application/octet-stream': {} } } },
    handler: async (ctx, { params }) => {
      const file = path.join(backupsDir(ctx.deps.config.dataDir), params.name);
      const s = await stat(file).catch(() => null);
      if (!s?.isFile()) throw new ApiError('not_found', 'No such backup');
      sendFile(ctx, file, s.size, params.name, params.name.endsWith('.age') ? 'application/octet-stream' : 'application/x-tar');
    },
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/v1/system/backups/{name}',
    auth: 'session',
    minRole: 'owner',
    extension: true,
    tags: TAGS,
    summary: 'Delete a backup',
    params: BackupParams,
    responses: { 204: { description: 'Deleted' } },
    handler: async (ctx, { params }) => {
      try {
        await unlink(path.join(backupsDir(ctx.deps.config.dataDir), params.name));
      } catch {
        throw new ApiError('not_found', 'No such backup');
      }
      return noContent();
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/system/settings/export',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'A versioned JSON document of settings, locations and groups (with their policies); no secrets',
    description: 'Sections come from modules (registerExportSection). Import it on another server with import/preview, then import/apply.',
    responses: { 200: { description: 'The export document', data: ExportDocument } },
    handler: async (ctx) => {
      const doc = await exportDocument(ctx.deps);
      return ok(doc, { 'Content-Disposition': contentDisposition('attachment', `placard-settings-${doc.exportedAt!.slice(0, 10)}.json`) });
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/system/settings/import/preview',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Validate an export document and show what importing it would change (changes nothing)',
    body: ExportDocument,
    bodyLimitBytes: 16 * 1024 * 1024,
    responses: { 200: { description: 'What would change, section by section', data: ImportPreviewDto } },
    handler: async (ctx, { body }) => ok(await previewImport(ctx.deps, body)),
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/system/settings/import/apply',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Import an export document: validated whole first, then applied in one transaction (all or nothing)',
    description: 'Items are created or updated by id; items the document lacks are left alone. Settings become the document’s (missing fields take defaults).',
    body: ExportDocument,
    bodyLimitBytes: 16 * 1024 * 1024,
    responses: { 200: { description: 'What changed', data: ImportPreviewDto } },
    handler: async (ctx, { body }) => {
      const before = (await readSettings(ctx.deps.db)).settings;
      const result = await applyImport(ctx.deps, body);
      await notifySettingsChanged(ctx.deps, before, (await readSettings(ctx.deps.db)).settings);
      return ok({ ...result, applied: true });
    },
  }),
];

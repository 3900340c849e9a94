import { useEffect, useRef, useState } from 'preact/hooks';
import { api, ApiError, atLeast, saveTextFile, uploadFile } from '../api';
import { ErrorNote, formatTime, Notice, useAction, useLoad, useSession, useTitle } from '../ui';
import { ConfirmDialog } from '../ui/dialogs';
import { CheckField, Field, formatBytes, UploadProgress } from '../ui/fields';

/** GET /api/v1/system/backups items. */
interface Backup {
  name: string;
  sizeBytes: number;
  createdAt: string;
  kind: string;
  serverVersion: string;
  schemaVersion: number;
  includesMedia: boolean;
  downloadUrl: string;
}
/** A maintenance run (POST /system/maintenance/{action}, GET .../runs/{id}). */
interface Run {
  id: string;
  action: string;
  state: 'running' | 'succeeded' | 'failed';
  progress: number;
  message: string;
  result: Record<string, unknown> | null;
  error: { code: string; message: string } | null;
}

const KIND_WORDS: Record<string, string> = {
  manual: 'Made by hand',
  scheduled: 'Automatic',
  cli: 'From the command line',
  'pre-upgrade': 'Before an upgrade',
  uploaded: 'Uploaded',
};
const sentence = (s: string) => (s ? s.charAt(0).toUpperCase() + s.slice(1) : s);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Follows a maintenance run until it ends, reporting each state. Transient failures (the
 * server busy swapping its database, a dropped connection) are retried for a while.
 */
async function followRun(id: string, onUpdate: (run: Run) => void, isCancelled: () => boolean): Promise<Run | 'signed-out'> {
  let failures = 0;
  for (;;) {
    if (isCancelled()) throw new Error('cancelled');
    try {
      const run = await api.get<Run>(`system/maintenance/runs/${id}`, { quiet401: true });
      failures = 0;
      onUpdate(run);
      if (run.state !== 'running') return run;
    } catch (err) {
      // After a restore the sessions are the backup's: this one may be gone.
      if (err instanceof ApiError && err.status === 401) return 'signed-out';
      if (err instanceof ApiError && err.status === 404)
        throw new ApiError(404, 'not_found', 'The server no longer knows this run (it restarted). Reload the page to see where things stand.');
      if (++failures > 40) throw err;
    }
    await sleep(500);
  }
}

function RunProgress({ run, label }: { run: Run; label: string }) {
  const percent = Math.round(run.progress * 100);
  return (
    <div class="progress-box" data-testid="run-progress">
      <p>
        <strong>{label}</strong> {percent}%
      </p>
      <progress value={run.progress} max={1} aria-label={`${label}: ${percent}%`} />
      <p class="muted" role="status">
        {sentence(run.message)}
      </p>
    </div>
  );
}

/** Backups: make one (with progress), list, download, upload, restore; settings export and import. */
export function BackupsPage() {
  useTitle('Backups');
  const { user } = useSession();
  const owner = atLeast(user, 'owner');
  const list = useLoad(() => api.get<{ items: Backup[] }>('system/backups'));
  const settings = useLoad(() => api.get<{ backups: { includeMedia: boolean; intervalHours: number; keep: number } }>('settings'));
  const [restoring, setRestoring] = useState<Backup | null>(null);
  const [restoreRun, setRestoreRun] = useState<Run | null>(null);
  const [restoreDone, setRestoreDone] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<Backup | null>(null);
  const [running, setRunning] = useState<Run | null>(null);
  const cancelled = useRef(false);
  useEffect(() => () => void (cancelled.current = true), []);

  // A backup or restore already under way (an automatic one, another tab) shows here too.
  useEffect(() => {
    api
      .get<{ items: Run[] }>('system/maintenance/runs')
      .then((r) => {
        const active = r.items.find((x) => x.state === 'running' && (x.action === 'backup' || x.action === 'restore'));
        if (active?.action === 'backup') void watchBackup(active);
        if (active?.action === 'restore') void watchRestore(active);
      })
      .catch(() => {});
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  const [made, setMade] = useState<Backup | null>(null);
  const [backupError, setBackupError] = useState<unknown>(null);
  const watchBackup = async (run: Run) => {
    setRunning(run);
    try {
      const end = await followRun(run.id, setRunning, () => cancelled.current);
      if (end === 'signed-out') return;
      if (end.state === 'failed')
        setBackupError(new ApiError(500, end.error?.code ?? 'internal', `The backup failed: ${end.error?.message ?? 'unknown error'}`));
      else setMade(((end.result as { backup?: Backup } | null)?.backup ?? null) as Backup | null);
    } catch (err) {
      setBackupError(err);
    } finally {
      setRunning(null);
      await list.reload();
    }
  };
  const makeBackup = useAction(async (includeMedia: boolean) => {
    setMade(null);
    setBackupError(null);
    const run = await api.post<Run>('system/maintenance/backup', { options: { includeMedia } });
    await watchBackup(run);
  });

  const [restoreFailed, setRestoreFailed] = useState<unknown>(null);
  const watchRestore = async (run: Run) => {
    setRestoreRun(run);
    setRestoreFailed(null);
    try {
      const end = await followRun(run.id, setRestoreRun, () => cancelled.current);
      if (end !== 'signed-out' && end.state === 'failed') {
        setRestoreRun(null);
        setRestoreFailed(
          new ApiError(500, end.error?.code ?? 'internal', `The restore failed; the server’s data was not changed. ${end.error?.message ?? ''}`),
        );
        return;
      }
    } catch (err) {
      setRestoreRun(null);
      setRestoreFailed(err);
      return;
    }
    setRestoreDone('The backup is restored. The console reloads now; sign in again if it asks.');
    window.setTimeout(() => window.location.reload(), 1500);
  };
  const restore = useAction(async (b: Backup) => {
    const run = await api.post<Run>('system/maintenance/restore', { options: { backup: b.name } });
    setRestoring(null);
    await watchRestore(run);
  });
  const remove = useAction(async (b: Backup) => {
    await api.del(`system/backups/${encodeURIComponent(b.name)}`);
    setDeleting(null);
    await list.reload();
  });

  const [includeMedia, setIncludeMedia] = useState<boolean | null>(null);
  const media = includeMedia ?? settings.data?.backups.includeMedia ?? true;
  const backups = list.data?.items ?? [];
  const busy = Boolean(running || restoreRun);

  if (restoreRun || restoreDone) {
    return (
      <>
        <hgroup>
          <h1>Backups</h1>
          <p>Restoring a backup</p>
        </hgroup>
        {restoreDone ? <Notice>{restoreDone}</Notice> : restoreRun && <RunProgress run={restoreRun} label="Restoring" />}
        {!restoreDone && <p>Changes are refused until the restore finishes; screens keep playing what they have. Keep this page open.</p>}
      </>
    );
  }

  return (
    <>
      <hgroup>
        <h1>Backups</h1>
        <p>A backup is one file holding everything: screens, content, schedules, users and settings, and, if you choose, the media files.</p>
      </hgroup>

      <article aria-labelledby="make-h">
        <header>
          <h2 id="make-h">Make a backup now</h2>
        </header>
        {settings.data && (
          <p class="muted">
            {settings.data.backups.intervalHours === 0
              ? 'Automatic backups are off.'
              : `An automatic backup is made every ${settings.data.backups.intervalHours === 24 ? 'day' : `${settings.data.backups.intervalHours} hours`}; the newest ${settings.data.backups.keep} are kept.`}{' '}
            <a href="/settings">Change this in Settings.</a>
          </p>
        )}
        <CheckField
          label="Include pictures, videos and other media"
          help="Without them the backup is quicker and smaller, but cannot bring back media files."
          checked={media}
          disabled={busy}
          onChange={setIncludeMedia}
        />
        {running && <RunProgress run={running} label="Making the backup" />}
        <ErrorNote error={makeBackup.error ?? backupError} />
        {made && (
          <Notice>
            Backup made: {formatTime(made.createdAt)}, {formatBytes(made.sizeBytes)}.{' '}
            {owner && (
              <a href={`/api/v1/system/backups/${encodeURIComponent(made.name)}`} download={made.name}>
                Download it
              </a>
            )}
          </Notice>
        )}
        <button type="button" aria-busy={Boolean(running)} disabled={busy} onClick={() => void makeBackup.run(media)}>
          Make a backup now
        </button>
      </article>

      <h2>Backups on this server</h2>
      {!owner && <p class="muted">Only owners can download, upload, restore or delete backups: a backup holds the server’s keys and every account.</p>}
      <ErrorNote error={restoreFailed ?? list.error} />
      <div class="table-wrap">
        <table class="striped" aria-busy={list.loading}>
          <thead>
            <tr>
              <th scope="col">Made</th>
              <th scope="col">How</th>
              <th scope="col">Contents</th>
              <th scope="col">Size</th>
              {owner && (
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              )}
            </tr>
          </thead>
          <tbody>
            {backups.map((b) => (
              <tr key={b.name} data-backup={b.name}>
                <td class="nowrap">
                  <span class="cell-label">Made </span>
                  {formatTime(b.createdAt)}
                </td>
                <td>{KIND_WORDS[b.kind] ?? b.kind}</td>
                <td>
                  {b.includesMedia ? 'Everything' : 'Everything but media files'}
                  <br />
                  <small class="muted">Placard {b.serverVersion}</small>
                </td>
                <td class="nowrap">
                  <span class="cell-label">Size </span>
                  {formatBytes(b.sizeBytes)}
                </td>
                {owner && (
                  <td class="actions">
                    <a
                      href={b.downloadUrl}
                      download={b.name}
                      role="button"
                      class="secondary outline small"
                      aria-label={`Download the backup of ${formatTime(b.createdAt)}`}
                    >
                      Download
                    </a>
                    <button
                      type="button"
                      class="secondary outline small"
                      disabled={busy}
                      aria-label={`Restore the backup of ${formatTime(b.createdAt)}`}
                      onClick={() => setRestoring(b)}
                    >
                      Restore…
                    </button>
                    <button
                      type="button"
                      class="danger outline small"
                      disabled={busy}
                      aria-label={`Delete the backup of ${formatTime(b.createdAt)}`}
                      onClick={() => setDeleting(b)}
                    >
                      Delete
                    </button>
                  </td>
                )}
              </tr>
            ))}
            {!list.loading && backups.length === 0 && (
              <tr>
                <td colSpan={owner ? 5 : 4} class="muted">
                  No backups yet.
                </td>
              </tr>
            )}
          </tbody>
        </table>
      </div>

      {owner && <UploadBackup disabled={busy} onUploaded={list.reload} />}
      <SettingsTransfer />

      {restoring && (
        <ConfirmDialog
          open
          title="Restore this backup?"
          confirmLabel="Restore"
          danger
          busy={restore.busy}
          error={restore.error}
          onConfirm={() => void restore.run(restoring)}
          onClose={() => {
            restore.setError(null);
            setRestoring(null);
          }}
        >
          <p>
            Everything goes back to how it was on <strong>{formatTime(restoring.createdAt)}</strong>: screens, playlists, layouts, schedules, users, passwords
            and settings. What was changed since then is lost.
          </p>
          <ul>
            {!restoring.includesMedia && <li>This backup has no media files: the media files on the server stay as they are now.</li>}
            <li>
              Changes people are saving right now are allowed to finish first (up to 30 seconds); then the server refuses changes until the restore is done.
              Screens keep playing.
            </li>
            <li>The server swaps its database for the backup’s. Everyone may have to sign in again, with the accounts and passwords of the backup.</li>
            <li>
              This page shows the progress and reloads the console when it is done. The current database is kept on the server as a file in case you need it.
            </li>
          </ul>
        </ConfirmDialog>
      )}
      {deleting && (
        <ConfirmDialog
          open
          title="Delete this backup?"
          confirmLabel="Delete"
          danger
          busy={remove.busy}
          error={remove.error}
          onConfirm={() => void remove.run(deleting)}
          onClose={() => {
            remove.setError(null);
            setDeleting(null);
          }}
        >
          <p>
            The backup of {formatTime(deleting.createdAt)} ({formatBytes(deleting.sizeBytes)}) is deleted from the server for good. Download it first if you
            want to keep a copy.
          </p>
        </ConfirmDialog>
      )}
    </>
  );
}

/** Upload a backup file (a .tar made by Placard) with a progress bar; the server checks it whole before keeping it. */
function UploadBackup({ disabled, onUploaded }: { disabled: boolean; onUploaded: () => Promise<void> }) {
  const [file, setFile] = useState<File | null>(null);
  const [sent, setSent] = useState<{ sent: number; total: number } | null>(null);
  const [done, setDone] = useState<Backup | null>(null);
  const abort = useRef<AbortController | null>(null);
  const inputRef = useRef<HTMLInputElement>(null);
  const upload = useAction(async () => {
    if (!file) return;
    setDone(null);
    abort.current = new AbortController();
    setSent({ sent: 0, total: file.size });
    try {
      const b = await uploadFile<Backup>('system/backups', file, {
        contentType: 'application/x-tar',
        signal: abort.current.signal,
        onProgress: (s, total) => setSent({ sent: s, total }),
      });
      setDone(b);
      setFile(null);
      if (inputRef.current) inputRef.current.value = '';
      await onUploaded();
    } finally {
      setSent(null);
      abort.current = null;
    }
  });
  const checking = sent && sent.sent >= sent.total;
  return (
    <article aria-labelledby="upload-h">
      <header>
        <h2 id="upload-h">Upload a backup</h2>
      </header>
      <p class="section-intro">To restore a backup made on another server or kept on your computer, upload it here first; it then appears in the list above.</p>
      <form
        aria-label="Upload a backup"
        onSubmit={(e) => {
          e.preventDefault();
          void upload.run();
        }}
      >
        <Field label="Backup file (.tar)" help="A file downloaded from a Placard Backups page. It is checked whole before it is kept.">
          {(p) => (
            <input
              {...p}
              ref={inputRef}
              type="file"
              name="backup"
              accept=".tar,application/x-tar"
              disabled={disabled || upload.busy}
              onChange={(e) => setFile(e.currentTarget.files?.[0] ?? null)}
            />
          )}
        </Field>
        {sent && <UploadProgress sent={sent} checking={checking === true} what="the backup" testId="upload-progress" />}
        <ErrorNote error={upload.error instanceof ApiError && upload.error.code === 'aborted' ? null : upload.error} />
        {done && <Notice>Uploaded and checked: the backup of {formatTime(done.createdAt)} is now in the list.</Notice>}
        <div class="form-actions">
          <button type="submit" disabled={!file || disabled || upload.busy} aria-busy={upload.busy}>
            Upload
          </button>
          {upload.busy && !checking && (
            <button type="button" class="secondary" onClick={() => abort.current?.abort()}>
              Cancel upload
            </button>
          )}
        </div>
      </form>
    </article>
  );
}

interface ImportPreview {
  sections: {
    key: string;
    version: number;
    changes: { action: 'create' | 'update' | 'unchanged' | 'delete'; id?: string; name?: string; detail?: string }[];
    summary: { create: number; update: number; unchanged: number; delete: number };
  }[];
  ignored: { key: string; reason: string }[];
  applied?: boolean;
}
const SECTION_WORDS: Record<string, string> = { settings: 'Settings', locations: 'Locations', groups: 'Screen groups' };
const ACTION_WORDS: Record<string, string> = { create: 'New', update: 'Changed', delete: 'Removed', unchanged: 'Same' };
/** The settings' own names, as the Settings page words them. */
const SETTING_WORDS: Record<string, string> = {
  serverName: 'Server name',
  publicUrl: 'Address screens use to reach this server',
  timeZone: 'Time zone',
  locale: 'Language for dates and times',
  retention: 'History kept',
  uploads: 'Uploads',
  network: 'Local network',
  approvals: 'Approvals',
  backups: 'Automatic backups',
};

function summaryText(s: ImportPreview['sections'][number]['summary']): string {
  const parts = [
    s.create && `${s.create} new`,
    s.update && `${s.update} changed`,
    s.delete && `${s.delete} removed`,
    s.unchanged && `${s.unchanged} the same`,
  ].filter(Boolean);
  return parts.length ? parts.join(', ') : 'none in the file';
}

/** Settings export (a JSON file) and import, with what would change shown before anything does. */
function SettingsTransfer() {
  const [doc, setDoc] = useState<unknown>(null);
  const [fileName, setFileName] = useState('');
  const [preview, setPreview] = useState<ImportPreview | null>(null);
  const [applied, setApplied] = useState<ImportPreview | null>(null);
  const inputRef = useRef<HTMLInputElement>(null);
  const exportIt = useAction(async () => {
    const exported = await api.get<{ exportedAt?: string }>('system/settings/export');
    saveTextFile(`placard-settings-${(exported.exportedAt ?? new Date().toISOString()).slice(0, 10)}.json`, JSON.stringify(exported, null, 2));
  });
  const read = useAction(async (file: File) => {
    setPreview(null);
    setApplied(null);
    setDoc(null);
    let parsed: unknown;
    try {
      parsed = JSON.parse(await file.text());
    } catch {
      throw new Error('This file is not a Placard settings file (it is not JSON).');
    }
    // A file saved from the API by hand carries the envelope: take what is inside.
    if (parsed && typeof parsed === 'object' && 'data' in parsed && !('format' in parsed)) parsed = (parsed as { data: unknown }).data;
    setPreview(await api.post<ImportPreview>('system/settings/import/preview', parsed));
    setDoc(parsed);
  });
  const apply = useAction(async () => {
    const result = await api.post<ImportPreview>('system/settings/import/apply', doc);
    setApplied(result);
    setPreview(null);
    setDoc(null);
    setFileName('');
    if (inputRef.current) inputRef.current.value = '';
  });
  const changes = preview ? preview.sections.reduce((n, s) => n + s.summary.create + s.summary.update + s.summary.delete, 0) : 0;
  return (
    <article aria-labelledby="transfer-h">
      <header>
        <h2 id="transfer-h">Copy settings to another server</h2>
      </header>
      <p class="section-intro">
        A small file with the settings, locations and screen groups, without content, accounts or passwords. Import it on another Placard server to set it up
        the same way.
      </p>
      <div class="form-actions">
        <button type="button" class="secondary" aria-busy={exportIt.busy} disabled={exportIt.busy} onClick={() => void exportIt.run()}>
          Download settings file
        </button>
      </div>
      <ErrorNote error={exportIt.error} />
      <Field label="Import a settings file (.json)" help="You see what would change before anything does.">
        {(p) => (
          <input
            {...p}
            ref={inputRef}
            type="file"
            name="settingsFile"
            accept=".json,application/json"
            onChange={(e) => {
              const f = e.currentTarget.files?.[0];
              setFileName(f?.name ?? '');
              if (f) void read.run(f);
            }}
          />
        )}
      </Field>
      {read.busy && <p aria-busy="true">Reading {fileName}…</p>}
      {read.error && (
        <>
          <ErrorNote error={read.error} />
          {read.error instanceof ApiError && read.error.details !== undefined && (
            <details class="raw">
              <summary>Details</summary>
              <pre>{JSON.stringify(read.error.details, null, 2)}</pre>
            </details>
          )}
        </>
      )}
      {preview && (
        <section aria-labelledby="preview-h" data-testid="import-preview">
          <h3 id="preview-h" class="small-heading">
            What importing {fileName || 'this file'} would change
          </h3>
          {preview.sections.map((s) => (
            <div key={s.key}>
              <p>
                <strong>{SECTION_WORDS[s.key] ?? s.key}</strong>: {summaryText(s.summary)}
              </p>
              <ul class="preview-list">
                {s.changes
                  .filter((c) => c.action !== 'unchanged')
                  .map((c, i) => (
                    <li key={i} class={`change-${c.action}`}>
                      {ACTION_WORDS[c.action]}: {(s.key === 'settings' && c.name && SETTING_WORDS[c.name]) || c.name || c.id}
                      {c.detail && <span class="muted"> ({c.detail})</span>}
                    </li>
                  ))}
              </ul>
            </div>
          ))}
          {preview.ignored.length > 0 && <p class="muted">Not imported: {preview.ignored.map((i) => `${i.key} (${i.reason})`).join('; ')}.</p>}
          <p>Items the file does not have are left alone. Settings the file leaves out go back to their defaults.</p>
          <ErrorNote error={apply.error} />
          <div class="form-actions">
            <button type="button" disabled={changes === 0 || apply.busy} aria-busy={apply.busy} onClick={() => void apply.run()}>
              {changes === 0 ? 'Nothing to change' : `Apply ${changes} ${changes === 1 ? 'change' : 'changes'}`}
            </button>
            <button
              type="button"
              class="secondary"
              onClick={() => {
                setPreview(null);
                setDoc(null);
                if (inputRef.current) inputRef.current.value = '';
              }}
            >
              Cancel
            </button>
          </div>
        </section>
      )}
      {applied && <Notice>Imported: {applied.sections.map((s) => `${SECTION_WORDS[s.key] ?? s.key} ${summaryText(s.summary)}`).join('; ')}.</Notice>}
    </article>
  );
}

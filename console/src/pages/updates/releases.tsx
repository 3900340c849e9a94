import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api, uploadFile } from '../../api';
import { ErrorNote, formatTime, Notice, useAction, useLoad, useTitle } from '../../ui';
import { showToast } from '../../ui/confirm';
import { Field, formatBytes, UploadProgress } from '../../ui/fields';
import {
  ARCHITECTURES,
  architectureLabel,
  CACHE_LABEL,
  type Channel,
  FAMILIES,
  type Family,
  familyLabel,
  KIND_LABEL,
  loadReleases,
  NEEDS_ARCHITECTURE,
  type Release,
  shortSha,
  tone,
} from './model';
import { UpdatesNav } from './nav';
import { ReleaseSourcePanel } from './source';
import './updates.css';

/** Player releases: the list, an upload, the release source (docs/console.md, "Player updates"). */
export function ReleasesPage() {
  useTitle('Player releases');
  const list = useLoad(loadReleases);
  const releases = list.data?.releases ?? [];
  // While an artifact downloads into the server, read the list again every 2 s for its progress.
  const downloading = releases.some((r) => r.architectures.some((a) => a.cacheState === 'downloading'));
  useEffect(() => {
    if (!downloading) return;
    const id = window.setInterval(() => void list.reload(), 2000);
    return () => window.clearInterval(id);
  }, [downloading, list.reload]);

  const cache = useAction(async (r: Release) => {
    await api.post<Release>(`player-releases/${r.id}/cache`, {});
    showToast(`Downloading ${familyLabel(r.family)} ${r.version} to this server.`);
    await list.reload();
  });

  return (
    <>
      <hgroup>
        <h1>Player updates</h1>
        <p>Player releases kept on this server, and deployments that roll them out to screens in waves.</p>
      </hgroup>
      <UpdatesNav current="releases" />
      <ErrorNote error={list.error} />
      <section aria-labelledby="releases-h">
        <h2 id="releases-h">Releases</h2>
        {list.data && releases.length === 0 && <p class="muted">No release yet: upload one below, or connect the release source and check.</p>}
        {releases.length > 0 && (
          <div class="table-wrap">
            <table class="striped releases updates-table" data-testid="releases">
              <thead>
                <tr>
                  <th scope="col">Player</th>
                  <th scope="col">Version</th>
                  <th scope="col">From</th>
                  <th scope="col">Files</th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {releases.map((r) => (
                  <tr key={r.id} data-release={`${r.family} ${r.version}`}>
                    <td data-label="Player">{familyLabel(r.family)}</td>
                    <td data-label="Version">
                      <strong>{r.version}</strong> <span class={`badge${r.channel === 'beta' ? ' warn' : ''}`}>{r.channel}</span>
                      {r.notes && <small class="muted release-notes">{r.notes}</small>}
                    </td>
                    <td data-label="From">
                      {r.source === 'upload' ? 'uploaded' : 'release source'}
                      <br />
                      <small class="muted">{formatTime(r.createdAt)}</small>
                    </td>
                    <td data-label="Files">
                      <ul class="artifacts">
                        {r.architectures.map((a) => (
                          <li key={a.architecture} data-architecture={a.architecture}>
                            <span>
                              {architectureLabel(a.architecture)}: {KIND_LABEL[a.kind] ?? a.kind}, {formatBytes(a.sizeBytes)}, sha256{' '}
                              <code title={a.sha256}>{shortSha(a.sha256)}…</code>
                              {a.signed ? ', signed' : ''}{' '}
                              <span class={`badge ${tone(a.cacheState)}`} data-testid="cache-state">
                                {CACHE_LABEL[a.cacheState] ?? a.cacheState}
                              </span>
                            </span>
                            {a.cacheState === 'downloading' && (
                              <progress
                                value={a.cachedBytes}
                                max={Math.max(1, a.sizeBytes)}
                                aria-label={`Download of ${a.fileName}: ${Math.round((a.cachedBytes / Math.max(1, a.sizeBytes)) * 100)}%`}
                              />
                            )}
                            {a.cacheState === 'failed' && a.error && <small class="field-error">{a.error}</small>}
                          </li>
                        ))}
                      </ul>
                    </td>
                    <td class="actions">
                      {r.cached ? (
                        <a href={`/updates/deployments?release=${r.id}`} role="button" class="secondary outline small">
                          Deploy
                        </a>
                      ) : (
                        !r.architectures.some((a) => a.cacheState === 'downloading') && (
                          <button type="button" class="secondary outline small" disabled={cache.busy} onClick={() => void cache.run(r)}>
                            Download to this server
                          </button>
                        )
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <ErrorNote error={cache.error} />
      </section>
      {list.data && <UploadRelease onUploaded={list.reload} />}
      {list.data && <ReleaseSourcePanel source={list.data.releaseSource} onChange={list.reload} />}
    </>
  );
}

interface UploadDraft {
  family: Family;
  version: string;
  channel: Channel;
  architecture: string;
  notes: string;
}
const EMPTY: UploadDraft = { family: 'desktop-linux', version: '', channel: 'stable', architecture: 'x86_64', notes: '' };

const ACCEPT: Record<Family, string> = {
  android: '.apk,application/vnd.android.package-archive',
  'desktop-linux': '.tar.gz,.tgz,.deb,application/gzip,application/vnd.debian.binary-package',
  edge: '.tar.gz,.tgz,.deb,application/gzip,application/vnd.debian.binary-package',
  web: '.tar.gz,.tgz,application/gzip',
};
const FILE_HELP: Record<Family, string> = {
  android: 'The APK. Placard checks it is one (an Android package with its manifest).',
  'desktop-linux': 'A .tar.gz or a .deb of the Linux player.',
  edge: 'A .tar.gz or a .deb of the edge player.',
  web: 'A .tar.gz of the console build with index.html, play.html and version.json at its root.',
};

/** Upload a release artifact with its metadata (multipart, progress from XMLHttpRequest's upload events). */
function UploadRelease({ onUploaded }: { onUploaded: () => Promise<void> }) {
  const [draft, setDraft] = useState<UploadDraft>(EMPTY);
  const [file, setFile] = useState<File | null>(null);
  const [sent, setSent] = useState<{ sent: number; total: number } | null>(null);
  const [done, setDone] = useState<Release | null>(null);
  const [missing, setMissing] = useState('');
  const inputRef = useRef<HTMLInputElement>(null);
  const abort = useRef<AbortController | null>(null);
  const perArch = NEEDS_ARCHITECTURE.includes(draft.family);
  const archChoices = perArch ? ARCHITECTURES.filter((a) => a !== 'any') : ['any'];

  const upload = useAction(async () => {
    setDone(null);
    if (!draft.version.trim()) return setMissing('Type the version (for example 1.4.0).');
    if (!file) return setMissing('Choose the file to upload.');
    setMissing('');
    const form = new FormData();
    form.set('family', draft.family);
    form.set('version', draft.version.trim());
    form.set('channel', draft.channel);
    form.set('notes', draft.notes);
    form.set('architecture', perArch ? draft.architecture : 'any');
    form.set('file', file, file.name);
    abort.current = new AbortController();
    setSent({ sent: 0, total: file.size });
    try {
      const r = await uploadFile<Release>('player-releases/upload', form, {
        signal: abort.current.signal,
        onProgress: (s, total) => setSent({ sent: s, total }),
      });
      setDone(r);
      setFile(null);
      if (inputRef.current) inputRef.current.value = '';
      await onUploaded();
    } finally {
      setSent(null);
      abort.current = null;
    }
  });
  const err = upload.error instanceof ApiError ? upload.error : null;
  const fieldError = (f: string) => err?.fieldMessage(f);
  const checking = sent && sent.sent >= sent.total;
  return (
    <article aria-labelledby="upload-release-h">
      <header>
        <h2 id="upload-release-h">Upload a release</h2>
      </header>
      <form
        aria-label="Upload a release"
        onSubmit={(e) => {
          e.preventDefault();
          void upload.run();
        }}
      >
        <div class="grid">
          <Field label="Player" error={fieldError('family')}>
            {(p) => (
              <select
                {...p}
                name="family"
                value={draft.family}
                onChange={(e) => {
                  const family = e.currentTarget.value as Family;
                  setDraft({ ...draft, family, architecture: NEEDS_ARCHITECTURE.includes(family) ? 'x86_64' : 'any' });
                }}
              >
                {FAMILIES.map((f) => (
                  <option key={f.value} value={f.value}>
                    {f.label}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <Field label="Version" error={fieldError('version')} help="Semantic version, e.g. 1.4.0 or 2.0.0-beta.1.">
            {(p) => (
              <input
                {...p}
                name="version"
                aria-required="true"
                placeholder="1.4.0"
                value={draft.version}
                onInput={(e) => setDraft({ ...draft, version: e.currentTarget.value })}
              />
            )}
          </Field>
          <Field label="Channel" error={fieldError('channel')}>
            {(p) => (
              <select {...p} name="channel" value={draft.channel} onChange={(e) => setDraft({ ...draft, channel: e.currentTarget.value as Channel })}>
                <option value="stable">stable</option>
                <option value="beta">beta</option>
              </select>
            )}
          </Field>
          <Field
            label="Architecture"
            error={fieldError('architecture')}
            help={perArch ? 'The processor the build is for, as screens report it.' : 'One build fits every screen of this kind.'}
          >
            {(p) => (
              <select
                {...p}
                name="architecture"
                disabled={!perArch}
                value={perArch ? draft.architecture : 'any'}
                onChange={(e) => setDraft({ ...draft, architecture: e.currentTarget.value })}
              >
                {archChoices.map((a) => (
                  <option key={a} value={a}>
                    {architectureLabel(a)}
                  </option>
                ))}
              </select>
            )}
          </Field>
        </div>
        <Field label="Release notes" error={fieldError('notes')}>
          {(p) => (
            <textarea {...p} name="notes" rows={2} maxLength={5000} value={draft.notes} onInput={(e) => setDraft({ ...draft, notes: e.currentTarget.value })} />
          )}
        </Field>
        <Field label="File" error={fieldError('file')} help={FILE_HELP[draft.family]}>
          {(p) => (
            <input
              {...p}
              ref={inputRef}
              type="file"
              name="file"
              accept={ACCEPT[draft.family]}
              disabled={upload.busy}
              onChange={(e) => {
                setFile(e.currentTarget.files?.[0] ?? null);
                upload.setError(null);
              }}
            />
          )}
        </Field>
        {sent && <UploadProgress sent={sent} checking={checking === true} what="the file" testId="release-upload-progress" />}
        {missing && (
          <p class="field-error" role="alert">
            {missing}
          </p>
        )}
        <div data-testid="upload-error">
          <ErrorNote error={err?.code === 'aborted' ? null : upload.error} />
        </div>
        {done && (
          <Notice>
            Uploaded: {familyLabel(done.family)} {done.version} is in the list.
          </Notice>
        )}
        <div class="form-actions row">
          <button type="submit" disabled={upload.busy} aria-busy={upload.busy}>
            Upload release
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

import { Fragment, type ComponentChildren } from 'preact';
import { useEffect } from 'preact/hooks';
import { api, ApiError } from '../api';
import { displayLocale } from '../locale';
import { ErrorNote, formatTime, useLoad, useTitle } from '../ui';
import { formatBytes, formatDuration } from '../ui/fields';

interface Tool {
  ok: boolean;
  detail: string;
  version?: string | null;
  libvips?: string | null;
}
interface Section {
  title: string;
  ok: boolean;
  error?: string;
  data: Record<string, unknown>;
}
/** GET /api/v1/system/status (docs/operations.md). */
export interface SystemStatus {
  version: string;
  apiVersion: string;
  instanceId: string;
  serverName: string;
  startedAt: string;
  uptimeSec: number;
  runtime: {
    node: string;
    platform: string;
    arch: string;
    hostname: string;
    loadAverage: number[];
    memoryRssBytes: number;
    systemMemoryFreeBytes: number;
    systemMemoryTotalBytes: number;
  };
  database: {
    engine: 'sqlite' | 'postgres';
    engineVersion: string;
    sqliteVersion: string | null;
    schemaVersion: number;
    schemaVersionKnown: number;
    sizeBytes: number;
    walBytes: number;
    file: string;
  };
  storage: { dataDir: string; freeBytes: number | null; totalBytes: number | null; usedPercent: number | null };
  tools: { sharp: Tool; ffmpeg: Tool; ffprobe: Tool };
  backups: {
    count: number;
    totalBytes: number;
    last: { name: string; createdAt: string; sizeBytes: number; kind: string } | null;
    intervalHours: number;
    nextDueAt: string | null;
  };
  maintenance: { restoreInProgress: boolean; running: { id: string; action: string; progress: number; message: string }[] };
  sections: Record<string, Section>;
}

interface Check {
  ok: boolean;
  detail: string;
}
type Readiness = { ready: boolean; message: string; checks: Record<string, Check> };

/** /readyz answers 200 with the checks, or 503 `not_ready` with them in details. */
async function readiness(): Promise<Readiness> {
  try {
    const r = await api.get<{ checks: Record<string, Check> }>('/readyz');
    return { ready: true, message: 'Ready', checks: r.checks };
  } catch (err) {
    if (err instanceof ApiError && err.code === 'not_ready') {
      return {
        ready: false,
        message: err.message,
        checks: ((err.details as { checks?: Record<string, Check> } | undefined)?.checks ?? {}) as Record<string, Check>,
      };
    }
    throw err;
  }
}

const CHECK_NAMES: Record<string, string> = {
  database: 'Database',
  sharp: 'Image processing (sharp)',
  ffmpeg: 'Video processing (ffmpeg)',
  ffprobe: 'Video inspection (ffprobe)',
  restore: 'No restore running',
  pdf: 'PDF processing',
};

/** Words for the keys modules report in their status sections; others are split from camelCase. */
const KEY_LABELS: Record<string, string> = {
  mediaFiles: 'Media files',
  mediaBytes: 'Size of media files',
  partialUploadFiles: 'Unfinished upload files',
  partialUploadBytes: 'Size of unfinished uploads',
  releaseFiles: 'Player release files',
  releaseBytes: 'Size of player releases',
  assets: 'Media items',
  byState: 'By state',
  byKind: 'By kind',
  originalBytes: 'Size of originals',
  variants: 'Screen-ready copies',
  variantBytes: 'Size of screen-ready copies',
  storedFiles: 'Files stored',
  storedBytes: 'Size of files stored',
  partialUploads: 'Unfinished uploads',
  queued: 'Waiting',
  due: 'Ready to run',
  retrying: 'Retrying',
  running: 'Running',
  done: 'Done',
  failed: 'Failed',
  failedLast24h: 'Failed in the last 24 hours',
  oldestQueuedAt: 'Oldest waiting since',
  oldestQueuedAgeSec: 'Oldest waiting for',
  lastFailure: 'Last failure',
  screens: 'Screens',
  online: 'Online',
  stale: 'Not heard from lately',
  offline: 'Offline',
  neverSeen: 'Never connected',
  disabled: 'Disabled',
  revoked: 'Removed',
};

function labelOf(key: string): string {
  if (KEY_LABELS[key]) return KEY_LABELS[key]!;
  const words = key.replace(/([a-z0-9])([A-Z])/g, '$1 $2').toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

const formatNumber = (n: number) => n.toLocaleString(displayLocale());

/** A value of a module's status section in words: sizes, times, durations, small objects inline. */
function valueView(key: string, v: unknown): ComponentChildren {
  if (v === null || v === undefined) return '—';
  if (typeof v === 'number') {
    if (/Bytes$/.test(key)) return formatBytes(v);
    if (/Sec$/.test(key)) return formatDuration(v);
    if (/Ms$/.test(key)) return formatDuration(v / 1000);
    return formatNumber(v);
  }
  if (typeof v === 'string') return /At$/.test(key) ? formatTime(v) : v;
  if (typeof v === 'boolean') return v ? 'Yes' : 'No';
  if (Array.isArray(v)) return v.length === 0 ? 'none' : v.map((x) => (typeof x === 'object' ? JSON.stringify(x) : String(x))).join(', ');
  if (typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>);
    if (entries.length === 0) return 'none';
    // {ready: 3, failed: 1} -> "ready 3 · failed 1"; deeper objects as a nested list.
    if (entries.every(([, x]) => typeof x === 'number')) return entries.map(([k, x]) => `${labelOf(k).toLowerCase()} ${formatNumber(x as number)}`).join(' · ');
    return <Facts rows={entries.map(([k, x]) => [labelOf(k), valueView(k, x)])} />;
  }
  return String(v);
}

function Facts({ rows }: { rows: [ComponentChildren, ComponentChildren][] }) {
  return (
    <dl class="facts">
      {rows.map(([k, v], i) => (
        <Fragment key={i}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </Fragment>
      ))}
    </dl>
  );
}

function Card({ id, title, ok, children }: { id: string; title: string; ok?: boolean; children: ComponentChildren }) {
  return (
    <article aria-labelledby={`${id}-h`} data-card={id}>
      <header>
        <h2 id={`${id}-h`}>{title}</h2>
        {ok !== undefined && <span class={ok ? 'badge ok' : 'badge bad'}>{ok ? 'OK' : 'Problem'}</span>}
      </header>
      {children}
    </article>
  );
}

const KIND_WORDS: Record<string, string> = {
  manual: 'made by hand',
  scheduled: 'automatic',
  cli: 'from the command line',
  'pre-upgrade': 'before an upgrade',
  uploaded: 'uploaded',
};

/** System status: the sections of GET /system/status as cards, readiness (/readyz), versions, disk. */
export function SystemPage() {
  useTitle('System status');
  const status = useLoad(() => api.get<SystemStatus>('system/status'));
  const ready = useLoad(readiness);
  const reload = () => {
    void status.reload();
    void ready.reload();
  };
  // Fresh figures every 30 s while the page is open.
  useEffect(() => {
    const timer = window.setInterval(reload, 30_000);
    return () => window.clearInterval(timer);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);
  const s = status.data;
  const r = ready.data;
  const lowDisk = s?.storage.usedPercent !== null && s?.storage.usedPercent !== undefined && s.storage.usedPercent >= 90;
  return (
    <>
      <hgroup>
        <h1>System status</h1>
        <p>How this server is doing. The figures refresh every 30 seconds.</p>
      </hgroup>
      <div class="row wrap-buttons">
        <button type="button" class="secondary outline" aria-busy={status.loading || ready.loading} onClick={reload}>
          Refresh now
        </button>
        {s && (
          <small class="muted">
            Server “{s.serverName}”, up for {formatDuration(s.uptimeSec)}.
          </small>
        )}
      </div>
      <ErrorNote error={status.error ?? ready.error} />
      {!s && !status.error && <p aria-busy="true">Loading…</p>}
      {s && (
        <div class="status-cards">
          <Card id="readiness" title="Ready to serve" ok={r?.ready}>
            {r ? (
              <>
                <p class={r.ready ? 'ok-text' : 'bad-text'} data-testid="readiness">
                  {r.ready ? 'Yes: screens and people can use this server.' : r.message}
                </p>
                <ul class="check-list">
                  {Object.entries(r.checks).map(([name, c]) => (
                    <li key={name}>
                      <span class={c.ok ? 'ok-text' : 'bad-text'} aria-hidden="true">
                        {c.ok ? '✓' : '✗'}
                      </span>
                      <span>
                        {CHECK_NAMES[name] ?? labelOf(name)} <span class="visually-hidden">{c.ok ? 'OK' : 'failing'}</span>
                        {/* What failed, in the server's words; a working check needs none (versions are below). */}
                        {!c.ok && (
                          <>
                            <br />
                            <span class="detail">{c.detail}</span>
                          </>
                        )}
                      </span>
                    </li>
                  ))}
                </ul>
              </>
            ) : (
              <p aria-busy="true">Checking…</p>
            )}
          </Card>
          <Card id="disk" title="Disk" ok={s.storage.usedPercent === null ? undefined : !lowDisk}>
            {s.storage.usedPercent !== null && (
              <div class="meter-line">
                <progress value={s.storage.usedPercent} max={100} aria-label="Disk space used" />
                <span class={lowDisk ? 'bad-text' : undefined}>
                  {s.storage.usedPercent}% used{lowDisk ? ': almost full. Delete old backups or media, or give the server a bigger disk.' : ''}
                </span>
              </div>
            )}
            <Facts
              rows={[
                ['Free', formatBytes(s.storage.freeBytes)],
                ['Size', formatBytes(s.storage.totalBytes)],
                ['Data folder', <code>{s.storage.dataDir}</code>],
              ]}
            />
          </Card>
          <Card id="versions" title="Versions">
            <Facts
              rows={[
                ['Placard', s.version],
                ['API', s.apiVersion],
                ['Node.js', s.runtime.node],
                [s.database.engine === 'postgres' ? 'PostgreSQL' : 'SQLite', s.database.engineVersion],
                [
                  'Image processing',
                  s.tools.sharp.ok ? (
                    `sharp ${s.tools.sharp.version ?? ''} (libvips ${s.tools.sharp.libvips ?? '?'})`
                  ) : (
                    <span class="bad-text">{s.tools.sharp.detail}</span>
                  ),
                ],
                ['ffmpeg', s.tools.ffmpeg.ok ? (s.tools.ffmpeg.version ?? 'available') : <span class="bad-text">{s.tools.ffmpeg.detail}</span>],
                ['ffprobe', s.tools.ffprobe.ok ? (s.tools.ffprobe.version ?? 'available') : <span class="bad-text">{s.tools.ffprobe.detail}</span>],
              ]}
            />
          </Card>
          <Card id="server" title="Machine">
            <Facts
              rows={[
                ['Name', s.runtime.hostname],
                ['System', `${s.runtime.platform} ${s.runtime.arch}`],
                ['Running since', formatTime(s.startedAt)],
                ['Load (1, 5, 15 min)', s.runtime.loadAverage.map((n) => n.toLocaleString(displayLocale())).join(', ')],
                ['Memory used by Placard', formatBytes(s.runtime.memoryRssBytes)],
                ['Memory free', `${formatBytes(s.runtime.systemMemoryFreeBytes)} of ${formatBytes(s.runtime.systemMemoryTotalBytes)}`],
              ]}
            />
          </Card>
          <Card id="database" title="Database" ok={s.database.schemaVersion <= s.database.schemaVersionKnown}>
            <Facts
              rows={[
                ['Size', formatBytes(s.database.sizeBytes)],
                ...(s.database.engine === 'sqlite' ? [['Pending writes (WAL)', formatBytes(s.database.walBytes)] as [string, string]] : []),
                [
                  'Schema',
                  s.database.schemaVersion === s.database.schemaVersionKnown
                    ? 'up to date'
                    : `${s.database.schemaVersion} (this version knows ${s.database.schemaVersionKnown})`,
                ],
                [s.database.engine === 'postgres' ? 'Server' : 'File', <code>{s.database.file}</code>],
              ]}
            />
          </Card>
          <Card id="backups" title="Backups">
            <Facts
              rows={[
                [
                  'Last',
                  s.backups.last ? (
                    `${formatTime(s.backups.last.createdAt)} (${KIND_WORDS[s.backups.last.kind] ?? s.backups.last.kind}, ${formatBytes(s.backups.last.sizeBytes)})`
                  ) : (
                    <span class="warn-text">none yet</span>
                  ),
                ],
                ['Next automatic', s.backups.nextDueAt ? formatTime(s.backups.nextDueAt) : 'off'],
                ['Kept', `${s.backups.count} (${formatBytes(s.backups.totalBytes)})`],
              ]}
            />
            <p>
              <a href="/backups">Make, download or restore a backup</a>
            </p>
          </Card>
          {Object.entries(s.sections).map(([key, section]) => (
            <Card key={key} id={`section-${key}`} title={section.title} ok={section.ok}>
              {section.ok ? (
                <Facts rows={Object.entries(section.data).map(([k, v]) => [labelOf(k), valueView(k, v)])} />
              ) : (
                <p class="bad-text">This part could not be read: {section.error}</p>
              )}
            </Card>
          ))}
          {(s.maintenance.restoreInProgress || s.maintenance.running.length > 0) && (
            <Card id="maintenance" title="Maintenance running">
              {s.maintenance.restoreInProgress && <p class="warn-text">A restore is in progress: changes are refused until it finishes.</p>}
              <ul class="plain">
                {s.maintenance.running.map((m) => (
                  <li key={m.id}>
                    {labelOf(m.action)}: {Math.round(m.progress * 100)}% ({m.message})
                    <progress value={m.progress} max={1} aria-label={`${m.action} progress`} />
                  </li>
                ))}
              </ul>
            </Card>
          )}
        </div>
      )}
      {s && (
        <details class="raw">
          <summary>Technical details (raw status)</summary>
          <pre>{JSON.stringify({ status: s, readiness: r }, null, 2)}</pre>
        </details>
      )}
    </>
  );
}

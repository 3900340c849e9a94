import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { api, ApiError } from '../api';
import { setServerLocale } from '../locale';
import { ErrorNote, formatTime, Notice, useAction, useLoad, useTitle } from '../ui';
import { CheckField, Field, formatBytes } from '../ui/fields';

/** GET /api/v1/settings (docs/operations.md). */
export interface SettingsDoc {
  serverName: string;
  publicUrl: string | null;
  timeZone: string;
  locale: string | null;
  retention: { heartbeatDays: number; noiseHistoryDays: number; screenshotDays: number; auditDays: number; jobHistoryDays: number };
  uploads: { maxSizeBytes: number; abandonAfterHours: number };
  network: { allowPrivateFetchTargets: boolean };
  approvals: { required: boolean; allowSelfApproval: boolean };
  provisioning: { mirroringReceiver: { fileName: string; sha256: string; sizeBytes: number; uploadedAt: string } | null };
  backups: { intervalHours: number; keep: number; includeMedia: boolean };
  revision: number;
  updatedAt: string | null;
}
type Patch = Partial<Omit<SettingsDoc, 'revision' | 'updatedAt' | 'provisioning' | 'retention' | 'uploads' | 'network' | 'approvals' | 'backups'>> & {
  retention?: Partial<SettingsDoc['retention']>;
  uploads?: Partial<SettingsDoc['uploads']>;
  network?: Partial<SettingsDoc['network']>;
  approvals?: Partial<SettingsDoc['approvals']>;
  backups?: Partial<SettingsDoc['backups']>;
};

const GiB = 1024 ** 3;

export const TIME_ZONES: string[] = (() => {
  try {
    return (Intl as unknown as { supportedValuesOf(k: string): string[] }).supportedValuesOf('timeZone');
  } catch {
    return ['UTC'];
  }
})();

/** Languages and formats offered; any other valid tag already stored is shown too. */
const LOCALES = [
  'en-US',
  'en-GB',
  'en-AU',
  'en-CA',
  'fr-FR',
  'fr-BE',
  'fr-CA',
  'fr-CH',
  'de-DE',
  'de-AT',
  'de-CH',
  'es-ES',
  'es-MX',
  'it-IT',
  'pt-PT',
  'pt-BR',
  'nl-NL',
  'nl-BE',
  'sv-SE',
  'da-DK',
  'nb-NO',
  'fi-FI',
  'pl-PL',
  'cs-CZ',
  'hu-HU',
  'ro-RO',
  'el-GR',
  'tr-TR',
  'ru-RU',
  'uk-UA',
  'ar',
  'he-IL',
  'hi-IN',
  'ja-JP',
  'ko-KR',
  'zh-CN',
  'zh-TW',
];

/** "français (France)" for fr-FR, in its own language. */
function localeName(tag: string): string {
  try {
    return new Intl.DisplayNames([tag], { type: 'language' }).of(tag) ?? tag;
  } catch {
    return tag;
  }
}
const sampleDate = new Date(Date.UTC(2025, 2, 14, 18, 30));
const localeExample = (tag: string | null) => sampleDate.toLocaleString(tag ?? undefined, { dateStyle: 'full', timeStyle: 'short' });

/** The message of a refused save: the field's own (under it) and the form's (above the button). */
function issueAt(error: unknown, path: string[]): string | undefined {
  return error instanceof ApiError ? error.messageAt(path) : undefined;
}

/** Thrown when the save was refused as stale: the page reloaded the settings meanwhile. */
class StaleSettings extends Error {}

/** Settings: every section of GET /api/v1/settings, each saved on its own with If-Match. */
export function SettingsPage() {
  useTitle('Settings');
  const settings = useLoad(() => api.get<SettingsDoc>('settings'));
  const caps = useLoad(() => api.get<{ maxUploadBytesHardCap: number }>('media/capabilities'));
  // Sections keep what the user typed across other sections' saves; they start over only
  // when the settings are read again from the server (first load, or after a stale save).
  const [generation, setGeneration] = useState(0);
  const [stale, setStale] = useState<string | null>(null);

  const save = async (section: string, patch: Patch) => {
    setStale(null);
    const current = settings.data!;
    try {
      const next = await api.patch<SettingsDoc>('settings', patch, { headers: { 'if-match': `"${current.revision}"` } });
      settings.setData(next);
      if ('locale' in patch) setServerLocale(next.locale);
    } catch (err) {
      if (err instanceof ApiError && err.status === 412) {
        await settings.reload();
        setGeneration((g) => g + 1);
        setStale(section);
        throw new StaleSettings(
          'Someone else changed the settings while you were editing. The page now shows the current settings: check them and make your change again.',
        );
      }
      throw err;
    }
  };

  const s = settings.data;
  const common = (key: string) => ({ doc: s!, save, stale: stale === key });
  return (
    <>
      <hgroup>
        <h1>Settings</h1>
        <p>How this server behaves for everyone. Each part is saved on its own and applies at once.</p>
      </hgroup>
      <ErrorNote error={settings.error} />
      {!s && !settings.error && <p aria-busy="true">Loading…</p>}
      {s && (
        <>
          <div class="settings-grid">
            <GeneralSection key={`general-${generation}`} {...common('general')} />
            <TimeSection key={`time-${generation}`} {...common('time')} />
            <UploadsSection key={`uploads-${generation}`} {...common('uploads')} hardCap={caps.data?.maxUploadBytesHardCap ?? null} />
            <BackupsSection key={`backups-${generation}`} {...common('backups')} />
            <RetentionSection key={`retention-${generation}`} {...common('retention')} />
            <NetworkSection key={`network-${generation}`} {...common('network')} />
            <ApprovalsSection key={`approvals-${generation}`} {...common('approvals')} />
            <MirroringSection doc={s} />
          </div>
          <p class="muted" data-testid="settings-updated">
            {s.updatedAt ? `Last changed ${formatTime(s.updatedAt)}.` : 'Never changed: these are the defaults.'}
          </p>
        </>
      )}
    </>
  );
}

interface SectionProps {
  doc: SettingsDoc;
  save: (section: string, patch: Patch) => Promise<void>;
  stale: boolean;
}

/** One settings section: a titled form with its Save button, its error and a note once saved. */
function SectionForm({
  id,
  title,
  intro,
  onSave,
  stale,
  children,
}: {
  id: string;
  title: string;
  intro?: ComponentChildren;
  onSave: () => Promise<void>;
  stale: boolean;
  children: ComponentChildren;
}) {
  const [saved, setSaved] = useState(false);
  const action = useAction(async () => {
    setSaved(false);
    await onSave();
    setSaved(true);
  });
  const error =
    action.error ??
    (stale
      ? new StaleSettings(
          'Someone else changed the settings while you were editing. The page now shows the current settings: check them and make your change again.',
        )
      : null);
  return (
    <article aria-labelledby={`${id}-h`} data-section={id}>
      <header>
        <h2 id={`${id}-h`}>{title}</h2>
      </header>
      {intro && <p class="section-intro">{intro}</p>}
      <form
        aria-label={title}
        noValidate={false}
        onSubmit={(e) => {
          e.preventDefault();
          void action.run();
        }}
        onInput={() => setSaved(false)}
      >
        {children}
        <ErrorNote error={error} />
        <div class="form-actions">
          <button type="submit" aria-busy={action.busy} disabled={action.busy}>
            Save {title.toLowerCase()}
          </button>
          {saved && <Notice>Saved.</Notice>}
        </div>
      </form>
    </article>
  );
}

/** The error of the last save of a section, for its fields. */
function useSectionError() {
  const [error, setError] = useState<unknown>(null);
  const wrap = (fn: () => Promise<void>) => async () => {
    setError(null);
    try {
      await fn();
    } catch (err) {
      setError(err);
      throw err;
    }
  };
  return { error, wrap };
}

const int = (v: string) => (v.trim() === '' ? Number.NaN : Number(v));

function GeneralSection({ doc, save, stale }: SectionProps) {
  const [serverName, setServerName] = useState(doc.serverName);
  const [publicUrl, setPublicUrl] = useState(doc.publicUrl ?? '');
  const { error, wrap } = useSectionError();
  return (
    <SectionForm
      id="general"
      title="This server"
      stale={stale}
      onSave={wrap(() => save('general', { serverName, publicUrl: publicUrl.trim() === '' ? null : publicUrl.trim() }))}
    >
      <Field
        label="Server name"
        error={issueAt(error, ['serverName'])}
        help="Shown in the console’s window title, on screens waiting to be paired and to installers."
      >
        {(p) => <input {...p} name="serverName" required maxLength={100} value={serverName} onInput={(e) => setServerName(e.currentTarget.value)} />}
      </Field>
      <Field
        label="Address screens use to reach this server"
        error={issueAt(error, ['publicUrl'])}
        help="For example http://192.168.1.20:8080. Leave it empty to use the address this console is open at. An address set in the server’s configuration file wins over this one."
      >
        {(p) => (
          <input
            {...p}
            name="publicUrl"
            type="url"
            inputMode="url"
            maxLength={2000}
            placeholder="http://192.168.1.20:8080"
            value={publicUrl}
            onInput={(e) => setPublicUrl(e.currentTarget.value)}
          />
        )}
      </Field>
    </SectionForm>
  );
}

function TimeSection({ doc, save, stale }: SectionProps) {
  const [timeZone, setTimeZone] = useState(doc.timeZone);
  const [locale, setLocale] = useState(doc.locale ?? '');
  const { error, wrap } = useSectionError();
  const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const zones = TIME_ZONES.includes(timeZone) ? TIME_ZONES : [timeZone, ...TIME_ZONES];
  const locales = locale && !LOCALES.includes(locale) ? [locale, ...LOCALES] : LOCALES;
  return (
    <SectionForm id="time" title="Time and language" stale={stale} onSave={wrap(() => save('time', { timeZone, locale: locale === '' ? null : locale }))}>
      <Field
        label="Time zone"
        error={issueAt(error, ['timeZone'])}
        help={
          <>
            The clock schedules follow on screens that have no location; a location’s own time zone wins.
            {browserZone && browserZone !== timeZone && <> This browser is in {browserZone}.</>}
          </>
        }
      >
        {(p) => (
          <select {...p} name="timeZone" value={timeZone} onChange={(e) => setTimeZone(e.currentTarget.value)}>
            {zones.map((z) => (
              <option key={z} value={z}>
                {z.replace(/_/g, ' ')}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field
        label="Language for dates and times"
        error={issueAt(error, ['locale'])}
        help={<>How dates and times are written in this console for people who have not chosen their own. Example: {localeExample(locale || null)}.</>}
      >
        {(p) => (
          <select {...p} name="locale" value={locale} onChange={(e) => setLocale(e.currentTarget.value)}>
            <option value="">Each person’s browser decides</option>
            {locales.map((tag) => (
              <option key={tag} value={tag}>
                {localeName(tag)} ({tag})
              </option>
            ))}
          </select>
        )}
      </Field>
    </SectionForm>
  );
}

function UploadsSection({ doc, save, stale, hardCap }: SectionProps & { hardCap: number | null }) {
  const [maxGb, setMaxGb] = useState(String(Math.round((doc.uploads.maxSizeBytes / GiB) * 100) / 100));
  const [hours, setHours] = useState(String(doc.uploads.abandonAfterHours));
  const { error, wrap } = useSectionError();
  return (
    <SectionForm
      id="uploads"
      title="Uploads"
      stale={stale}
      onSave={wrap(() => save('uploads', { uploads: { maxSizeBytes: Math.round(Number(maxGb) * GiB), abandonAfterHours: int(hours) } }))}
    >
      <Field
        label="Largest file people can upload (GB)"
        error={issueAt(error, ['uploads', 'maxSizeBytes'])}
        help={hardCap ? `This server never accepts more than ${formatBytes(hardCap)}, whatever you set here (its installer decided).` : undefined}
      >
        {(p) => <input {...p} name="maxSizeGb" type="number" min={0.001} step="any" required value={maxGb} onInput={(e) => setMaxGb(e.currentTarget.value)} />}
      </Field>
      <Field
        label="Throw away unfinished uploads after (hours)"
        error={issueAt(error, ['uploads', 'abandonAfterHours'])}
        help="An upload nobody continues for this long is deleted, to free the disk."
      >
        {(p) => (
          <input
            {...p}
            name="abandonAfterHours"
            type="number"
            min={1}
            max={720}
            step={1}
            required
            value={hours}
            onInput={(e) => setHours(e.currentTarget.value)}
          />
        )}
      </Field>
    </SectionForm>
  );
}

const BACKUP_INTERVALS: [number, string][] = [
  [0, 'Never (off)'],
  [6, 'Every 6 hours'],
  [12, 'Every 12 hours'],
  [24, 'Every day'],
  [48, 'Every 2 days'],
  [168, 'Every week'],
];

function BackupsSection({ doc, save, stale }: SectionProps) {
  const [interval, setIntervalHours] = useState(doc.backups.intervalHours);
  const [keep, setKeep] = useState(String(doc.backups.keep));
  const [includeMedia, setIncludeMedia] = useState(doc.backups.includeMedia);
  const { error, wrap } = useSectionError();
  const intervals = BACKUP_INTERVALS.some(([h]) => h === interval)
    ? BACKUP_INTERVALS
    : [...BACKUP_INTERVALS, [interval, `Every ${interval} hours`] as [number, string]];
  return (
    <SectionForm
      id="backups"
      title="Automatic backups"
      stale={stale}
      intro={
        <>
          Backups are kept on this server’s disk. Make one now, download or restore one on the <a href="/backups">Backups</a> page.
        </>
      }
      onSave={wrap(() => save('backups', { backups: { intervalHours: interval, keep: int(keep), includeMedia } }))}
    >
      <Field label="Make a backup" error={issueAt(error, ['backups', 'intervalHours'])}>
        {(p) => (
          <select {...p} name="intervalHours" value={String(interval)} onChange={(e) => setIntervalHours(Number(e.currentTarget.value))}>
            {intervals.map(([h, label]) => (
              <option key={h} value={String(h)}>
                {label}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field
        label="How many to keep"
        error={issueAt(error, ['backups', 'keep'])}
        help="When a new backup is made, the oldest beyond this number are deleted. Uploaded backups are never deleted on their own."
      >
        {(p) => <input {...p} name="keep" type="number" min={1} max={365} step={1} required value={keep} onInput={(e) => setKeep(e.currentTarget.value)} />}
      </Field>
      <CheckField
        label="Include pictures, videos and other media"
        help="Without them a backup is small and quick, but cannot bring back your media files."
        error={issueAt(error, ['backups', 'includeMedia'])}
        checked={includeMedia}
        onChange={setIncludeMedia}
      />
    </SectionForm>
  );
}

const RETENTION: [keyof SettingsDoc['retention'], string, string, number, number][] = [
  ['heartbeatDays', 'Screen check-ins', 'When each screen was online and what it reported.', 1, 3650],
  ['screenshotDays', 'Screenshots from screens', 'Pictures screens took when asked.', 1, 3650],
  ['noiseHistoryDays', 'Noise levels', 'Sound levels measured by screens with the noise meter on.', 1, 3650],
  ['jobHistoryDays', 'Finished background work', 'Records of media processing that ended.', 1, 365],
  ['auditDays', 'Audit log', 'This version keeps no audit log yet; the number is kept for when it does.', 7, 3650],
];

function RetentionSection({ doc, save, stale }: SectionProps) {
  const [values, setValues] = useState(
    () => Object.fromEntries(RETENTION.map(([k]) => [k, String(doc.retention[k])])) as Record<keyof SettingsDoc['retention'], string>,
  );
  const { error, wrap } = useSectionError();
  return (
    <SectionForm
      id="retention"
      title="History kept"
      stale={stale}
      intro="How many days of history the server keeps before deleting it. Shorter saves disk space."
      onSave={wrap(() => save('retention', { retention: Object.fromEntries(RETENTION.map(([k]) => [k, int(values[k])])) }))}
    >
      {RETENTION.map(([key, label, help, min, max]) => (
        <Field key={key} label={`${label} (days)`} help={help} error={issueAt(error, ['retention', key])}>
          {(p) => (
            <input
              {...p}
              name={key}
              type="number"
              min={min}
              max={max}
              step={1}
              required
              value={values[key]}
              onInput={(e) => setValues({ ...values, [key]: e.currentTarget.value })}
            />
          )}
        </Field>
      ))}
    </SectionForm>
  );
}

function NetworkSection({ doc, save, stale }: SectionProps) {
  const [allow, setAllow] = useState(doc.network.allowPrivateFetchTargets);
  const { error, wrap } = useSectionError();
  return (
    <SectionForm id="network" title="Local network" stale={stale} onSave={wrap(() => save('network', { network: { allowPrivateFetchTargets: allow } }))}>
      <CheckField
        label="Let the server open web pages on this local network"
        help="Needed to check websites on your own network, such as a dashboard at 192.168.1.50. The server never opens pages on its own machine or cloud-provider addresses. The server’s configuration file can forbid this whatever you choose."
        error={issueAt(error, ['network', 'allowPrivateFetchTargets'])}
        checked={allow}
        onChange={setAllow}
      />
    </SectionForm>
  );
}

function ApprovalsSection({ doc, save, stale }: SectionProps) {
  const [required, setRequired] = useState(doc.approvals.required);
  const [allowSelfApproval, setAllowSelfApproval] = useState(doc.approvals.allowSelfApproval);
  const { error, wrap } = useSectionError();
  return (
    <SectionForm id="approvals" title="Approvals" stale={stale} onSave={wrap(() => save('approvals', { approvals: { required, allowSelfApproval } }))}>
      <CheckField
        label="Editors need a publisher’s approval before their changes reach screens"
        help="Changes wait as drafts until a publisher approves and publishes a submission."
        error={issueAt(error, ['approvals', 'required'])}
        checked={required}
        onChange={setRequired}
      />
      <CheckField
        label="Publishers may approve their own submissions"
        help="Off: every submission needs a second person to approve it."
        error={issueAt(error, ['approvals', 'allowSelfApproval'])}
        checked={allowSelfApproval}
        onChange={setAllowSelfApproval}
      />
    </SectionForm>
  );
}

function MirroringSection({ doc }: { doc: SettingsDoc }) {
  const r = doc.provisioning.mirroringReceiver;
  return (
    <article aria-labelledby="mirroring-h" data-section="mirroring">
      <header>
        <h2 id="mirroring-h">Screen mirroring receiver</h2>
      </header>
      {r ? (
        <p>
          Uploaded {formatTime(r.uploadedAt)}, {formatBytes(r.sizeBytes)}. Players that install screen mirroring download it from this server.
        </p>
      ) : (
        <p>None uploaded. Screen mirroring cannot be installed on players until an administrator uploads the receiver program.</p>
      )}
      <p class="muted">
        This is changed by uploading the program through the API (<code>PUT /api/v1/install/mirroring/receiver</code>), not here.
      </p>
    </article>
  );
}

import { z } from 'zod';
import type { Db } from '../../platform/db/database.js';
import { ApiError } from '../../platform/http/errors.js';
import { boxTimeZone, isIanaZone } from './time-zone.js';
import type { AppDeps } from '../../platform/app-deps.js';
import { storableJson } from '../../platform/db/json.js';
import { ScopeKey } from '../../platform/app-scope.js';
import { countAllUsers, settingsRow, storeSettings, storeSettingsByServer } from './settings.repo.js';

/** IANA time zone names this runtime knows (validated with Intl, like the schedule engine). */
export const TimeZoneName = z
  .string()
  .min(1)
  .max(64)
  .refine((tz) => {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: tz });
      return true;
    } catch {
      return false;
    }
  }, 'not an IANA time zone name (e.g. Europe/Paris)');

/**
 * A BCP 47 language tag (`fr-FR`, `en-GB`, `de`), stored in its canonical form; null means
 * "each browser's own". Validated with Intl like the user preference of the same name.
 */
export const LocaleTag = z
  .string()
  .trim()
  .refine((tag) => {
    if (tag.length < 2 || tag.length > 35) return false;
    try {
      return Intl.getCanonicalLocales(tag).length === 1;
    } catch {
      return false;
    }
  }, 'not a language tag (e.g. fr-FR or en-GB)')
  .transform((tag) => Intl.getCanonicalLocales(tag)[0]!);

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

/**
 * The server's settings, section by section. Every field has a default (DEFAULT_SETTINGS),
 * so a fresh install and an older stored document both read as a whole object.
 */
const sections = {
  retention: z.object({
    /** Heartbeat status documents and liveness history. */
    heartbeatDays: z.int().min(1).max(3650),
    /** Noise meter buckets. */
    noiseHistoryDays: z.int().min(1).max(3650),
    /** Screenshots players sent. */
    screenshotDays: z.int().min(1).max(3650),
    /** Audit log entries. */
    auditDays: z.int().min(7).max(3650),
    /** Finished, failed and cancelled jobs. */
    jobHistoryDays: z.int().min(1).max(365),
  }),
  uploads: z.object({
    /**
     * Largest single upload (tus Upload-Length), in bytes. PLACARD_UPLOAD_MAX_BYTES caps it;
     * the upper bound here only keeps the number sane (16 TiB, ext4's largest file).
     */
    maxSizeBytes: z
      .int()
      .min(MiB)
      .max(16 * 1024 * GiB),
    /** Uploads not finished after this many hours are discarded. */
    abandonAfterHours: z
      .int()
      .min(1)
      .max(24 * 30),
  }),
  network: z.object({
    /**
     * Server-side fetches of user URLs (website diagnostics, data sources, feeds) may reach
     * private LAN addresses (10/8, 172.16/12, 192.168/16, fc00::/7). Loopback, link-local
     * and metadata addresses stay refused whatever this says (DESIGN.md section 9).
     */
    allowPrivateFetchTargets: z.boolean(),
  }),
  approvals: z.object({
    /** Editors submit content for approval; publishers approve and publish. */
    required: z.boolean(),
    /**
     * A publisher may approve their own submission (docs/publishing.md); off by default so
     * that every change reaching screens was seen by two people.
     */
    allowSelfApproval: z.boolean(),
  }),
  provisioning: z.object({
    /**
     * The mirroring receiver binary an administrator uploaded (PUT
     * /api/v1/install/mirroring/receiver), kept as `<data>/releases/mirroring/<fileName>`;
     * null until one is. Set by that route only (PATCH refuses it), local to this server
     * (an export leaves it out, an import keeps this server's).
     */
    mirroringReceiver: z
      .object({
        fileName: z.string().regex(/^receiver-[0-9a-f]{64}$/),
        sha256: z.string().regex(/^[0-9a-f]{64}$/),
        sizeBytes: z.int().min(1),
        uploadedAt: z.string().max(40),
      })
      .nullable(),
  }),
  backups: z.object({
    /** Hours between automatic backups; 0 turns them off. */
    intervalHours: z
      .int()
      .min(0)
      .max(24 * 31),
    /** How many backups to keep (older ones are deleted after a new one succeeds). */
    keep: z.int().min(1).max(365),
    /** Include the media store (true) or the database only (false). */
    includeMedia: z.boolean(),
  }),
};

const base = {
  /** Shown in the console, in the player's pairing screen and in /system/identity. */
  serverName: z.string().trim().min(1).max(100),
  /**
   * The URL players and installers use to reach this server. PLACARD_PUBLIC_URL, when set,
   * wins over this; when neither is set the request's own origin is used.
   */
  publicUrl: z
    .url({ protocol: /^https?$/, error: 'an http:// or https:// URL' })
    .max(2000)
    .transform((u) => u.replace(/\/+$/, ''))
    .nullable(),
  /**
   * The server's default time zone: screens without a location run in it (their schedules,
   * day-parts and idle clock), and forms that need a zone start from it. Defaults to the
   * box's own zone (TZ, /etc/localtime), stored on first start (settleDefaultTimeZone).
   */
  timeZone: TimeZoneName,
  ...sections,
  /**
   * The venue's language and formats for dates, times and numbers (BCP 47), for people
   * whose own preference does not name one; null: each browser's own.
   */
  locale: LocaleTag.nullable(),
};

export const Settings = z.object(base);
export type Settings = z.output<typeof Settings>;

export const DEFAULT_SETTINGS: Settings = Object.freeze({
  serverName: 'Placard',
  publicUrl: null,
  timeZone: boxTimeZone(),
  retention: { heartbeatDays: 30, noiseHistoryDays: 90, screenshotDays: 14, auditDays: 365, jobHistoryDays: 30 },
  uploads: { maxSizeBytes: 4 * GiB, abandonAfterHours: 24 },
  network: { allowPrivateFetchTargets: true },
  approvals: { required: false, allowSelfApproval: false },
  provisioning: { mirroringReceiver: null },
  backups: { intervalHours: 24, keep: 7, includeMedia: true },
  locale: null,
});

/** Settings that describe files of this server: read-only through PATCH, never exported or imported. */
export const LOCAL_SETTINGS = ['provisioning'] as const;
export type MirroringReceiver = NonNullable<Settings['provisioning']['mirroringReceiver']>;

/** A PATCH body: any subset of fields, sections merged key by key, unknown keys refused. */
export const SettingsPatch = z
  .object({
    serverName: base.serverName.optional(),
    publicUrl: base.publicUrl.optional(),
    timeZone: base.timeZone.optional(),
    retention: sections.retention.partial().strict().optional(),
    uploads: sections.uploads.partial().strict().optional(),
    network: sections.network.partial().strict().optional(),
    approvals: sections.approvals.partial().strict().optional(),
    backups: sections.backups.partial().strict().optional(),
    locale: base.locale.optional(),
  })
  .strict();
export type SettingsPatch = z.output<typeof SettingsPatch>;

export const SettingsDocument = Settings.extend({
  publicUrl: z.string().nullable(),
  locale: z.string().nullable(),
  revision: z.int(),
  updatedAt: z.string().nullable(),
});

type Plain = Record<string, unknown>;
const isPlain = (v: unknown): v is Plain => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Deep merge of plain objects (arrays and scalars replace). */
export function mergeSettings<T>(target: T, patch: unknown): T {
  if (!isPlain(target) || !isPlain(patch)) return (patch === undefined ? target : patch) as T;
  const out: Plain = { ...target };
  for (const [k, v] of Object.entries(patch)) {
    if (v === undefined) continue;
    out[k] = isPlain(out[k]) && isPlain(v) ? mergeSettings(out[k], v) : v;
  }
  return out as T;
}

/** Stored JSON over the defaults; fields a newer build removed are dropped, bad ones reset. */
function fromStored(json: string | undefined): Settings {
  let stored: unknown = {};
  try {
    stored = json ? JSON.parse(json) : {};
  } catch {
    stored = {};
  }
  const merged = mergeSettings(DEFAULT_SETTINGS as Settings, stored);
  const parsed = Settings.safeParse(merged);
  if (parsed.success) return parsed.data;
  // One bad field must not lose the rest: reset only the failing top-level keys.
  const repaired: Plain = { ...(merged as Plain) };
  for (const issue of parsed.error.issues) {
    const key = issue.path[0];
    if (typeof key === 'string') repaired[key] = (DEFAULT_SETTINGS as Plain)[key];
  }
  return Settings.parse(repaired);
}

export interface StoredSettings {
  settings: Settings;
  revision: number;
  updatedAt: string | null;
}

/** The whole settings object with its revision. */
export async function readSettings(db: Db): Promise<StoredSettings> {
  const row = await settingsRow(db);
  return { settings: fromStored(row?.data), revision: row?.revision ?? 0, updatedAt: row?.updated_at ?? null };
}

/** The settings other modules read (upload limit, private fetches, retention...): one call, always whole. */
export async function getSettings(db: Db): Promise<Settings> {
  return (await readSettings(db)).settings;
}

/**
 * How long `cachedSettings` trusts what it read. `updateSettings` drops the cache at once;
 * the bound only matters for writes that bypass it (an import, a restore swapping the
 * database file, a test writing the row directly).
 */
export const SETTINGS_CACHE_MS = 5_000;
const cache = new WeakMap<object, { at: number; generation: number; value: Promise<Settings> }>();
let generation = 0;

/**
 * `getSettings` for hot paths (every tus PATCH, every upload creation): answers a copy read
 * at most SETTINGS_CACHE_MS ago, and never one older than the last `updateSettings`.
 */
export function cachedSettings(db: Db): Promise<Settings> {
  const hit = cache.get(db);
  if (hit && hit.generation === generation && Date.now() - hit.at < SETTINGS_CACHE_MS) return hit.value;
  const value = getSettings(db);
  cache.set(db, { at: Date.now(), generation, value });
  // A failed read is not remembered.
  value.catch(() => {
    if (cache.get(db)?.value === value) cache.delete(db);
  });
  return value;
}

/** Forgets the cached settings of `db` (after a write); without `db`, of every database (a write through a transaction). */
export function invalidateSettings(db?: Db): void {
  if (db) cache.delete(db);
  else generation++;
}

/**
 * Applies a patch. `expectedRevision` (from If-Match) must be the current revision, else
 * 412 `version_conflict`. Runs in one transaction so two racing PATCHes cannot both win.
 */
export async function updateSettings(
  db: Db,
  patch: SettingsPatch,
  options: { expectedRevision?: number; userId?: string | null } = {},
): Promise<StoredSettings> {
  try {
    return await writeSettings(db, patch, options);
  } finally {
    // After the commit (or the failure): the next cachedSettings reads the row again.
    invalidateSettings(db);
  }
}

async function writeSettings(db: Db, patch: SettingsPatch, options: { expectedRevision?: number; userId?: string | null }): Promise<StoredSettings> {
  return db.transaction().execute(async (trx) => {
    const current = await readSettings(trx);
    if (options.expectedRevision !== undefined && options.expectedRevision !== current.revision) {
      throw new ApiError(
        'version_conflict',
        `The settings changed since revision ${options.expectedRevision}; they are at revision ${current.revision}. Reload and try again.`,
        {
          details: { currentRevision: current.revision },
        },
      );
    }
    const next = Settings.parse(mergeSettings(current.settings, patch));
    const data = storableJson(next, 'The settings');
    const now = new Date().toISOString();
    const revision = current.revision + 1;
    await storeSettings(trx, { data, revision, updated_at: now, updated_by: options.userId ?? null });
    return { settings: next, revision, updatedAt: now };
  });
}

/** Records (or with null, forgets) the uploaded mirroring receiver: a settings write with its own revision. */
export async function setMirroringReceiver(db: Db, receiver: MirroringReceiver | null, userId: string | null): Promise<StoredSettings> {
  try {
    return await db.transaction().execute(async (trx) => {
      const current = await readSettings(trx);
      const next = Settings.parse({ ...current.settings, provisioning: { ...current.settings.provisioning, mirroringReceiver: receiver } });
      const data = storableJson(next, 'The settings');
      const now = new Date().toISOString();
      const revision = current.revision + 1;
      await storeSettings(trx, { data, revision, updated_at: now, updated_by: userId });
      return { settings: next, revision, updatedAt: now };
    });
  } finally {
    invalidateSettings(db);
  }
}

/** The URL players and installers should use: PLACARD_PUBLIC_URL, else the setting, else the request's origin. */
export function effectivePublicUrl(configUrl: string | null, settings: Settings, requestOrigin: string): string {
  return configUrl ?? settings.publicUrl ?? requestOrigin.replace(/\/+$/, '');
}

/**
 * First start: writes the server's default time zone into the stored settings when they do
 * not hold one yet. A fresh install gets the box's zone; an install that already has users
 * (made before the setting followed the box) keeps `UTC`, the zone it ran in until now, so
 * an upgrade never moves its screens' schedules. A stored value is never touched.
 * Answers what is stored and why.
 */
export async function settleDefaultTimeZone(db: Db, zone: string = boxTimeZone()): Promise<{ zone: string; stored: 'kept' | 'detected' | 'legacy' }> {
  const result = await db.transaction().execute(async (trx) => {
    const row = await settingsRow(trx);
    let data: Record<string, unknown> = {};
    try {
      data = row ? (JSON.parse(row.data) as Record<string, unknown>) : {};
    } catch {
      data = {};
    }
    if (typeof data.timeZone === 'string' && isIanaZone(data.timeZone)) return { zone: data.timeZone, stored: 'kept' as const };
    const legacy = (await countAllUsers(trx)) > 0;
    const next = { ...data, timeZone: legacy ? 'UTC' : zone };
    const now = new Date().toISOString();
    const revision = (row?.revision ?? 0) + 1;
    await storeSettingsByServer(trx, JSON.stringify(next), revision, now);
    return { zone: next.timeZone, stored: legacy ? ('legacy' as const) : ('detected' as const) };
  });
  invalidateSettings(db);
  return result;
}

/**
 * Told after settings changed (a PATCH, an import): e.g. content bumps the manifests of
 * screens without a location when the default time zone moves. Errors are logged.
 */
export type SettingsListener = (deps: AppDeps, before: Settings, after: Settings) => Promise<void> | void;
const LISTENERS = new ScopeKey('system.settings-listeners', () => new Set<SettingsListener>());
/** Another instance changed the settings (or messages were missed): the cached copy goes. */
export function relaySettingsChanges(deps: AppDeps): void {
  deps.cluster.on('settings.changed', () => invalidateSettings(deps.db));
  deps.cluster.on('cluster.resync', () => invalidateSettings(deps.db));
}

/** Adds a listener for this app; answers the function that removes it. */
export function onSettingsChanged(deps: AppDeps, listener: SettingsListener): () => void {
  const listeners = deps.scope.get(LISTENERS);
  listeners.add(listener);
  return () => listeners.delete(listener);
}
export async function notifySettingsChanged(deps: AppDeps, before: Settings, after: Settings): Promise<void> {
  // The other instances' cached copies (their listeners' work, in the database, is done here).
  deps.cluster.publish('settings.changed', null);
  for (const l of deps.scope.get(LISTENERS)) {
    try {
      await l(deps, before, after);
    } catch (err) {
      deps.logger.error({ err }, 'a settings listener failed');
    }
  }
}

/** Whether approvals are required (issue 20): writes of content change drafts, submissions reach screens. */
export async function approvalsRequired(db: Db): Promise<boolean> {
  return (await getSettings(db)).approvals.required;
}

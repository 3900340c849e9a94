import path from 'node:path';
import { z } from 'zod';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

const boolFromEnv = z.enum(['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off']).transform((v) => ['1', 'true', 'yes', 'on'].includes(v));

/** Every PLACARD_* variable the server reads, with its default. Parsed once at boot. */
const EnvSchema = z.object({
  PLACARD_PORT: z.coerce.number().int().min(0).max(65535).default(8080),
  PLACARD_HOST: z.string().min(1).default('0.0.0.0'),
  /** HTTPS with the server's own certificate (docs/trust.md); 0 turns it off. */
  PLACARD_HTTPS_PORT: z.coerce.number().int().min(0).max(65535).default(8443),
  /** The admin's certificate (PEM, chain after the leaf allowed) and key; both or neither. Neither: a generated one in <data>/tls/. */
  PLACARD_TLS_CERT: z.string().min(1).optional(),
  PLACARD_TLS_KEY: z.string().min(1).optional(),
  /** Console pages asked for over plain HTTP are redirected to HTTPS (players, installers and the API are not). */
  PLACARD_HTTPS_REDIRECT: boolFromEnv.default(false),
  PLACARD_DATA_DIR: z.string().min(1).default('./data'),
  PLACARD_PUBLIC_URL: z
    .url({ protocol: /^https?$/ })
    .transform((u) => u.replace(/\/+$/, ''))
    .optional(),
  PLACARD_LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
  PLACARD_FFMPEG: z.string().min(1).optional(),
  PLACARD_FFPROBE: z.string().min(1).optional(),
  /** poppler's pdftoppm (pdfinfo is taken from the same directory); default: PATH. */
  PLACARD_PDFTOPPM: z.string().min(1).optional(),
  /** Headless Chromium for widget preview images; default: chromium or chromium-browser on PATH. */
  PLACARD_CHROMIUM: z.string().min(1).optional(),
  /** Largest JSON request body accepted, in bytes. */
  PLACARD_JSON_LIMIT_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .max(64 * 1024 * 1024)
    .default(1024 * 1024),
  /** How long a stopping server waits for in-flight requests before closing them. */
  PLACARD_SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().min(0).max(600_000).default(10_000),
  /** Trust X-Forwarded-* from a reverse proxy in front of the server. */
  PLACARD_TRUST_PROXY: boolFromEnv.default(false),
  /** A console session ends after this long without a request... */
  PLACARD_SESSION_IDLE_MINUTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(60 * 24 * 30)
    .default(12 * 60),
  /** ...and in any case this long after sign-in. */
  PLACARD_SESSION_MAX_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * 365)
    .default(7 * 24),
  /** Check every JSON response against its declared schema (on in tests). */
  PLACARD_VALIDATE_RESPONSES: boolFromEnv.default(false),
  /** The built console and player (Vite output); default: console/dist of this installation. */
  PLACARD_CONSOLE_DIR: z.string().min(1).optional(),
  /** Hard cap of the process on a tus upload, in bytes (default 8 GiB); settings uploads.maxSizeBytes decides below it. */
  PLACARD_UPLOAD_MAX_BYTES: z.coerce
    .number()
    .int()
    .min(1024)
    .default(8 * 1024 ** 3),
  /** Cap on how long an untouched partial upload is kept; settings uploads.abandonAfterHours (24) decides below it. */
  PLACARD_UPLOAD_EXPIRY_HOURS: z.coerce
    .number()
    .min(0.01)
    .max(24 * 30)
    .default(24 * 30),
  /** Images with more pixels than this are refused (pixel-flood guard). */
  PLACARD_IMAGE_MAX_PIXELS: z.coerce.number().int().min(1).default(268_402_689),
  /** Media jobs (probes, thumbnails, transcodes) running at once. */
  PLACARD_JOB_CONCURRENCY: z.coerce.number().int().min(1).max(16).default(2),
  /** Server-side fetches of user URLs may reach private LAN addresses (10/8, 192.168/16, ...), if settings network.allowPrivateFetchTargets also allows. */
  PLACARD_FETCH_ALLOW_PRIVATE: boolFromEnv.default(true),
  /** ...and loopback/link-local ones (development and tests only). */
  PLACARD_FETCH_ALLOW_LOOPBACK: boolFromEnv.default(false),
  /** Time limit of one data-source fetch (ms); the outbound cap of 15 s is the most it can be. */
  PLACARD_DATA_SOURCE_TIMEOUT_MS: z.coerce.number().int().min(100).max(15_000).default(15_000),
  /** Demo mode: seed a sample venue once, let owners/admins reset it (docs/demo.md). */
  PLACARD_DEMO: boolFromEnv.default(false),
  /** PostgreSQL instead of the SQLite file in the data directory (issue 25; docs/operations.md "Scaling out"). */
  PLACARD_DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//i, 'a postgres:// or postgresql:// URL')
    .optional(),
  /** Connections each instance keeps to PostgreSQL. */
  PLACARD_DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),
  /** Encrypt every backup with the passphrase in this file (its first line; keep it outside the data directory). */
  PLACARD_BACKUP_PASSPHRASE_FILE: z.string().min(1).optional(),
  /** Copy every backup to this directory: a NAS or USB drive mounted there (install.sh --backup-copy-dir). */
  PLACARD_BACKUP_COPY_DIR: z.string().min(1).optional(),
  /** The remote catalogue of player releases the console connects to (RFC 8628; docs/player-releases.md); optional. */
  PLACARD_RELEASE_SOURCE_URL: z
    .url({ protocol: /^https?$/ })
    .transform((u) => u.replace(/\/+$/, ''))
    .optional(),
  /** base64 of the raw 32-byte Ed25519 public key release artifacts must be signed with (docs/player-releases.md); optional. */
  PLACARD_RELEASE_SIGNING_KEY: z
    .string()
    .trim()
    .refine((v) => /^[A-Za-z0-9+/]+={0,2}$/.test(v) && Buffer.from(v, 'base64').length === 32, {
      message: 'must be the base64 of a raw 32-byte Ed25519 public key',
    })
    .optional(),
  /** /readyz answers 503 when the data directory's file system has less free space than this (bytes; 0 turns the check off). */
  PLACARD_MIN_FREE_BYTES: z.coerce
    .number()
    .int()
    .min(0)
    .default(256 * 1024 * 1024),
});

export interface Config {
  readonly port: number;
  readonly host: string;
  /** PLACARD_HTTPS_PORT: 0 = no HTTPS listener. */
  readonly httpsPort: number;
  readonly tlsCertFile: string | null;
  readonly tlsKeyFile: string | null;
  readonly httpsRedirect: boolean;
  readonly dataDir: string;
  readonly publicUrl: string | null;
  readonly logLevel: (typeof LOG_LEVELS)[number];
  readonly ffmpegPath: string | null;
  readonly ffprobePath: string | null;
  /** PLACARD_PDFTOPPM: poppler's pdftoppm, pdfinfo beside it; null: found on PATH. */
  readonly pdftoppmPath: string | null;
  /** PLACARD_CHROMIUM: headless Chromium drawing widget previews; null: chromium/chromium-browser on PATH. */
  readonly chromiumPath: string | null;
  readonly jsonLimitBytes: number;
  readonly shutdownTimeoutMs: number;
  readonly trustProxy: boolean;
  readonly validateResponses: boolean;
  readonly sessionIdleMs: number;
  readonly sessionMaxMs: number;
  /** Directory of the built console (index.html, play.html, assets/); null: console/dist beside package.json. */
  readonly consoleDir: string | null;
  readonly uploadMaxBytes: number;
  readonly uploadExpiryMs: number;
  readonly imageMaxPixels: number;
  readonly jobConcurrency: number;
  readonly fetchAllowPrivate: boolean;
  readonly fetchAllowLoopback: boolean;
  /** PLACARD_DATA_SOURCE_TIMEOUT_MS: how long one data-source fetch may take (default and cap 15 s). */
  readonly dataSourceTimeoutMs: number;
  /** Demo mode (PLACARD_DEMO): sample data seeded at start, resettable (docs/demo.md). */
  readonly demo: boolean;
  /** PLACARD_DATABASE_URL: PostgreSQL's URL, or null: the SQLite file `<dataDir>/placard.db`. */
  readonly databaseUrl: string | null;
  /** PLACARD_DATABASE_POOL_SIZE: PostgreSQL connections per instance. */
  readonly databasePoolSize: number;
  /** PLACARD_BACKUP_PASSPHRASE_FILE: backups are encrypted (age) with its passphrase; null: not encrypted. */
  readonly backupPassphraseFile: string | null;
  /** PLACARD_BACKUP_COPY_DIR: every backup is copied there too; null: none. */
  readonly backupCopyDir: string | null;
  /** PLACARD_MIN_FREE_BYTES: the free-space floor of readiness (default 256 MiB). */
  readonly minFreeBytes: number;
  /** PLACARD_RELEASE_SOURCE_URL (no trailing slash): the default release source; null: none. */
  readonly releaseSourceUrl: string | null;
  /** PLACARD_RELEASE_SIGNING_KEY: base64 raw Ed25519 public key release artifacts must be signed with; null: signatures are not required. */
  readonly releaseSigningKey: string | null;
}

export class ConfigError extends Error {}

/** Parses the environment once; throws ConfigError with one readable line on a bad value. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const picked: Record<string, string> = {};
  for (const key of Object.keys(EnvSchema.shape)) {
    const value = env[key];
    if (value !== undefined && value !== '') picked[key] = value;
  }
  const parsed = EnvSchema.safeParse(picked);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const key = String(issue.path[0] ?? '?');
      return `${key}=${JSON.stringify(picked[key] ?? '')}: ${issue.message}`;
    });
    throw new ConfigError(`invalid configuration: ${problems.join('; ')}`);
  }
  const e = parsed.data;
  if (!e.PLACARD_TLS_CERT !== !e.PLACARD_TLS_KEY) {
    throw new ConfigError('invalid configuration: PLACARD_TLS_CERT and PLACARD_TLS_KEY go together (give both, or neither for a generated certificate)');
  }
  if (e.PLACARD_HTTPS_PORT !== 0 && e.PLACARD_HTTPS_PORT === e.PLACARD_PORT) {
    throw new ConfigError(
      `invalid configuration: PLACARD_HTTPS_PORT=${e.PLACARD_HTTPS_PORT} is PLACARD_PORT too (HTTPS needs a port of its own; 0 turns it off)`,
    );
  }
  return Object.freeze({
    port: e.PLACARD_PORT,
    host: e.PLACARD_HOST,
    httpsPort: e.PLACARD_HTTPS_PORT,
    tlsCertFile: e.PLACARD_TLS_CERT ? path.resolve(e.PLACARD_TLS_CERT) : null,
    tlsKeyFile: e.PLACARD_TLS_KEY ? path.resolve(e.PLACARD_TLS_KEY) : null,
    httpsRedirect: e.PLACARD_HTTPS_REDIRECT,
    dataDir: path.resolve(e.PLACARD_DATA_DIR),
    publicUrl: e.PLACARD_PUBLIC_URL ?? null,
    logLevel: e.PLACARD_LOG_LEVEL,
    ffmpegPath: e.PLACARD_FFMPEG ?? null,
    ffprobePath: e.PLACARD_FFPROBE ?? null,
    pdftoppmPath: e.PLACARD_PDFTOPPM ?? null,
    chromiumPath: e.PLACARD_CHROMIUM ?? null,
    jsonLimitBytes: e.PLACARD_JSON_LIMIT_BYTES,
    shutdownTimeoutMs: e.PLACARD_SHUTDOWN_TIMEOUT_MS,
    trustProxy: e.PLACARD_TRUST_PROXY,
    validateResponses: e.PLACARD_VALIDATE_RESPONSES,
    sessionIdleMs: e.PLACARD_SESSION_IDLE_MINUTES * 60_000,
    sessionMaxMs: e.PLACARD_SESSION_MAX_HOURS * 3_600_000,
    consoleDir: e.PLACARD_CONSOLE_DIR ? path.resolve(e.PLACARD_CONSOLE_DIR) : null,
    uploadMaxBytes: e.PLACARD_UPLOAD_MAX_BYTES,
    uploadExpiryMs: Math.round(e.PLACARD_UPLOAD_EXPIRY_HOURS * 3_600_000),
    imageMaxPixels: e.PLACARD_IMAGE_MAX_PIXELS,
    jobConcurrency: e.PLACARD_JOB_CONCURRENCY,
    fetchAllowPrivate: e.PLACARD_FETCH_ALLOW_PRIVATE,
    fetchAllowLoopback: e.PLACARD_FETCH_ALLOW_LOOPBACK,
    dataSourceTimeoutMs: e.PLACARD_DATA_SOURCE_TIMEOUT_MS,
    demo: e.PLACARD_DEMO,
    databaseUrl: e.PLACARD_DATABASE_URL ?? null,
    databasePoolSize: e.PLACARD_DATABASE_POOL_SIZE,
    backupPassphraseFile: e.PLACARD_BACKUP_PASSPHRASE_FILE ? path.resolve(e.PLACARD_BACKUP_PASSPHRASE_FILE) : null,
    backupCopyDir: e.PLACARD_BACKUP_COPY_DIR ? path.resolve(e.PLACARD_BACKUP_COPY_DIR) : null,
    minFreeBytes: e.PLACARD_MIN_FREE_BYTES,
    releaseSourceUrl: e.PLACARD_RELEASE_SOURCE_URL ?? null,
    releaseSigningKey: e.PLACARD_RELEASE_SIGNING_KEY ?? null,
  });
}

/** A configuration for tests and tools: defaults, a given data directory, overrides. */
export function testConfig(dataDir: string, overrides: Partial<Config> = {}): Config {
  return Object.freeze({ ...loadConfig({}), dataDir, port: 0, host: '127.0.0.1', logLevel: 'silent', validateResponses: true, ...overrides });
}

/** What openDatabase opens for this configuration: PostgreSQL's URL, or the data directory's SQLite file. */
export function databaseTarget(config: Pick<Config, 'databaseUrl' | 'dataDir'>): string {
  return config.databaseUrl ?? path.join(config.dataDir, 'placard.db');
}

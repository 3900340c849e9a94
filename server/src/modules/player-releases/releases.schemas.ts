import { z } from 'zod';

/** The API shapes of player releases (docs/player-releases.md; the release contract of issue 23). */

export const TAGS = ['Player releases'];

export const FAMILIES = ['desktop-linux', 'android', 'web', 'edge'] as const;
export type Family = (typeof FAMILIES)[number];
export const CHANNELS = ['stable', 'beta'] as const;
/** As the heartbeat knows them (screens.player_architecture), and `any` (web; an APK without native code). */
export const ARCHITECTURES = ['any', 'x86_64', 'aarch64'] as const;
export const KINDS = ['apk', 'tarball', 'deb', 'web'] as const;
export type ArtifactKind = (typeof KINDS)[number];
export const CACHE_STATES = ['remote', 'downloading', 'cached', 'failed'] as const;
export const SOURCE_STATES = ['pending', 'connected', 'denied', 'expired', 'failed'] as const;

export const ArtifactDto = z.object({
  architecture: z.string(),
  kind: z.enum(KINDS),
  fileName: z.string(),
  sizeBytes: z.number().int(),
  sha256: z.string(),
  signed: z.boolean().describe('the artifact carries an Ed25519 signature'),
  cacheState: z.enum(CACHE_STATES),
  cachedBytes: z.number().int().describe('bytes downloaded so far (the size once cached)'),
  error: z.string().nullable().describe('why the last download failed'),
});

export const ReleaseDto = z
  .object({
    id: z.string(),
    family: z.enum(FAMILIES),
    version: z.string().describe('semver'),
    channel: z.enum(CHANNELS),
    notes: z.string(),
    source: z.enum(['upload', 'release-source']),
    sourceReleaseId: z.string().nullable(),
    cached: z.boolean().describe('every artifact is stored here, verified'),
    architectures: z.array(ArtifactDto),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'PlayerRelease' });
export type Release = z.infer<typeof ReleaseDto>;

export const ReleaseSourceDto = z
  .object({
    url: z.string(),
    state: z.enum(SOURCE_STATES),
    userCode: z.string().nullable().describe('while pending: the code to enter at verificationUri'),
    verificationUri: z.string().nullable(),
    verificationUriComplete: z.string().nullable(),
    expiresAt: z.string().nullable().describe('when the pending grant expires'),
    intervalSec: z.number().int().nullable().describe('the least time between two polls of the token endpoint'),
    connectedAt: z.string().nullable(),
    checkedAt: z.string().nullable(),
    error: z.string().nullable(),
  })
  .meta({ id: 'ReleaseSource' });
export type ReleaseSourceView = z.infer<typeof ReleaseSourceDto>;

export const ListQuery = z.object({
  family: z.enum(FAMILIES).optional(),
  channel: z.enum(CHANNELS).optional(),
});

export const DeviceBody = z
  .object({
    url: z
      .url({ protocol: /^https?$/ })
      .max(2000)
      .meta({ pattern: '^[Hh][Tt][Tt][Pp][Ss]?://' })
      .optional()
      .describe('the release source; default PLACARD_RELEASE_SOURCE_URL'),
  })
  .default({});

/** The multipart fields of an upload (strings, as forms send them). */
export const UploadFields = z.object({
  family: z.enum(FAMILIES),
  version: z.string().trim().min(1).max(100),
  channel: z.enum(CHANNELS).default('stable'),
  notes: z.string().max(10_000).default(''),
  architecture: z.enum(ARCHITECTURES).default('any'),
});

export const CheckDto = z.object({
  checkedAt: z.string(),
  releases: z.array(ReleaseDto).describe('the releases the source offers for what the screens run'),
  newer: z
    .array(z.object({ family: z.enum(FAMILIES), architecture: z.string(), currentVersion: z.string().nullable(), latestVersion: z.string() }))
    .describe('per family and architecture the screens run: the newest release when it is newer than the oldest version a screen runs'),
});

/** The update deployment bodies and answers (release contract of issue 23; docs/update-deployments.md). */
import { z } from 'zod';
import { uuidParam as Uuid } from '../../platform/http/route.js';
import { TargetsInput } from '../screens/index.js';

const HHMM = z.string().regex(/^([01]\d|2[0-3]):[0-5]\d$/, 'HH:MM, 00:00 to 23:59');

export const WaveInput = z.union([
  z.strictObject({ screens: z.number().int().min(1).max(100_000).describe('this many more screens') }),
  z.strictObject({ percent: z.number().min(0).max(100).describe('up to this share of the eligible screens (cumulative)') }),
]);

export const DeploymentBody = z.object({
  releaseId: Uuid,
  targets: TargetsInput,
  waves: z
    .array(WaveInput)
    .min(1)
    .max(20)
    .optional()
    .describe('default [{screens: 1}, {percent: 50}, {percent: 100}]; the last wave takes every eligible screen left'),
  failureThreshold: z.number().int().min(1).max(100_000).default(1).describe('failed screens that pause the rollout'),
  waveWaitSec: z
    .number()
    .int()
    .min(0)
    .max(30 * 86_400)
    .default(600)
    .describe('wait after a wave settles before the next one starts'),
  confirmTimeoutSec: z
    .number()
    .int()
    .min(1)
    .max(30 * 86_400)
    .default(1800)
    .describe('a screen offered the update must confirm it within this time'),
  maintenanceWindow: z
    .object({ start: HHMM, end: HHMM })
    .refine((w) => w.start !== w.end, { message: 'start and end must differ', path: ['end'] })
    .nullable()
    .default(null)
    .describe('offers only between start and end in each screen’s local time (may wrap midnight); null: any time'),
});
export type DeploymentInput = z.infer<typeof DeploymentBody>;

/** A wave as stored (`update_deployments.waves`): as sent, with its size and times. */
export interface StoredWave {
  screens?: number;
  percent?: number;
  size: number;
  startedAt: string | null;
  completedAt: string | null;
}

export const STATUS_STATES = ['downloading', 'downloaded', 'installing', 'installed', 'failed'] as const;

export const StatusBody = z
  .object({
    state: z.enum(STATUS_STATES),
    progress: z.number().min(0).max(1).optional().describe('0..1 while downloading'),
    version: z.string().trim().min(1).max(100).optional().describe('installed: the version now running (must be the release’s)'),
    error: z.string().trim().max(1000).optional().describe('failed: why'),
  })
  .refine((b) => b.state !== 'installed' || b.version !== undefined, { message: 'installed needs the version now running', path: ['version'] });

const SCREEN_STATES = ['skipped', 'pending', 'offered', 'downloading', 'downloaded', 'installing', 'installed', 'failed', 'cancelled'] as const;

const WaveDto = z.object({
  index: z.number().int(),
  screens: z.number().int().optional(),
  percent: z.number().optional(),
  size: z.number().int().describe('screens in this wave'),
  state: z.enum(['pending', 'active', 'done']),
  startedAt: z.string().nullable(),
  completedAt: z.string().nullable(),
});

export const DeploymentScreenDto = z.object({
  screenId: z.string(),
  name: z.string(),
  wave: z.number().int().nullable(),
  state: z.enum(SCREEN_STATES),
  progress: z.number().nullable(),
  error: z.string().nullable(),
  skipReason: z.string().nullable().describe('family_mismatch, architecture_mismatch, never_reported, already_current'),
  fromVersion: z.string().nullable(),
  installedVersion: z.string().nullable(),
  offeredAt: z.string().nullable(),
  confirmedAt: z.string().nullable(),
});

const Common = {
  id: z.string(),
  releaseId: z.string(),
  release: z.object({ family: z.string(), version: z.string(), channel: z.string() }),
  state: z.enum(['running', 'paused', 'cancelled', 'completed']),
  targets: z.object({
    all: z.boolean().optional(),
    screenIds: z.array(z.string()).optional(),
    groupIds: z.array(z.string()).optional(),
    locationIds: z.array(z.string()).optional(),
  }),
  waves: z.array(WaveDto),
  currentWave: z.number().int(),
  failureThreshold: z.number().int(),
  waveWaitSec: z.number().int(),
  confirmTimeoutSec: z.number().int(),
  maintenanceWindow: z.object({ start: z.string(), end: z.string() }).nullable(),
  pausedReason: z.string().nullable().describe('failure_threshold while paused by failures; manual when paused by hand (POST …/pause); null otherwise'),
  counts: z.object({
    total: z.number().int(),
    skipped: z.number().int(),
    pending: z.number().int(),
    offered: z.number().int(),
    inProgress: z.number().int().describe('downloading, downloaded or installing'),
    installed: z.number().int(),
    failed: z.number().int(),
    cancelled: z.number().int(),
  }),
  createdAt: z.string(),
  updatedAt: z.string(),
  revision: z.number().int(),
};

export const DeploymentSummaryDto = z.object(Common).meta({ id: 'UpdateDeploymentSummary' });
export const DeploymentDto = z.object({ ...Common, screens: z.array(DeploymentScreenDto) }).meta({ id: 'UpdateDeployment' });
export type DeploymentSummary = z.infer<typeof DeploymentSummaryDto>;
export type Deployment = z.infer<typeof DeploymentDto>;

export const UpdateMetadataDto = z.object({
  releaseId: z.string(),
  deploymentId: z.string(),
  family: z.string(),
  version: z.string(),
  channel: z.string(),
  notes: z.string(),
  artifact: z.object({
    architecture: z.string(),
    kind: z.enum(['apk', 'tarball', 'deb', 'web']),
    fileName: z.string(),
    sizeBytes: z.number().int(),
    sha256: z.string(),
    signature: z.string().nullable(),
    url: z
      .string()
      .describe(
        '/api/v1/player/updates/{releaseId}/apk for android, else …/artifact (device credential, Range); with ?architecture= when the artifact is one architecture’s and the screen reports none',
      ),
  }),
});

export { Uuid };

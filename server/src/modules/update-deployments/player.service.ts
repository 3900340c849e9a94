/**
 * The player side of a deployment (spec 4.9; docs/update-deployments.md): the offer in the
 * manifest and config, the release's metadata and bytes for a screen it is offered to, and
 * the screen's reports.
 */
import path from 'node:path';
import type { Context } from 'koa';
import semver from 'semver';
import type { AppDeps } from '../../platform/app-deps.js';
import type { Db } from '../../platform/db/database.js';
import type { DeploymentScreenState } from '../../platform/db/schema/releases.js';
import { ApiError, notFound } from '../../platform/http/errors.js';
import { sendFile } from '../../platform/http/send-file.js';
import { contentChanged } from '../content/index.js';
import type { UpdateInfoProvider } from '../screens/index.js';
import {
  deploymentRow,
  deploymentScreen,
  installedWebReleases,
  OFFERED_STATES,
  offerRow,
  screenFacts,
  updateDeployment,
  updateScreens,
} from './deployments.repo.js';
import type { STATUS_STATES } from './deployments.schemas.js';
import { advance, sameVersion } from './rollout.js';
import { type ArtifactRow, chooseArtifact, type PlayerArchitecture, releaseArtifacts, releaseRow } from './releases.repo.js';

/** What the screens module serves in the manifest and `GET /player/config`. */
export const updateInfo: UpdateInfoProvider = {
  async offer(db, screenId) {
    const o = await offerRow(db, screenId);
    return o ? { deploymentId: o.deploymentId, releaseId: o.releaseId, version: o.version, family: o.family } : null;
  },
  async webRelease(db, screenId) {
    const installed = await installedWebReleases(db, screenId);
    const newest = installed.filter((r) => semver.valid(r.version)).sort((a, b) => semver.rcompare(a.version, b.version))[0];
    return newest ? { releaseId: newest.id, version: newest.version, path: `/play/v/${newest.version}/` } : null;
  },
};

const notOffered = () => new ApiError('not_found', 'No update of this release is offered to this screen');

/**
 * The offer of `releaseId` to the screen and the stored artifact for it (`chooseArtifact`:
 * the architecture the player asks for, else the recorded one, `any`, the only one), else 404;
 * 400 when the release has several and the player did not say which.
 */
async function offered(db: Db, screenId: string, releaseId: string, requested: PlayerArchitecture | undefined, as?: 'artifact' | 'apk') {
  const offer = await offerRow(db, screenId, releaseId);
  if (!offer || (as === 'apk' && offer.family !== 'android')) throw notOffered();
  const [facts] = await screenFacts(db, [screenId]);
  const recorded = facts?.architecture ?? null;
  const choice = chooseArtifact(await releaseArtifacts(db, releaseId), recorded, requested);
  if ('ambiguous' in choice && choice.ambiguous.length > 1) {
    const message = `The release has an artifact for each of ${choice.ambiguous.join(', ')}: ask with ?architecture=`;
    throw new ApiError('validation_failed', message, {
      details: { issues: [{ location: 'query', path: ['architecture'], message, code: 'custom' }], architectures: choice.ambiguous },
    });
  }
  if ('missing' in choice)
    throw new ApiError(
      'not_found',
      recorded && requested && requested !== recorded
        ? `This screen reports architecture ${recorded}, not ${requested}`
        : `The release has no artifact for ${choice.missing}`,
    );
  if (!('artifact' in choice) || !choice.artifact.stored_path) throw notOffered();
  return { offer, artifact: choice.artifact, recorded };
}

/**
 * Where the bytes are: `/apk` for android, else `/artifact`; an architecture's own artifact
 * for a screen with none recorded carries `?architecture=` so the URL always names the same bytes.
 */
function artifactUrl(releaseId: string, family: string, artifact: ArtifactRow, recorded: string | null): string {
  const base = `/api/v1/player/updates/${releaseId}/${family === 'android' ? 'apk' : 'artifact'}`;
  return artifact.architecture !== 'any' && !recorded ? `${base}?architecture=${encodeURIComponent(artifact.architecture)}` : base;
}

export async function updateMetadata(db: Db, screenId: string, releaseId: string, architecture?: PlayerArchitecture) {
  const { offer, artifact, recorded } = await offered(db, screenId, releaseId, architecture);
  return {
    releaseId,
    deploymentId: offer.deploymentId,
    family: offer.family,
    version: offer.version,
    channel: offer.channel,
    notes: offer.notes,
    artifact: {
      architecture: artifact.architecture,
      kind: artifact.kind,
      fileName: artifact.file_name,
      sizeBytes: artifact.size_bytes,
      sha256: artifact.sha256,
      signature: artifact.signature,
      url: artifactUrl(releaseId, offer.family, artifact, recorded),
    },
  };
}

const CONTENT_TYPES: Record<ArtifactRow['kind'], string> = {
  apk: 'application/vnd.android.package-archive',
  tarball: 'application/gzip',
  web: 'application/gzip',
  deb: 'application/vnd.debian.binary-package',
};

/** Streams the artifact (Range, HEAD, ETag = sha256); `apk` only for an android release; `architecture` as for the metadata. */
export async function sendArtifact(
  ctx: Context,
  screenId: string,
  releaseId: string,
  as: 'artifact' | 'apk',
  architecture?: PlayerArchitecture,
): Promise<void> {
  const { artifact } = await offered(ctx.deps.db, screenId, releaseId, architecture, as);
  const root = path.resolve(ctx.deps.config.dataDir);
  const file = path.resolve(root, artifact.stored_path!);
  if (!file.startsWith(root + path.sep)) throw notOffered();
  await sendFile(ctx, {
    path: file,
    contentType: as === 'apk' ? CONTENT_TYPES.apk : CONTENT_TYPES[artifact.kind],
    etag: artifact.sha256,
    disposition: { type: 'attachment', filename: artifact.file_name },
    // The bytes of a release never change under its id.
    cacheControl: 'private, max-age=31536000, immutable',
  });
}

export interface StatusInput {
  state: (typeof STATUS_STATES)[number];
  progress?: number;
  version?: string;
  error?: string;
}

/** A screen's report on its update; answers its state after it. */
export async function reportStatus(deps: AppDeps, screenId: string, deploymentId: string, body: StatusInput): Promise<{ state: DeploymentScreenState }> {
  const db = deps.db;
  const d = await deploymentRow(db, deploymentId);
  const row = d ? await deploymentScreen(db, deploymentId, screenId) : null;
  if (!d || !row) throw notFound('Update deployment for this screen');
  if (d.state === 'cancelled' || d.state === 'completed' || row.state === 'cancelled')
    throw new ApiError('deployment_finished', 'The deployment is cancelled or completed for this screen');
  // Settled: a repeated report changes nothing.
  if (row.state === 'installed' || row.state === 'failed') return { state: row.state };
  if (!OFFERED_STATES.includes(row.state)) throw new ApiError('conflict', 'The update is not offered to this screen');
  const release = await releaseRow(db, d.release_id);
  const now = new Date().toISOString();
  let patch: Parameters<typeof updateScreens>[4];
  switch (body.state) {
    case 'downloading':
      patch = { state: 'downloading', progress: body.progress ?? row.progress ?? 0 };
      break;
    case 'downloaded':
      patch = { state: 'downloaded', progress: 1 };
      break;
    case 'installing':
      patch = { state: 'installing', progress: 1 };
      break;
    case 'installed':
      patch =
        release && sameVersion(body.version, release.version)
          ? { state: 'installed', installed_version: body.version, confirmed_at: now, progress: 1, error: null }
          : { state: 'failed', error: `version_mismatch: reported ${body.version}, the release is ${release?.version}` };
      break;
    case 'failed':
      patch = { state: 'failed', error: body.error || 'failed' };
      break;
  }
  const changed = await updateScreens(db, deploymentId, [screenId], OFFERED_STATES, { ...patch, updated_at: now });
  if (!changed.length) {
    const again = await deploymentScreen(db, deploymentId, screenId);
    return { state: again?.state ?? row.state };
  }
  await updateDeployment(db, deploymentId, {}, now);
  if (patch.state === 'installed' || patch.state === 'failed') {
    await contentChanged(deps, [], [screenId]); // the offer is gone
    await advance(deps, deploymentId);
  }
  return { state: patch.state as DeploymentScreenState };
}

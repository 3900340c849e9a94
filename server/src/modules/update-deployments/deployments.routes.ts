import { z } from 'zod';
import type { DevicePrincipal, SessionPrincipal } from '../../platform/http/auth.js';
import { created, defineRoute, ok } from '../../platform/http/route.js';
import { DeploymentBody, DeploymentDto, DeploymentSummaryDto, StatusBody, UpdateMetadataDto, Uuid } from './deployments.schemas.js';
import { cancelDeployment, createDeployment, deploymentDto, listDeployments, pauseDeployment, resumeDeployment, retryScreen } from './deployments.service.js';
import { reportStatus, sendArtifact, updateMetadata } from './player.service.js';
import { PLAYER_ARCHITECTURES } from './releases.repo.js';

const TAGS = ['Update deployments'];
const PLAYER = ['Player'];
const IdParams = z.object({ id: Uuid });
const finished = { description: 'deployment_finished: the deployment is cancelled or completed', codes: ['deployment_finished'] as const };
const ReleaseParams = z.object({ releaseId: Uuid });
const ArchitectureQuery = z.object({
  architecture: z
    .enum(PLAYER_ARCHITECTURES)
    .optional()
    .describe(
      'the architecture this player runs (x86_64, aarch64): its artifact, else `any`. Without it: the screen’s recorded architecture (edge), else `any`, else the only artifact',
    ),
});
const ARCH_DOC =
  '`?architecture=` picks the artifact (exact, then `any`); without it the screen’s recorded architecture (edge), else `any`, else the release’s only artifact. An edge screen asking for another architecture than the one it reports: 404.';
const ambiguous = {
  description: 'validation_failed: an unknown architecture, or the release has several artifacts and none was named (details.architectures lists them)',
  codes: ['validation_failed'] as const,
};
const unavailable = { description: 'not_found: the release is not offered to this screen, or it has no artifact for that architecture' };
const ARTIFACT_TYPES = { 'application/gzip': {}, 'application/vnd.debian.binary-package': {}, 'application/vnd.android.package-archive': {} };
const bytes = {
  400: ambiguous,
  404: unavailable,
  200: { description: 'The artifact’s bytes', content: ARTIFACT_TYPES, headers: { ETag: { description: 'The sha256, quoted' } } },
  206: { description: 'A range of the bytes (Content-Range)', content: ARTIFACT_TYPES },
  304: { description: 'Not modified' },
  416: { description: 'range_not_satisfiable: Content-Range gives the length' },
};
const screenOf = (auth: unknown) => (auth as DevicePrincipal).screenId;

export const deploymentRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/v1/update-deployments',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Update deployments, newest first (without their screens)',
    responses: { 200: { description: 'Deployments', data: z.array(DeploymentSummaryDto) } },
    handler: async (ctx) => ok(await listDeployments(ctx.deps.db)),
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/update-deployments',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Roll a player release out to target screens in waves (a canary, then shares)',
    description:
      'Screens of another family or architecture, that never reported, or that already run this version or newer are skipped with `skipReason`. A screen in another running deployment leaves it (`cancelled`, error `superseded`). The first wave is offered at once (inside the maintenance window).',
    body: DeploymentBody,
    responses: {
      201: { description: 'The deployment', data: DeploymentDto },
      400: { description: 'validation_failed: a field is wrong, no target, or the release or a target does not exist (invalid_reference)' },
      409: { description: 'release_not_cached: an artifact a target screen needs is not stored yet', codes: ['release_not_cached'] },
    },
    handler: async (ctx, { body, auth }) => created(await createDeployment(ctx.deps, body, (auth as SessionPrincipal).userId)),
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/update-deployments/{id}',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'A deployment with its waves and every target screen’s state',
    params: IdParams,
    responses: { 200: { description: 'The deployment', data: DeploymentDto } },
    handler: async (ctx, { params }) => ok(await deploymentDto(ctx.deps.db, params.id)),
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/update-deployments/{id}/cancel',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Stop a deployment: no further waves, the offer withdrawn from screens not yet installed (installed ones stay)',
    params: IdParams,
    responses: { 200: { description: 'The deployment', data: DeploymentDto }, 409: finished },
    handler: async (ctx, { params }) => ok(await cancelDeployment(ctx.deps, params.id)),
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/update-deployments/{id}/pause',
    auth: 'session',
    minRole: 'admin',
    extension: true,
    tags: TAGS,
    summary: 'Pause a deployment by hand: nobody new is offered the update and no next wave starts; screens holding the offer carry on',
    description:
      'The deployment becomes `paused` with `pausedReason: manual`. Screens already offered keep downloading, installing and reporting, and are confirmed or time out as usual. A paused deployment (by hand or by failures) is answered as it is.',
    params: IdParams,
    responses: { 200: { description: 'The deployment', data: DeploymentDto }, 409: finished },
    handler: async (ctx, { params }) => ok(await pauseDeployment(ctx.deps, params.id)),
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/update-deployments/{id}/resume',
    auth: 'session',
    minRole: 'admin',
    extension: true,
    tags: TAGS,
    summary: 'Resume a paused deployment: it runs again and offers its current wave (or starts the next one)',
    description:
      'Refused (409 `conflict`) while its failed screens are at or over the failure threshold: retry them first (a deployment paused by failures resumes by itself once under it), or cancel. A running deployment is answered as it is.',
    params: IdParams,
    responses: {
      200: { description: 'The deployment', data: DeploymentDto },
      409: {
        description: 'deployment_finished: cancelled or completed; conflict: its failed screens are still at or over the failure threshold',
        codes: ['deployment_finished', 'conflict'],
      },
    },
    handler: async (ctx, { params }) => ok(await resumeDeployment(ctx.deps, params.id)),
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/update-deployments/{id}/screens/{screenId}/retry',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Offer the update again to a screen whose update failed; a deployment paused by failures resumes under the threshold',
    params: z.object({ id: Uuid, screenId: Uuid }),
    responses: {
      200: { description: 'The deployment', data: DeploymentDto },
      409: { description: 'not_failed: the screen did not fail; deployment_finished: cancelled or completed', codes: ['not_failed', 'deployment_finished'] },
    },
    handler: async (ctx, { params }) => ok(await retryScreen(ctx.deps, params.id, params.screenId)),
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/player/updates/{releaseId}',
    auth: 'device',
    tags: PLAYER,
    summary: 'A release offered to this screen: its metadata and the artifact for its architecture',
    description: `404 unless a running or paused deployment offers this release to the screen (\`update\` in the manifest and config). ${ARCH_DOC}`,
    params: ReleaseParams,
    query: ArchitectureQuery,
    responses: { 200: { description: 'The update', data: UpdateMetadataDto }, 400: ambiguous, 404: unavailable },
    handler: async (ctx, { params, query, auth }) => ok(await updateMetadata(ctx.deps.db, screenOf(auth), params.releaseId, query.architecture)),
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/player/updates/{releaseId}/artifact',
    auth: 'device',
    tags: PLAYER,
    summary: 'Download the release’s artifact for this screen (Range, If-Range, ETag = sha256); HEAD for its size',
    description: `404 unless the release is offered to this screen. ${ARCH_DOC}`,
    params: ReleaseParams,
    query: ArchitectureQuery,
    responses: bytes,
    handler: async (ctx, { params, query, auth }) => sendArtifact(ctx, screenOf(auth), params.releaseId, 'artifact', query.architecture),
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/player/updates/{releaseId}/apk',
    auth: 'device',
    tags: PLAYER,
    summary: 'Download an android release’s APK (Range, If-Range, ETag = sha256)',
    description: '404 unless the android release is offered to this screen.',
    params: ReleaseParams,
    query: ArchitectureQuery,
    responses: bytes,
    handler: async (ctx, { params, query, auth }) => sendArtifact(ctx, screenOf(auth), params.releaseId, 'apk', query.architecture),
  }),
  defineRoute({
    method: 'HEAD',
    path: '/api/v1/player/updates/{releaseId}/apk',
    auth: 'device',
    tags: PLAYER,
    summary: 'The APK’s size and sha256 (ETag) without its bytes',
    params: ReleaseParams,
    query: ArchitectureQuery,
    responses: bytes,
    handler: async (ctx, { params, query, auth }) => sendArtifact(ctx, screenOf(auth), params.releaseId, 'apk', query.architecture),
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/player/update-deployments/{deploymentId}/status',
    auth: 'device',
    tags: PLAYER,
    summary: 'Report the update’s progress: downloading, downloaded, installing, installed (with the version), failed (with a reason)',
    description:
      '`installed` with the release’s version confirms the install (so does a heartbeat whose playerVersion is it); another version fails it (`version_mismatch`). A screen already installed or failed gets its state unchanged.',
    params: z.object({ deploymentId: Uuid }),
    body: StatusBody,
    responses: {
      200: { description: 'The screen’s state after the report', data: z.object({ state: z.string() }) },
      400: { description: 'validation_failed' },
      409: { description: 'deployment_finished: cancelled or completed; conflict: not offered yet', codes: ['deployment_finished', 'conflict'] },
    },
    handler: async (ctx, { params, body, auth }) => ok(await reportStatus(ctx.deps, screenOf(auth), params.deploymentId, body)),
  }),
];

import { z } from 'zod';
import type { SessionPrincipal } from '../../platform/http/auth.js';
import { created, defineRoute } from '../../platform/http/route.js';
import { listReleases } from './releases.service.js';
import { ListQuery, ReleaseDto, ReleaseSourceDto, TAGS } from './releases.schemas.js';
import { uploadRelease } from './upload.service.js';

const ListReleasesEnvelope = z.object({ data: z.array(ReleaseDto), releaseSource: ReleaseSourceDto.nullable() }).meta({ id: 'PlayerReleaseList' });

/** The catalogue and uploads (spec 4.12; docs/player-releases.md). */
export const releaseRoutes = [
  defineRoute({
    method: 'GET',
    path: '/api/v1/player-releases',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Player releases (family ascending, newest version first) and the release source’s state',
    query: ListQuery,
    responses: {
      200: {
        description: 'The releases in `data`, and beside it `releaseSource` (null when no release source is connected or connecting)',
        content: { 'application/json': { schema: ListReleasesEnvelope } },
      },
    },
    handler: async (ctx, { query }) => {
      const { releases, releaseSource } = await listReleases(ctx.deps.db, query);
      ctx.status = 200;
      ctx.body = { data: releases, releaseSource };
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/player-releases/upload',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Upload a player release artifact (multipart: family, version, channel, notes, architecture, file)',
    description:
      '`multipart/form-data` with the fields `family` (desktop-linux, android, web, edge), `version` (semver), `channel` (stable, beta; default stable), ' +
      '`notes` (default empty), `architecture` (any, x86_64, aarch64; default any, required for desktop-linux and edge, any for web) and the file in `file`. ' +
      'Streamed to disk with its sha256. android: a zip holding AndroidManifest.xml; desktop-linux and edge: a gzip tarball or a Debian package; ' +
      'web: a gzip tarball with index.html, play.html and version.json (`{"version"}` this one) at its root. ' +
      'Adds the artifact to the release of that family and version, or makes the release.',
    rawBody: { contentTypes: ['multipart/form-data'] },
    responses: {
      201: { description: 'The release with the new artifact', data: ReleaseDto },
      400: {
        description:
          'validation_failed: a field is missing or invalid (family, semver version, architecture), no file in `file`, an empty file or a malformed body; invalid_artifact: the bytes are not what the family takes',
        codes: ['validation_failed', 'invalid_artifact'],
      },
      409: { description: 'artifact_exists: the release already has an artifact for that architecture', codes: ['artifact_exists'] },
      413: { description: 'payload_too_large: over the upload limit (settings uploads.maxSizeBytes, capped by PLACARD_UPLOAD_MAX_BYTES); nothing was kept' },
      507: { description: 'insufficient_storage: the disk filled up; nothing was kept' },
    },
    handler: async (ctx, { auth }) => created(await uploadRelease(ctx, (auth as SessionPrincipal).userId)),
  }),
];

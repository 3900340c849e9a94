import { z } from 'zod';
import { type Reply, defineRoute, noContent, ok, uuidParam } from '../../platform/http/route.js';
import { cacheRelease } from './cache.service.js';
import { checkReleases } from './check.service.js';
import { CheckDto, DeviceBody, ReleaseDto, ReleaseSourceDto, TAGS } from './releases.schemas.js';
import { disconnect, pollDeviceGrant, startDeviceGrant } from './source.service.js';

/** The release source (RFC 8628), check and cache (spec 4.12; docs/player-releases.md). */
export const sourceRoutes = [
  defineRoute({
    method: 'POST',
    path: '/api/v1/player-releases/release-source/device',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Connect the release source: start an OAuth 2.0 device authorization (RFC 8628) and show its user code',
    description:
      'Discovers the source’s endpoints (RFC 8414 `/.well-known/oauth-authorization-server`) and asks for a device code as the client `placard-server`. ' +
      'Answers `pending` with the `userCode` to enter at `verificationUri`; then poll. A source that cannot be reached answers `failed` with the reason in `error`. ' +
      'Replaces any earlier connection.',
    body: DeviceBody,
    responses: {
      200: { description: 'The release source’s state (pending, or failed with why)', data: ReleaseSourceDto },
      409: { description: 'release_source_not_configured: no URL given and PLACARD_RELEASE_SOURCE_URL is not set', codes: ['release_source_not_configured'] },
    },
    handler: async (ctx, { body }) => ok(await startDeviceGrant(ctx.deps, ctx.secrets, body?.url)),
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/player-releases/release-source/device/poll',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Follow the device authorization: asks the token endpoint when its interval has passed',
    description:
      'Asks the source’s token endpoint at most once per `intervalSec` (a `slow_down` answer adds 5 s, RFC 8628 3.5); an earlier poll answers the state without asking. ' +
      'Settles as `connected` (the token sealed at rest), `denied` (access_denied) or `expired` (expired_token, or the code’s lifetime passed); a settled state is answered without asking again.',
    responses: {
      200: { description: 'The release source’s state', data: ReleaseSourceDto },
      409: { description: 'no_device_grant: no device authorization was started (or the source was disconnected)', codes: ['no_device_grant'] },
    },
    handler: async (ctx) => ok(await pollDeviceGrant(ctx.deps, ctx.secrets)),
  }),
  defineRoute({
    method: 'DELETE',
    path: '/api/v1/player-releases/release-source',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Disconnect the release source: forgets the grant, the token and the URL',
    description: 'Releases already recorded, and the artifacts already cached, stay.',
    responses: {
      204: { description: 'Forgotten' },
      404: { description: 'not_found: no release source is connected or connecting' },
    },
    handler: async (ctx) => {
      await disconnect(ctx.deps);
      return noContent();
    },
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/player-releases/check',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Ask the release source for releases newer than what the screens run',
    description:
      'Asks the source for each family and architecture the screens run (a screen with no family that reported a version is the web family), records the releases it did not know ' +
      '(source `release-source`, artifacts `remote`), and answers those newer (semver; stable channel) than the oldest version a screen of that family and architecture runs.',
    responses: {
      200: { description: 'What the source offers and what is newer', data: CheckDto },
      409: {
        description:
          'release_source_not_connected: connect the release source first; or it refused the token (connect again) or could not be reached (the message says which)',
        codes: ['release_source_not_connected'],
      },
    },
    handler: async (ctx) => ok(await checkReleases(ctx.deps, ctx.secrets)),
  }),
  defineRoute({
    method: 'POST',
    path: '/api/v1/player-releases/{id}/cache',
    auth: 'session',
    minRole: 'admin',
    tags: TAGS,
    summary: 'Download a release’s artifacts into the data directory, so players fetch them on the LAN',
    description:
      'Starts the downloads in the background and answers 202 (artifacts `downloading`; `cachedBytes` grows in GET). A download is resumed with Range after an interruption and ' +
      'verified against its sha256 and, when PLACARD_RELEASE_SIGNING_KEY pins a key, its Ed25519 signature over the SHA-256 digest; a failed check leaves the artifact `failed` ' +
      'with the reason in `error` and deletes its bytes. Call again to retry a failed artifact. An already cached release answers 200.',
    params: z.object({ id: uuidParam }),
    responses: {
      200: { description: 'Already cached: every artifact is here', data: ReleaseDto },
      202: { description: 'Downloading', data: ReleaseDto },
      404: { description: 'not_found: no such release' },
    },
    handler: async (ctx, { params }): Promise<Reply> => {
      const { release, alreadyCached } = await cacheRelease(ctx.deps, ctx.secrets, params.id);
      return alreadyCached ? ok(release) : { kind: 'json', status: 202, data: release };
    },
  }),
];

import { promisify } from 'node:util';
import type { Context } from 'koa';
import { gzip, gzipSync } from 'node:zlib';
import { z } from 'zod';
import type { DevicePrincipal } from '../../platform/http/auth.js';
import { notFound } from '../../platform/http/errors.js';
import { defineRoute } from '../../platform/http/route.js';
import { etagMatches } from '../../platform/http/send-file.js';
import type { DeviceContextRow } from '../screens/index.js';
import { contextOfRow, type ScreenContext, screenContext } from './screen-context.js';
import { currentManifest } from './manifest.js';
import { keptBytes } from './manifest.cache.js';

const gzipAsync = promisify(gzip);
/**
 * A manifest up to this size is compressed on the event loop (tens of microseconds: a trip to
 * the thread pool costs more, and the fleet bench showed a 1 MiB output buffer per small
 * manifest slowing a 5,000-screen refetch burst down twofold); a bigger one off it, with an
 * output buffer of its own size so the compression is one trip to the thread pool.
 */
const GZIP_ON_LOOP_BYTES = 64 * 1024;

const Window = z.object({ startsAt: z.string(), endsAt: z.string() });
const Item = z.object({
  id: z.string(),
  playlistId: z.string().describe('the playlist holding the item (the nested one for nested playlists)'),
  kind: z.string().describe('image, video, audio, pdf, website, widget'),
  assetId: z.string().nullable(),
  variantId: z.string().nullable().describe('the media[] entry to play'),
  posterVariantId: z.string().nullable(),
  pageVariantIds: z.array(z.string()).describe('PDF: one image per page, in order'),
  url: z.string().nullable().describe('website items: the page to show'),
  name: z.string(),
  durationMs: z.number().describe('effective: its own, a video’s length, or the default'),
  transition: z.object({ type: z.string(), durationMs: z.number() }),
  validFrom: z.string().nullable(),
  validUntil: z.string().nullable(),
  dayparts: z.array(z.object({ days: z.array(z.number()), from: z.string(), to: z.string() })),
  windows: z.array(Window).nullable().describe('when it may play within the horizon, all rules (nested too) applied; null: always'),
  fit: z.enum(['contain', 'cover', 'fill']),
  muted: z.boolean(),
  widgetId: z.string().nullable().describe('widget items: the widget (null for assets)'),
  bundleId: z.string().nullable().describe('widget items: the `widgets[]` bundle to show (null for assets)'),
});
const Playlist = z.object({ id: z.string(), name: z.string(), items: z.array(Item) });
const Zone = z.object({
  id: z.string(),
  name: z.string(),
  x: z.number(),
  y: z.number(),
  width: z.number(),
  height: z.number(),
  zIndex: z.number(),
  fit: z.string(),
  muted: z.boolean(),
  playlist: Playlist.nullable(),
  data: z
    .object({ sourceId: z.string(), viewKey: z.string().nullable(), outputId: z.string().describe('the `data[]` entry to show') })
    .nullable()
    .describe('a data zone: the output whose rows it shows; null for other zones, or while the source has no data'),
  widget: z
    .object({ widgetId: z.string(), bundleId: z.string().describe('the `widgets[]` entry to show') })
    .nullable()
    .describe('a widget zone: the bundle it shows; null for other zones, or while the widget has no bundle (warned)'),
});
const Layout = z.object({
  id: z.string(),
  name: z.string(),
  revisionId: z.string(),
  revisionNumber: z.number(),
  width: z.number(),
  height: z.number(),
  orientation: z.string(),
  background: z.string(),
  backgroundMedia: z.object({ assetId: z.string(), variantId: z.string() }).nullable(),
  zones: z.array(Zone),
});
export const ManifestDto = z
  .object({
    screenId: z.string(),
    revision: z.number(),
    generatedAt: z.string(),
    validUntil: z.string(),
    refreshAfter: z.string().describe('fetch again by then (the window moves by the hour) even without manifest.changed'),
    timeZone: z.string(),
    timeline: z.array(
      z.object({
        startsAt: z.string(),
        endsAt: z.string(),
        source: z.object({ type: z.string(), id: z.string().nullable() }),
        content: z.object({ type: z.string(), id: z.string() }).nullable(),
        campaign: z
          .object({ id: z.string(), name: z.string() })
          .nullable()
          .describe('the campaign this segment plays (its schedule shows it), else null; the player reports it back as the heartbeat’s currentCampaignId'),
        playlist: Playlist.optional(),
        layout: Layout.optional(),
        message: z
          .object({ text: z.string(), severity: z.enum(['info', 'warning', 'emergency']) })
          .optional()
          .describe('a takeover or override showing a message (content.type "message"): shown full screen, styled by severity'),
        audio: z.enum(['force-on', 'default']).optional().describe('a takeover or override: "force-on" plays its media with sound'),
      }),
    ),
    media: z.array(
      z.object({
        assetId: z.string(),
        variantId: z.string(),
        purpose: z.string(),
        url: z.string(),
        contentType: z.string(),
        sizeBytes: z.number(),
        sha256: z.string(),
        width: z.number().nullable(),
        height: z.number().nullable(),
      }),
    ),
    data: z
      .array(
        z.object({
          outputId: z.string(),
          sourceId: z.string(),
          viewKey: z.string().nullable().describe('null: the whole source'),
          revision: z.number().describe('the data revision it was built from'),
          url: z.string().describe('downloads with the device credential: {sourceId, viewKey, revision, generatedAt, columns, rows}'),
          sha256: z.string(),
          sizeBytes: z.number(),
          images: z
            .array(z.object({ url: z.string(), assetId: z.string(), variantId: z.string() }))
            .describe('image cells whose address is cached media: show media[variantId] instead of fetching the address'),
        }),
      )
      .describe('the data outputs to cache, next to media'),
    widgets: z
      .array(
        z.object({
          widgetId: z.string(),
          bundleId: z.string(),
          revision: z.number().describe('the widget revision the bundle was built from'),
          url: z.string().describe('downloads with the device credential: one self-contained text/html document'),
          sha256: z.string(),
          sizeBytes: z.number(),
          images: z
            .array(z.object({ assetId: z.string(), variantId: z.string() }))
            .describe('put media[variantId] (as a data: URL) where the bundle says `placard-media:<assetId>`'),
        }),
      )
      .describe('the widget bundles to cache, next to media (sorted by widgetId)'),
    overlays: z
      .array(
        z.object({
          instanceId: z.string(),
          pluginId: z.string().describe('countdown-bar, brand-bug or noise-meter'),
          name: z.string(),
          revision: z.number().describe('the instance revision'),
          config: z.unknown().describe('the instance config, defaults filled (its JSON Schema is in GET /api/v1/plugins)'),
          logo: z
            .object({
              assetId: z.string(),
              variantId: z.string(),
              url: z.string(),
              contentType: z.string(),
              sizeBytes: z.number(),
              sha256: z.string(),
              width: z.number().nullable(),
              height: z.number().nullable(),
            })
            .optional()
            .describe('brand-bug: the logo variant to show (also in media[], cached for offline play)'),
        }),
      )
      .describe('plugin overlays drawn above the content, ordered by pluginId, name, instanceId (docs/plugins.md)'),
    warnings: z.array(z.object({ code: z.string(), message: z.string() }).passthrough()),
    update: z
      .object({ deploymentId: z.string(), releaseId: z.string(), version: z.string(), family: z.string() })
      .nullable()
      .describe(
        'an update offered to this screen (docs/update-deployments.md): fetch /api/v1/player/updates/{releaseId}, report to /api/v1/player/update-deployments/{deploymentId}/status; null: none',
      ),
    presentationNetwork: z
      .object({
        id: z.string(),
        name: z.string(),
        epoch: z.string().describe('server-clock ISO time every member counts its playlist cycle from'),
        leaderScreenId: z.string().nullable(),
        position: z.number().int(),
        memberCount: z.number().int(),
      })
      .nullable()
      .describe('the network the screen plays in step with: the timeline is the leader’s; item boundaries are (serverNow - epoch) mod cycle'),
  })
  .meta({ id: 'PlayerManifest' });

export const MANIFEST_PATH = '/api/v1/player/manifest';

/**
 * The screen whose manifest is asked for: the context its authentication read with the
 * credential (content/index.ts declares this path `readsDeviceContextOnly`: one statement for
 * the credential, the screen's state and its context, the whole of a 304's reads but the
 * network's), else read now.
 */
function screenAsking(ctx: Context, auth: DevicePrincipal): ScreenContext | Promise<ScreenContext | undefined> {
  const row = ctx.state.deviceContext;
  return row && row.id === auth.screenId ? contextOfRow(ctx.deps.db, row as DeviceContextRow & { id: string }) : screenContext(ctx.deps.db, auth.screenId);
}

export const manifestRoutes = [
  defineRoute({
    method: 'GET',
    path: MANIFEST_PATH,
    auth: 'device',
    tags: ['Player'],
    summary: 'Everything the screen plays in the next 48 hours, and the media to cache',
    description:
      'The resolved timeline in the screen’s time zone (layouts, zones, playlists flattened to playable items with durations), every media variant, data output and widget bundle to cache (URL of the player variant route, size, sha256, content type) and warnings for content left out. Send If-None-Match with the ETag: 304 while nothing changed. `manifest.changed` on the socket says when to fetch again.',
    responses: {
      200: { description: 'The manifest', data: ManifestDto, headers: { ETag: { description: 'changes when the manifest does' } } },
      304: { description: 'Not modified: the If-None-Match ETag is current' },
    },
    handler: async (ctx, { auth }) => {
      const asking = screenAsking(ctx, auth as DevicePrincipal);
      const screen = asking instanceof Promise ? await asking : asking;
      if (!screen) throw notFound('Screen');
      const m = await currentManifest(ctx.deps, screen);
      // A screen told `manifest.changed` has fetched: the next one waiting is told.
      ctx.deps.realtime?.fetched(screen.id, screen.manifestRevision);
      ctx.set('ETag', m.etag);
      ctx.set('Cache-Control', 'private, no-cache');
      if (etagMatches(ctx.get('if-none-match'), m.etag)) {
        ctx.status = 304;
        return;
      }
      ctx.type = 'application/json';
      ctx.vary('Accept-Encoding');
      // Built once per revision and hour, so it is compressed once too (~4-10x smaller); a big
      // one off the event loop (GZIP_ON_LOOP_BYTES): after a change every screen's first fetch
      // compresses its new manifest. Requests that arrive while it runs share it; a failure is not kept.
      if (ctx.acceptsEncodings('gzip', 'identity') === 'gzip') {
        const pending = (m.gzip ??= (
          m.bytes.length <= GZIP_ON_LOOP_BYTES
            ? Promise.resolve(keptBytes(gzipSync(m.bytes)))
            : gzipAsync(m.bytes, { chunkSize: m.bytes.length }).then((gz) => keptBytes(gz))
        ).catch((err: unknown) => {
          if (m.gzip === pending) m.gzip = undefined;
          throw err;
        }));
        const gzipped = await pending;
        ctx.set('Content-Encoding', 'gzip');
        ctx.body = gzipped;
        return;
      }
      ctx.body = m.bytes;
    },
  }),
];

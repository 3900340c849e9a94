import { z } from 'zod';
import type { SessionPrincipal } from '../../platform/http/auth.js';
import { created, defineRoute, ok, uuidParam } from '../../platform/http/route.js';
import { changeWebsite, createWebsiteAsset, diagnoseWebsite } from './assets.service.js';
import { checkFolderRef } from './organize.repo.js';
import { assetView, mustGetAsset } from './media.repo.js';
import { Asset, type WebsiteSettings } from './media.schemas.js';
import { normaliseWebsiteUrl } from './website-thumbnail.js';

const TAGS = ['Assets'];
const idParams = z.object({ id: uuidParam });

/** A web address; typed without a scheme (`example.com/menu`) it becomes https://. */
const WebsiteUrl = z
  .string()
  .max(2048)
  .transform(normaliseWebsiteUrl)
  .pipe(z.url({ protocol: /^https?$/, error: 'a web address (http:// or https://; example.com/menu is read as https://example.com/menu)' }).max(2048))
  .describe('http(s) URL; without a scheme https:// is added');

const WebsiteInput = z.object({
  url: WebsiteUrl,
  refreshIntervalSec: z
    .number()
    .int()
    .min(10)
    .max(7 * 86_400)
    .nullable()
    .optional(),
  zoom: z.number().min(0.25).max(5).optional(),
  viewport: z
    .object({ width: z.number().int().min(100).max(7680), height: z.number().int().min(100).max(7680) })
    .nullable()
    .optional(),
  injectionEnabled: z.boolean().optional(),
  css: z.string().max(100_000).nullable().optional(),
  js: z.string().max(100_000).nullable().optional(),
});

const Diagnostics = z
  .object({
    url: z.string(),
    finalUrl: z.string().nullable(),
    reachable: z.boolean(),
    status: z.number().int().nullable(),
    elapsedMs: z.number().int(),
    redirects: z.array(z.object({ url: z.string(), status: z.number().int(), location: z.string().optional() })),
    tls: z.object({ protocol: z.string().nullable(), authorized: z.boolean(), error: z.string().nullable() }).nullable(),
    frameable: z.boolean().nullable(),
    frameBlockers: z.array(z.string()),
    headers: z.object({ xFrameOptions: z.string().nullable(), contentSecurityPolicy: z.string().nullable(), contentType: z.string().nullable() }),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
  })
  .meta({ id: 'WebsiteDiagnostics' });

/** Websites as assets: shown in a frame by players. */
export const websiteRoutes = [
  defineRoute({
    method: 'POST',
    path: '/api/v1/assets/websites',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Add a website as an asset (shown in a frame by players)',
    description:
      'An address without a scheme gets https:// (`example.com/menu`). Its thumbnail (the page’s preview picture, else a card with its icon and title, fetched through the outbound guard) is made in the background; the asset is ready at once.',
    body: WebsiteInput.extend({
      name: z.string().trim().min(1).max(200).optional(),
      folderId: uuidParam.optional(),
      tags: z.array(z.string().trim().min(1).max(64)).max(50).optional(),
    }),
    responses: { 201: { description: 'The website asset', data: Asset } },
    handler: async (ctx, { body, auth }) => {
      await checkFolderRef(ctx.deps.db, body.folderId);
      const website: WebsiteSettings = {
        url: body.url,
        refreshIntervalSec: body.refreshIntervalSec ?? null,
        zoom: body.zoom ?? 1,
        viewport: body.viewport ?? null,
        injectionEnabled: body.injectionEnabled ?? false,
        css: body.css ?? null,
        js: body.js ?? null,
      };
      const id = await createWebsiteAsset(ctx.media, {
        website,
        name: body.name ?? new URL(body.url).host,
        folderId: body.folderId ?? null,
        tags: body.tags ?? [],
        createdBy: (auth as SessionPrincipal).userId,
      });
      return created((await assetView(ctx.deps.db, id))!);
    },
  }),
  defineRoute({
    method: 'PATCH',
    path: '/api/v1/assets/{id}/website',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Change a website asset: URL, refresh interval, zoom, viewport, CSS/JS injection',
    params: idParams,
    body: WebsiteInput.partial(),
    responses: { 409: { description: 'conflict: the asset is not a website' }, 200: { description: 'The website asset', data: Asset } },
    handler: async (ctx, { params, body }) => {
      const asset = await mustGetAsset(ctx.deps.db, params.id);
      await changeWebsite(ctx.media, asset, body);
      return ok((await assetView(ctx.deps.db, asset.id))!);
    },
  }),
  defineRoute({
    method: 'GET',
    path: '/api/v1/assets/{id}/website/diagnostics',
    auth: 'session',
    minRole: 'editor',
    tags: TAGS,
    summary: 'Fetch the website now: reachability, status, TLS, redirects, and headers that stop it showing in a frame',
    params: idParams,
    responses: { 409: { description: 'conflict: the asset is not a website' }, 200: { description: 'What the server saw', data: Diagnostics } },
    handler: async (ctx, { params }) => ok(await diagnoseWebsite(ctx.media, await mustGetAsset(ctx.deps.db, params.id))),
  }),
];

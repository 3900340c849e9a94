import { z } from 'zod';
import type { AssetVariantsTable } from '../../platform/db/schema.js';

/** The asset's shapes in the API (the OpenAPI components Asset, AssetVariant, WebsiteSettings). */

export const ASSET_KINDS = ['image', 'video', 'audio', 'pdf', 'website', 'widget'] as const;
export const ASSET_STATES = ['uploading', 'processing', 'ready', 'failed', 'archived'] as const;

export const Variant = z
  .object({
    id: z.string(),
    purpose: z.enum(['player', 'thumbnail', 'poster', 'preview']),
    contentType: z.string(),
    width: z.number().int().nullable(),
    height: z.number().int().nullable(),
    page: z.number().int().nullable(),
    sizeBytes: z.number().int(),
    sha256: z.string(),
  })
  .meta({ id: 'AssetVariant' });

export const WebsiteSettings = z
  .object({
    url: z.string(),
    refreshIntervalSec: z.number().int().nullable(),
    zoom: z.number(),
    viewport: z.object({ width: z.number().int(), height: z.number().int() }).nullable(),
    injectionEnabled: z.boolean(),
    css: z.string().nullable(),
    js: z.string().nullable(),
  })
  .meta({ id: 'WebsiteSettings' });
export type WebsiteSettings = z.infer<typeof WebsiteSettings>;

export const Asset = z
  .object({
    id: z.string(),
    kind: z.enum(ASSET_KINDS),
    state: z.enum(ASSET_STATES),
    name: z.string(),
    sha256: z.string().nullable(),
    sizeBytes: z.number().int().nullable(),
    contentType: z.string().nullable(),
    originalFilename: z.string().nullable(),
    width: z.number().int().nullable(),
    height: z.number().int().nullable(),
    durationMs: z.number().int().nullable(),
    pageCount: z.number().int().nullable(),
    folderId: z.string().nullable(),
    tags: z.array(z.string()),
    collectionIds: z.array(z.string()),
    failureReason: z.string().nullable(),
    progress: z.number().nullable(),
    metadata: z.record(z.string(), z.unknown()),
    website: WebsiteSettings.nullable(),
    createdAt: z.string(),
    updatedAt: z.string(),
    archivedAt: z.string().nullable(),
    variants: z.array(Variant),
  })
  .meta({ id: 'Asset' });
export type AssetView = z.infer<typeof Asset>;

export function toVariant(v: AssetVariantsTable): z.infer<typeof Variant> {
  return {
    id: v.id,
    purpose: v.purpose,
    contentType: v.content_type,
    width: v.width,
    height: v.height,
    page: v.page,
    sizeBytes: v.size_bytes,
    sha256: v.sha256,
  };
}

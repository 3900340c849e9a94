import { v7 as uuidv7 } from 'uuid';
import { z } from 'zod';
import type { Db } from '../../platform/db/database.js';
import type { LayoutRevisionsTable, LayoutsTable } from '../../platform/db/schema.js';
import { PUBLICATION_SOURCES, type PublicationSource } from '../../platform/publications.js';
import { ApiError, invalidReference, notFound, type Reference } from '../../platform/http/errors.js';
import { afterCursor } from '../../platform/http/pagination.js';
import { now, parseJson } from './common.js';
import { assetInfos } from './refs.repo.js';
import { uuidParam } from '../../platform/http/route.js';
import { existingSourceIds, type View, viewProblems, viewSchema } from '../data-sources/index.js';
import { existingWidgetIds } from '../widgets/index.js';

export const MAX_ZONES = 32;
const Color = z
  .string()
  .regex(/^#[0-9a-fA-F]{6}$/, 'a colour #rrggbb')
  .transform((s) => s.toLowerCase());

export const ZoneContentSchema = z
  .discriminatedUnion('type', [
    z.object({ type: z.literal('playlist'), playlistId: uuidParam }),
    z.object({ type: z.literal('asset'), assetId: uuidParam, durationMs: z.number().int().min(500).max(86_400_000).nullable().default(null) }),
    z.object({ type: z.literal('widget'), widgetId: uuidParam }).describe('A widget (its current bundle, sized to the zone)'),
    z
      .object({
        type: z.literal('data'),
        sourceId: uuidParam,
        view: viewSchema.nullable().default(null).describe('Which rows and fields; null: the whole source'),
      })
      .describe('The rows of a data source (or of a view of it): the player shows them as a table, and downloads them for offline'),
  ])
  .meta({ id: 'ZoneContent' });

export const ZoneSchema = z
  .object({
    id: z
      .string()
      .regex(/^[A-Za-z0-9_-]{1,64}$/)
      .optional()
      .describe('stable zone id; made by the server when absent'),
    name: z.string().trim().max(100).default(''),
    x: z.number().int().min(0).max(16384),
    y: z.number().int().min(0).max(16384),
    width: z.number().int().min(1).max(16384),
    height: z.number().int().min(1).max(16384),
    zIndex: z.number().int().min(0).max(1000).default(0),
    fit: z.enum(['contain', 'cover', 'fill']).default('contain'),
    muted: z.boolean().default(true),
    content: ZoneContentSchema.nullable().default(null),
  })
  .meta({ id: 'Zone' });

export const LayoutContentSchema = z
  .object({
    width: z.number().int().min(16).max(16384).default(1920),
    height: z.number().int().min(16).max(16384).default(1080),
    orientation: z.enum(['landscape', 'portrait']).optional().describe('default: from width and height'),
    background: z.object({ color: Color.default('#000000'), assetId: uuidParam.nullable().default(null) }).default({ color: '#000000', assetId: null }),
    zones: z.array(ZoneSchema).max(MAX_ZONES).default([]),
  })
  .meta({ id: 'LayoutContentInput' });
export type LayoutContentInput = z.output<typeof LayoutContentSchema>;

export interface Zone {
  id: string;
  name: string;
  x: number;
  y: number;
  width: number;
  height: number;
  zIndex: number;
  fit: 'contain' | 'cover' | 'fill';
  muted: boolean;
  content:
    | { type: 'playlist'; playlistId: string }
    | { type: 'asset'; assetId: string; durationMs: number | null }
    | { type: 'widget'; widgetId: string }
    | { type: 'data'; sourceId: string; view: View | null }
    | null;
}
export interface LayoutContent {
  width: number;
  height: number;
  orientation: 'landscape' | 'portrait';
  background: { color: string; assetId: string | null };
  zones: Zone[];
}

const ZoneDto = z.object({
  id: z.string(),
  name: z.string(),
  x: z.number(),
  y: z.number(),
  width: z.number(),
  height: z.number(),
  zIndex: z.number(),
  fit: z.enum(['contain', 'cover', 'fill']),
  muted: z.boolean(),
  content: z
    .union([
      z.object({ type: z.literal('playlist'), playlistId: z.string() }),
      z.object({ type: z.literal('asset'), assetId: z.string(), durationMs: z.number().nullable() }),
      z.object({ type: z.literal('widget'), widgetId: z.string() }),
      z.object({ type: z.literal('data'), sourceId: z.string(), view: viewSchema.nullable() }),
    ])
    .nullable(),
});
export const LayoutContentDto = z
  .object({
    width: z.number(),
    height: z.number(),
    orientation: z.enum(['landscape', 'portrait']),
    background: z.object({ color: z.string(), assetId: z.string().nullable() }),
    zones: z.array(ZoneDto),
  })
  .meta({ id: 'LayoutContent' });

export const LayoutSummaryDto = z
  .object({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    revision: z.number().describe('edit revision of the layout and its draft (If-Match)'),
    width: z.number(),
    height: z.number(),
    orientation: z.enum(['landscape', 'portrait']),
    zoneCount: z.number(),
    publishedRevisionId: z.string().nullable(),
    publishedRevisionNumber: z.number().nullable(),
    publishedAt: z.string().nullable(),
    hasUnpublishedChanges: z.boolean(),
    hasCustomPreview: z.boolean(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'LayoutSummary' });
export const LayoutDto = LayoutSummaryDto.extend({ draft: LayoutContentDto, published: LayoutContentDto.nullable() }).meta({ id: 'Layout' });
export type LayoutDto = z.infer<typeof LayoutDto>;

export const LayoutRevisionDto = z
  .object({
    id: z.string(),
    layoutId: z.string(),
    number: z.number(),
    note: z.string(),
    createdBy: z.string().nullable(),
    createdAt: z.string(),
    current: z.boolean(),
    source: z.enum(PUBLICATION_SOURCES).describe('Why it was published: an edit, an approved submission, a rollback, a campaign release'),
    content: LayoutContentDto,
  })
  .meta({ id: 'LayoutRevision' });

export type LayoutRow = LayoutsTable;
export type RevisionRow = LayoutRevisionsTable;

/** Fills defaults, zone ids, orientation; checks zones sit on the canvas and ids are unique. */
export function normalizeContent(input: LayoutContentInput): LayoutContent {
  const zones: Zone[] = input.zones.map((z) => ({ ...z, id: z.id ?? uuidv7() }));
  const ids = new Set<string>();
  const issues: { location: string; path: (string | number)[]; message: string; code: string }[] = [];
  zones.forEach((z, i) => {
    if (ids.has(z.id)) issues.push({ location: 'body', path: ['zones', i, 'id'], message: 'zone ids must be unique', code: 'duplicate' });
    ids.add(z.id);
    if (z.x + z.width > input.width || z.y + z.height > input.height)
      issues.push({
        location: 'body',
        path: ['zones', i],
        message: `zone "${z.name || z.id}" reaches outside the ${input.width}x${input.height} canvas`,
        code: 'out_of_canvas',
      });
  });
  if (issues.length) throw new ApiError('validation_failed', `Invalid layout: ${issues[0]!.message}`, { details: { issues } });
  return {
    width: input.width,
    height: input.height,
    orientation: input.orientation ?? (input.height > input.width ? 'portrait' : 'landscape'),
    background: input.background,
    zones,
  };
}

/** What a layout's content points at. */
export function contentRefs(content: LayoutContent): { playlistIds: string[]; assetIds: string[]; widgetIds: string[]; sourceIds: string[] } {
  const playlistIds: string[] = [];
  const assetIds: string[] = [];
  const widgetIds: string[] = [];
  const sourceIds: string[] = [];
  if (content.background.assetId) assetIds.push(content.background.assetId);
  for (const z of content.zones) {
    if (z.content?.type === 'playlist') playlistIds.push(z.content.playlistId);
    if (z.content?.type === 'asset') assetIds.push(z.content.assetId);
    if (z.content?.type === 'widget') widgetIds.push(z.content.widgetId);
    if (z.content?.type === 'data') sourceIds.push(z.content.sourceId);
  }
  return { playlistIds: [...new Set(playlistIds)], assetIds: [...new Set(assetIds)], widgetIds: [...new Set(widgetIds)], sourceIds: [...new Set(sourceIds)] };
}

/** The references that do not exist (or are archived), as readable strings. */
export async function missingRefs(db: Db, content: LayoutContent): Promise<string[]> {
  const refs = contentRefs(content);
  const missing: string[] = [];
  if (refs.playlistIds.length) {
    const found = new Set((await db.selectFrom('playlists').select('id').where('id', 'in', refs.playlistIds).execute()).map((r) => r.id));
    for (const id of refs.playlistIds) if (!found.has(id)) missing.push(`playlist ${id}`);
  }
  const assets = await assetInfos(db, refs.assetIds);
  for (const id of refs.assetIds) {
    const a = assets.get(id);
    if (!a) missing.push(`asset ${id}`);
    else if (a.state === 'archived') missing.push(`asset "${a.name}" (archived)`);
  }
  const sources = await existingSourceIds(db, refs.sourceIds);
  for (const id of refs.sourceIds) if (!sources.has(id)) missing.push(`data source ${id}`);
  const widgets = await existingWidgetIds(db, refs.widgetIds);
  for (const id of refs.widgetIds) if (!widgets.has(id)) missing.push(`widget ${id}`);
  return missing;
}

/**
 * 400 when the content names something that does not exist (or is archived), an issue per
 * field (`background.assetId`, `zones.2.content.playlistId`, `zones.1.content.widgetId`).
 */
export async function assertRefs(db: Db, content: LayoutContent): Promise<void> {
  const missing = await missingRefs(db, content);
  if (missing.length) {
    const refs = contentRefs(content);
    const knownPlaylists = new Set(
      refs.playlistIds.length ? (await db.selectFrom('playlists').select('id').where('id', 'in', refs.playlistIds).execute()).map((r) => r.id) : [],
    );
    const usableAssets = new Set([...(await assetInfos(db, refs.assetIds))].filter(([, a]) => a.state !== 'archived').map(([id]) => id));
    const sources = await existingSourceIds(db, refs.sourceIds);
    const widgets = await existingWidgetIds(db, refs.widgetIds);
    const issues: Reference[] = [];
    if (content.background.assetId && !usableAssets.has(content.background.assetId))
      issues.push({ path: ['background', 'assetId'], message: 'no such asset, or archived' });
    for (const [i, z] of content.zones.entries()) {
      if (z.content?.type === 'playlist' && !knownPlaylists.has(z.content.playlistId))
        issues.push({ path: ['zones', i, 'content', 'playlistId'], message: 'no such playlist' });
      if (z.content?.type === 'asset' && !usableAssets.has(z.content.assetId))
        issues.push({ path: ['zones', i, 'content', 'assetId'], message: 'no such asset, or archived' });
      if (z.content?.type === 'data' && !sources.has(z.content.sourceId))
        issues.push({ path: ['zones', i, 'content', 'sourceId'], message: 'no such data source' });
      if (z.content?.type === 'widget' && !widgets.has(z.content.widgetId))
        issues.push({ path: ['zones', i, 'content', 'widgetId'], message: 'no such widget' });
    }
    throw invalidReference(`The layout refers to what does not exist: ${missing.join(', ')}`, issues, { missing });
  }
  // A view that does not fit its source's columns (an unknown field, a wrong operator) is refused where it is.
  const viewIssues: Reference[] = [];
  for (const [i, z] of content.zones.entries()) {
    if (z.content?.type !== 'data' || !z.content.view) continue;
    for (const message of await viewProblems(db, z.content.sourceId, z.content.view)) viewIssues.push({ path: ['zones', i, 'content', 'view'], message });
  }
  if (viewIssues.length)
    throw new ApiError('validation_failed', `A zone's view does not fit its data source: ${viewIssues[0]!.message}`, {
      details: { issues: viewIssues.map((r) => ({ location: 'body', path: r.path, message: r.message, code: 'invalid' })) },
    });
}

export async function getLayoutRow(db: Db, id: string): Promise<LayoutRow> {
  const row = await db.selectFrom('layouts').selectAll().where('id', '=', id).executeTakeFirst();
  if (!row) throw notFound('Layout');
  return row;
}

const EMPTY: LayoutContent = { width: 1920, height: 1080, orientation: 'landscape', background: { color: '#000000', assetId: null }, zones: [] };
export const contentOf = (text: string): LayoutContent => parseJson<LayoutContent>(text, EMPTY);

/** A layout with its published revision's number and content (undefined: no such layout, or never published). */
export function publishedLayout(db: Db, layoutId: string) {
  return db
    .selectFrom('layouts')
    .innerJoin('layout_revisions as r', 'r.id', 'layouts.published_revision_id')
    .select(['layouts.id', 'layouts.name', 'r.id as revisionId', 'r.number', 'r.content'])
    .where('layouts.id', '=', layoutId)
    .executeTakeFirst();
}

/** Of the given layouts, those that have a published revision. */
export async function publishedLayoutIds(db: Db, layoutIds: readonly string[]): Promise<Set<string>> {
  const published = new Set<string>();
  if (layoutIds.length === 0) return published;
  for (const l of await db
    .selectFrom('layouts')
    .select(['id', 'published_revision_id'])
    .where('id', 'in', [...layoutIds])
    .execute())
    if (l.published_revision_id) published.add(l.id);
  return published;
}

export async function publishedRevision(db: Db, row: Pick<LayoutRow, 'published_revision_id'>): Promise<RevisionRow | undefined> {
  if (!row.published_revision_id) return undefined;
  return db.selectFrom('layout_revisions').selectAll().where('id', '=', row.published_revision_id).executeTakeFirst();
}

export function toLayoutSummary(row: LayoutRow, published: RevisionRow | undefined) {
  const draft = contentOf(row.draft);
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    revision: row.revision,
    width: draft.width,
    height: draft.height,
    orientation: draft.orientation,
    zoneCount: draft.zones.length,
    publishedRevisionId: published?.id ?? null,
    publishedRevisionNumber: published?.number ?? null,
    publishedAt: row.published_at,
    hasUnpublishedChanges: !published || published.content !== row.draft,
    hasCustomPreview: row.preview_sha256 !== null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export async function layoutDto(db: Db, id: string): Promise<LayoutDto> {
  const row = await getLayoutRow(db, id);
  const published = await publishedRevision(db, row);
  return { ...toLayoutSummary(row, published), draft: contentOf(row.draft), published: published ? contentOf(published.content) : null };
}

export function toRevisionDto(r: RevisionRow, currentId: string | null) {
  return {
    id: r.id,
    layoutId: r.layout_id,
    number: r.number,
    note: r.note,
    createdBy: r.created_by,
    createdAt: r.created_at,
    current: r.id === currentId,
    source: r.source as PublicationSource,
    content: contentOf(r.content),
  };
}

export interface LayoutListQuery {
  cursor?: string | undefined;
  limit: number;
  /** Part of the name, any case. */
  q?: string | undefined;
}

/**
 * One page of layouts by name, each with its published revision (limit + 1 rows: the extra
 * one says there is a next page).
 */
export async function listLayoutRows(db: Db, query: LayoutListQuery): Promise<(LayoutRow & { published: RevisionRow | undefined })[]> {
  let q = db
    .selectFrom('layouts')
    .leftJoin('layout_revisions as r', 'r.id', 'layouts.published_revision_id')
    .selectAll('layouts')
    .select([
      'r.id as r_id',
      'r.number as r_number',
      'r.content as r_content',
      'r.layout_id as r_layout_id',
      'r.note as r_note',
      'r.created_by as r_created_by',
      'r.created_at as r_created_at',
      'r.source as r_source',
    ])
    .where(afterCursor('layouts.name', 'layouts.id', 'asc', query.cursor));
  const text = query.q;
  if (text) q = q.where((eb) => eb(eb.fn('instr', [eb.fn('lower', ['layouts.name']), eb.val(text.toLowerCase())]), '>', 0));
  const rows = await q
    .orderBy('layouts.name')
    .orderBy('layouts.id')
    .limit(query.limit + 1)
    .execute();
  return rows.map(({ r_id, r_number, r_content, r_layout_id, r_note, r_created_by, r_created_at, r_source, ...row }) => ({
    ...row,
    published: r_id
      ? {
          id: r_id,
          number: r_number!,
          content: r_content!,
          layout_id: r_layout_id!,
          note: r_note!,
          created_by: r_created_by,
          created_at: r_created_at!,
          source: r_source!,
        }
      : undefined,
  }));
}

export async function insertLayout(db: Db, row: LayoutRow): Promise<void> {
  await db.insertInto('layouts').values(row).execute();
}

/**
 * Sets `fields` and the next edit revision, only while `row.revision` is still current
 * (412 otherwise). Call inside the change's transaction.
 */
export async function bumpLayout(trx: Db, row: LayoutRow, fields: Partial<Omit<LayoutRow, 'id' | 'revision'>>): Promise<void> {
  const done = await trx
    .updateTable('layouts')
    .set({ ...fields, revision: row.revision + 1, updated_at: fields.updated_at ?? now() })
    .where('id', '=', row.id)
    .where('revision', '=', row.revision)
    .executeTakeFirst();
  if (Number(done.numUpdatedRows) !== 1) {
    const current = await trx.selectFrom('layouts').select('revision').where('id', '=', row.id).executeTakeFirst();
    if (!current) throw notFound('Layout');
    throw new ApiError('version_conflict', `This was changed meanwhile: revision ${current.revision} is current. Reload and apply your change again.`, {
      details: { currentRevision: current.revision },
    });
  }
}

/** Deletes a layout (its revisions cascade) while `revision` is current. */
export async function deleteLayoutRow(db: Db, id: string, revision: number): Promise<void> {
  await db.deleteFrom('layouts').where('id', '=', id).where('revision', '=', revision).execute();
}

/** The number the next published revision of a layout takes. */
export async function nextRevisionNumber(db: Db, layoutId: string): Promise<number> {
  const last = await db
    .selectFrom('layout_revisions')
    .select((eb) => eb.fn.max<number>('number').as('n'))
    .where('layout_id', '=', layoutId)
    .executeTakeFirst();
  return Number(last?.n ?? 0) + 1;
}

export async function insertRevision(db: Db, row: RevisionRow): Promise<void> {
  await db.insertInto('layout_revisions').values(row).execute();
}

/** One page of a layout's published revisions, newest first (limit + 1 rows). */
export async function listRevisionRows(db: Db, layoutId: string, cursor: string | undefined, limit: number): Promise<RevisionRow[]> {
  return db
    .selectFrom('layout_revisions')
    .selectAll()
    .where('layout_id', '=', layoutId)
    .where(afterCursor('number', 'id', 'desc', cursor))
    .orderBy('number', 'desc')
    .orderBy('id', 'desc')
    .limit(limit + 1)
    .execute();
}

export async function getRevisionRow(db: Db, layoutId: string, revisionId: string): Promise<RevisionRow | undefined> {
  return db.selectFrom('layout_revisions').selectAll().where('id', '=', revisionId).where('layout_id', '=', layoutId).executeTakeFirst();
}

/** Records an uploaded preview image (its file is written by the caller first). */
export async function setPreview(
  db: Db,
  id: string,
  preview: Pick<LayoutRow, 'preview_sha256' | 'preview_content_type' | 'preview_updated_at'>,
): Promise<void> {
  await db.updateTable('layouts').set(preview).where('id', '=', id).execute();
}

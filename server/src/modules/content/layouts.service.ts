/**
 * Changes of layouts: the draft, publishing it as an immutable revision, restoring one, and
 * the preview image (rendered from the zones' thumbnails, or uploaded). Each change runs in
 * one transaction that first reads the layout and checks If-Match against it.
 */
import { createHash } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { AppDeps } from '../../platform/app-deps.js';
import type { Db } from '../../platform/db/database.js';
import { newId } from '../../platform/db/ids.js';
import { storableJson } from '../../platform/db/json.js';
import { ApiError, notFound } from '../../platform/http/errors.js';
import { composeLayoutPreview, normalizePreviewImage, type PreviewZone } from '../../platform/media/compose.js';
import { schedulesShowing } from '../schedules/index.js';
import { contentChanged } from './changes.js';
import { inUse, now, type RevisionCheck } from './common.js';
import {
  assertRefs,
  bumpLayout,
  contentOf,
  deleteLayoutRow,
  getLayoutRow,
  getRevisionRow,
  insertLayout,
  missingRefs,
  normalizeContent,
  publishedRevision,
  setPreview,
  type LayoutContent,
  type LayoutContentInput,
  type LayoutRow,
} from './layouts.repo.js';
import { layoutPublishable } from './layouts.publishable.js';
import { thumbnailFor } from './thumbnails.js';
import { approvalsRequired } from '../system/index.js';
import { forgetContent, publisherNeededToDelete, submitInstead } from '../../platform/publications.js';
import { roleAtLeast, type Role } from '../../platform/http/auth.js';

/**
 * Runs a change of layout `id` in one transaction that reads the layout and checks
 * If-Match first, so nothing can change it between the check and the write.
 */
function change<T>(db: Db, id: string, check: RevisionCheck, fn: (trx: Db, row: LayoutRow) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (trx) => {
    const row = await getLayoutRow(trx, id);
    check(row.revision);
    return fn(trx, row);
  });
}

const layoutChanged = (deps: AppDeps, id: string) => contentChanged(deps, [{ kind: 'layout', id }]);

/** A new layout row: unpublished, no preview. */
function newLayoutRow(id: string, fields: Pick<LayoutRow, 'name' | 'description' | 'draft'>, createdBy: string): LayoutRow {
  const t = now();
  return {
    id,
    ...fields,
    revision: 1,
    published_revision_id: null,
    published_at: null,
    preview_sha256: null,
    preview_content_type: null,
    preview_updated_at: null,
    created_by: createdBy,
    created_at: t,
    updated_at: t,
  };
}

/** Creates a layout with its first draft; answers its id. */
export async function createLayout(db: Db, input: LayoutContentInput & { name: string; description?: string | undefined }, createdBy: string): Promise<string> {
  const { name, description, ...rest } = input;
  const content = normalizeContent(rest);
  await assertRefs(db, content);
  const id = newId();
  await insertLayout(db, newLayoutRow(id, { name, description: description ?? '', draft: storableJson(content, 'The layout') }, createdBy));
  return id;
}

/** Renames or describes a layout; a new name reaches the manifests that name it. */
export async function describeLayout(deps: AppDeps, id: string, patch: { name?: string | undefined; description?: string | undefined }, check: RevisionCheck) {
  const row = await change(deps.db, id, check, async (trx, row) => {
    await bumpLayout(trx, row, { name: patch.name ?? row.name, description: patch.description ?? row.description });
    return row;
  });
  if (patch.name !== undefined && patch.name !== row.name) await layoutChanged(deps, id); // the manifest names it
}

/** Deletes a layout nothing schedules (409 naming the schedules otherwise), with its revisions and preview. */
export async function deleteLayout(deps: AppDeps, id: string, check: RevisionCheck, role: Role) {
  await change(deps.db, id, check, async (trx, row) => {
    // While approvals are on, only a publisher may take away what screens play.
    if (row.published_revision_id && !roleAtLeast(role, 'publisher') && (await approvalsRequired(trx))) throw publisherNeededToDelete(`Layout "${row.name}"`);
    const schedules = await schedulesShowing(trx, 'layout', id);
    if (schedules.length)
      throw inUse(
        `Layout "${row.name}"`,
        schedules.map((s) => ({ type: 'schedule' as const, id: s.id, name: s.name })),
      );
    await deleteLayoutRow(trx, id, row.revision);
    await forgetContent(deps, trx, 'layout', id, row.name);
  });
  rmSync(previewFile(deps, id), { force: true });
  await layoutChanged(deps, id);
}

/** Replaces the draft (screens keep the published revision). */
export async function replaceDraft(db: Db, id: string, input: LayoutContentInput, check: RevisionCheck) {
  const content = normalizeContent(input);
  await change(db, id, check, async (trx, row) => {
    await assertRefs(trx, content);
    await bumpLayout(trx, row, { draft: storableJson(content, 'The layout') });
  });
}

/** Publishes the draft as a new revision; screens showing the layout get it. */
export async function publishLayout(deps: AppDeps, id: string, note: string | undefined, publishedBy: string, check: RevisionCheck) {
  // The draft published is the one read in this transaction, after the If-Match check.
  await change(deps.db, id, check, async (trx, row) => {
    // With approvals required the way to screens is a submission a publisher approves (issue 20).
    if (await approvalsRequired(trx)) throw submitInstead('layout', id);
    await assertRefs(trx, contentOf(row.draft));
    await layoutPublishable.publish(trx, id, contentOf(row.draft), publishedBy, note ?? '', 'edit');
  });
  await layoutPublishable.announce(deps, id);
}

/** Copies a layout's draft into a new, unpublished layout; answers its id. */
export async function duplicateLayout(db: Db, id: string, name: string | undefined, createdBy: string): Promise<string> {
  const row = await getLayoutRow(db, id);
  const copy = newId();
  await insertLayout(db, newLayoutRow(copy, { name: name ?? `${row.name} (copy)`.slice(0, 200), description: row.description, draft: row.draft }, createdBy));
  return copy;
}

/** Brings a published revision back as the draft (409 when it refers to what no longer exists). */
export async function restoreRevision(db: Db, id: string, revisionId: string, check: RevisionCheck) {
  await change(db, id, check, async (trx, row) => {
    const rev = await getRevisionRow(trx, id, revisionId);
    if (!rev) throw notFound('Revision');
    const missing = await missingRefs(trx, contentOf(rev.content));
    if (missing.length)
      throw new ApiError('conflict', `Revision ${rev.number} refers to what no longer exists: ${missing.join(', ')}`, { details: { missing } });
    await bumpLayout(trx, row, { draft: rev.content });
  });
}

const previewFile = (deps: AppDeps, id: string) => path.join(deps.config.dataDir, 'layout-previews', `${id}.png`);

/** Written to a temp file, fsynced, renamed: a crash leaves the old file or the new one. */
function writeDurably(file: string, data: Buffer): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.${Date.now()}.tmp`;
  const fd = openSync(tmp, 'w');
  try {
    writeSync(fd, data);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
}

async function renderPreview(deps: AppDeps, content: LayoutContent): Promise<Buffer> {
  const zones: PreviewZone[] = [];
  for (const z of content.zones) {
    zones.push({
      x: z.x,
      y: z.y,
      width: z.width,
      height: z.height,
      zIndex: z.zIndex,
      name: z.name || (z.content ? z.content.type : 'empty zone'),
      fit: z.fit,
      image: await thumbnailFor(deps, z.content),
    });
  }
  const backgroundImage = content.background.assetId
    ? await thumbnailFor(deps, { type: 'asset', assetId: content.background.assetId, durationMs: null })
    : null;
  return composeLayoutPreview({ width: content.width, height: content.height, background: content.background.color, backgroundImage, zones });
}

/**
 * A layout's preview PNG: `auto` the uploaded one if there is one, else a rendering of the
 * published revision, else of the draft; `draft` / `published` render that; `uploaded`
 * only the uploaded one (404 without).
 */
export async function previewImage(deps: AppDeps, id: string, source: 'auto' | 'draft' | 'published' | 'uploaded'): Promise<Buffer> {
  const row = await getLayoutRow(deps.db, id);
  if ((source === 'auto' || source === 'uploaded') && row.preview_sha256 && existsSync(previewFile(deps, row.id))) {
    return readFileSync(previewFile(deps, row.id));
  }
  if (source === 'uploaded') throw notFound('Uploaded preview');
  const published = source === 'draft' ? undefined : await publishedRevision(deps.db, row);
  if (source === 'published' && !published) throw notFound('Published revision');
  return renderPreview(deps, contentOf(published ? published.content : row.draft));
}

/** Checks an uploaded image, stores it as PNG and records it; answers the layout row as it is now. */
export async function storeUploadedPreview(deps: AppDeps, row: LayoutRow, bytes: Buffer): Promise<LayoutRow> {
  if (bytes.length === 0) throw new ApiError('validation_failed', 'The body is empty: send the image');
  let normalized;
  try {
    normalized = await normalizePreviewImage(bytes);
  } catch {
    throw new ApiError('validation_failed', 'The body is not an image this server can read');
  }
  writeDurably(previewFile(deps, row.id), normalized.data);
  await setPreview(deps.db, row.id, {
    preview_sha256: createHash('sha256').update(normalized.data).digest('hex'),
    preview_content_type: normalized.contentType,
    preview_updated_at: now(),
  });
  return getLayoutRow(deps.db, row.id);
}
